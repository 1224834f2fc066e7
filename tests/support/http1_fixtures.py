"""The seat client's HTTP/1.1 tests (tests/test_http1*.py): each test runs on asyncio's own loop and on
uvloop (what `benchwarmers serve` runs; their transports, flow control and TLS are different code), and
asks the fake provider through `Http1Origin` or through `UpstreamPool.chat`."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine, Iterator, Sequence
from typing import Any

import pytest
import uvloop

from benchwarmers.upstream.client import ChatBody, EndpointRef, UpstreamPool
from benchwarmers.upstream.failures import UpstreamFailure
from benchwarmers.upstream.http1 import Http1Origin, HttpReply
from tests.fakes.upstream import FakeUpstream

Run = Callable[[Coroutine[Any, Any, Any]], Any]
LOOPS: dict[str, Callable[[], asyncio.AbstractEventLoop]] = {
    "asyncio": asyncio.new_event_loop,
    "uvloop": uvloop.new_event_loop,
}
HELLO = ChatBody.from_request({"model": "bench/x", "messages": [{"role": "user", "content": "hello there"}]})


@pytest.fixture(params=sorted(LOOPS))
def run(request: pytest.FixtureRequest) -> Iterator[Run]:
    """Run a test's scenario on one of the two loops, bounded so a failing test fails rather than hangs."""

    async def bounded(scenario: Coroutine[Any, Any, Any]) -> Any:
        async with asyncio.timeout(10):
            return await scenario

    with asyncio.Runner(loop_factory=LOOPS[request.param]) as runner:
        yield lambda scenario: runner.run(bounded(scenario))


def endpoint(fake: FakeUpstream) -> EndpointRef:
    return EndpointRef(name="fake", base_url=fake.base_url, api_key=None)


async def answers(fake: FakeUpstream, *models: str) -> list[str]:
    """Each model asked in turn through one pool (so one keep-alive origin)."""
    pool = UpstreamPool()
    try:
        return [(await pool.chat(endpoint(fake), HELLO.parts_for(model), 5)).answer for model in models]
    finally:
        await pool.aclose()


async def failure(fake: FakeUpstream, model: str, *, before: Sequence[str] = ()) -> UpstreamFailure:
    """The failure of asking `model` (after the `before` models answered on the same pool)."""
    pool = UpstreamPool()
    try:
        for earlier in before:
            await pool.chat(endpoint(fake), HELLO.parts_for(earlier), 5)
        with pytest.raises(UpstreamFailure) as caught:
            await pool.chat(endpoint(fake), HELLO.parts_for(model), 5)
        return caught.value
    finally:
        await pool.aclose()


async def posts(fake: FakeUpstream, *models: str, limit: int = 1 << 20) -> list[HttpReply]:
    """Each model asked in turn on one `Http1Origin`, the replies as it gives them."""
    origin = Http1Origin(fake.base_url, "tests")
    try:
        head_bytes = origin.head("/chat/completions", None)
        return [
            await origin.post(head_bytes, HELLO.parts_for(model), limit=limit, connect_timeout=5) for model in models
        ]
    finally:
        origin.close()
