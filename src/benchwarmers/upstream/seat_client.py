"""The seam a seat is called through: one `SeatClient` per wire format (upstream/kinds.py's `Wire`).

The built-in pool speaks chat completions (upstream/client.py), the Responses client the Responses
API (upstream/responses_client.py), the Anthropic client the Messages API (upstream/anthropic_client.py)
and the llm client the `llm` library's plugins (upstream/llm_client.py). Each takes the panel's chat
request and gives back a chat result, every failure an `UpstreamFailure`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from benchwarmers.upstream.chat_wire import ChatResult, EndpointRef, Reply


class SeatClient(Protocol):
    # The timeout is enforced by each client (covering the wait for a slot).
    async def seat(
        self,
        endpoint: EndpointRef,
        body: bytes | Sequence[bytes],
        timeout: float,  # noqa: ASYNC109
        cap: int | None = None,
        concurrency: int | None = None,
        output_cap: int | None = None,
    ) -> ChatResult:
        """One seat's call: `cap` bounds the answer in bytes; `concurrency` is the model's own bound on
        calls at once (which the llm client keeps); `output_cap` the model's known output limit in
        tokens (Anthropic's max_tokens by default)."""
        ...


class SeatPost(Protocol):
    """What the wire-format clients send a seat's request through: the pool (upstream/client.py)."""

    async def post_seat(
        self,
        endpoint: EndpointRef,
        path: str,
        body: bytes | Sequence[bytes],
        timeout: float,  # noqa: ASYNC109
        cap: int | None = None,
    ) -> Reply:
        """One seat's POST to `path` under the endpoint's base; a status other than 2xx is raised."""
        ...
