"""Which client calls a seat: the built-in one over HTTP (chat completions, or by the endpoint's kind
the Responses API or Anthropic's Messages API), or the `llm` library for `llm` endpoints.

`BENCH_CLIENT=llm` turns the llm client on: endpoints of kind `llm` may then be added, listed and
seated, their models reached through llm's plugins. Every other endpoint is called by the built-in
client whatever BENCH_CLIENT says, and so is every image request (a model reached through llm is
never seated on one: see `ModelView.vision`). With `builtin`, nothing imports llm.
"""

from __future__ import annotations

from collections.abc import Sequence

from benchwarmers.bench.snapshot import EndpointView
from benchwarmers.catalog.facts import ListedModel
from benchwarmers.errors import Unavailable
from benchwarmers.upstream.anthropic_client import AnthropicClient
from benchwarmers.upstream.chat_wire import ChatResult, EndpointRef
from benchwarmers.upstream.client import UpstreamPool
from benchwarmers.upstream.failures import FailureKind, UpstreamFailure
from benchwarmers.upstream.kinds import Wire, endpoint_kind
from benchwarmers.upstream.llm_client import LLM_MISSING, LlmClient, llm_installed
from benchwarmers.upstream.responses_client import ResponsesClient
from benchwarmers.upstream.seat_client import SeatClient

LLM_OFF = (
    "models of an llm endpoint are reached through the llm library, which this bench runs only with BENCH_CLIENT=llm"
)


class SeatClients:
    def __init__(self, pool: UpstreamPool, client: str) -> None:
        self.pool = pool
        self.llm: LlmClient | None = LlmClient() if client == "llm" else None
        # The seat client of each wire format (upstream/kinds.py): a kind's endpoints are called by its wire's.
        self.wires: dict[Wire, SeatClient] = {
            Wire.chat: pool,
            Wire.responses: ResponsesClient(pool),
            Wire.messages: AnthropicClient(pool),
            Wire.llm: self.llm if self.llm is not None else _LlmOff(),
        }

    def check(self) -> None:
        """Refuse to start with BENCH_CLIENT=llm when the llm library is not installed."""
        if self.llm is not None and not llm_installed():
            raise Unavailable(LLM_MISSING, code="llm_missing")

    def _llm(self) -> LlmClient:
        if self.llm is None:
            raise UpstreamFailure(FailureKind.bad_request, LLM_OFF)
        return self.llm

    # The timeout is enforced by each client (covering the wait for a slot).
    async def chat(
        self,
        endpoint: EndpointView,
        body: bytes | Sequence[bytes],
        timeout: float,  # noqa: ASYNC109
        cap: int | None = None,
        concurrency: int | None = None,
        output_cap: int | None = None,
    ) -> ChatResult:
        """One call; `cap` bounds the answer in bytes (the built-in client also stops reading there);
        `concurrency` is the model's own bound on calls at once, which the llm client keeps;
        `output_cap` the model's known output limit in tokens (Anthropic's max_tokens by default)."""
        client = self.wires[endpoint_kind(endpoint.kind).wire]
        return await client.seat(endpoint.ref, body, timeout, cap, concurrency, output_cap)

    async def llm_listing(self) -> list[ListedModel]:
        """What an `llm` endpoint lists: the models llm's plugins reach now."""
        return await self._llm().listing()

    def secrets(self) -> tuple[str, ...]:
        """Provider keys held outside the bench's endpoints: those llm keeps for its plugins."""
        return self.llm.secrets() if self.llm is not None else ()

    def configure(self, per_endpoint: int) -> None:
        self.pool.configure(per_endpoint)
        if self.llm is not None:
            self.llm.configure(per_endpoint)

    async def aclose(self) -> None:
        await self.pool.aclose()
        if self.llm is not None:
            await self.llm.aclose()


class _LlmOff:
    """The llm wire when BENCH_CLIENT is not llm: every call refused, as an `llm` endpoint's models
    are reached only through the llm library."""

    async def seat(
        self,
        endpoint: EndpointRef,
        body: bytes | Sequence[bytes],
        timeout: float,  # noqa: ASYNC109
        cap: int | None = None,
        concurrency: int | None = None,
        output_cap: int | None = None,
    ) -> ChatResult:
        raise UpstreamFailure(FailureKind.bad_request, LLM_OFF)
