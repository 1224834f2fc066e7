"""One panel over HTTP, for every wire API (chat completions, Responses, Messages): a replay, or prepare,
run and reply, streamed with pings or as one JSON body. Each route translates its request into a chat
request and passes the `Wire` that writes its reply."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

from fastapi import Request
from starlette.responses import Response, StreamingResponse

from benchwarmers.bench.caller import Caller
from benchwarmers.bench.panels.parse import PanelRequest
from benchwarmers.bench.panels.reply import ChatCompletion
from benchwarmers.bench.panels.run import ClientGone
from benchwarmers.bench.services import Bench
from benchwarmers.header_numbers import header_int
from benchwarmers.server import body_memory
from benchwarmers.server.auth import access
from benchwarmers.server.responses import json_response
from benchwarmers.server.sse import PING


async def _watch_disconnect(request: Request, event: ClientGone) -> None:
    while True:
        message = await request.receive()
        if message["type"] == "http.disconnect":
            event.set()
            return


@dataclass(frozen=True)
class Wire:
    """How a panel's reply (a chat completion, as recorded) goes out: as JSON, and as SSE frames."""

    body: Callable[[ChatCompletion], Any]
    frames: Callable[[ChatCompletion, bool], list[bytes]]  # (reply, include_usage)
    ping: bytes = PING  # what keeps a quiet stream open while the seats run


async def serve_panel(
    request: Request, caller: Caller, bench: Bench, body: dict[str, Any], body_hash: str, wire: Wire
) -> Response:
    """One panel for a chat request (the Responses and Messages routes translate into one first): a replay, or
    prepare, run and reply, streamed with pings or as one JSON body."""
    gateway = bench.panels
    chat = PanelRequest(body)  # what the replay and every step of the panel read of the body, read once
    del body
    idempotency_key = request.headers.get("idempotency-key") or None
    retried = header_int(request.headers.get("x-stainless-retry-count"))  # unreadable or huge: no retry
    # A client that names its request, or an SDK that counts its attempts (0 on the first), may retry.
    replayable = idempotency_key is not None or retried is not None
    if idempotency_key or (retried or 0) > 0:
        recorded = await gateway.replay(caller, body_hash, idempotency_key)
        if recorded is not None:
            return _answer(recorded, chat.stream, chat.include_usage, wire)
    limits = access(request).limits
    admit = functools.partial(limits.hit_key, caller.name, caller.rpm) if caller.rpm is not None else None
    panel = await gateway.prepare(chat, body_hash, caller, gateway.new_panel_id(), admit=admit)
    del chat
    headers = {"x-request-id": panel.panel_id}
    disconnected = await gateway.client_gone(panel, replayable)
    if panel.stream:
        return StreamingResponse(
            _stream(request, bench, panel, idempotency_key, disconnected, wire),
            media_type="text/event-stream",
            headers={**headers, "cache-control": "no-store", "x-accel-buffering": "no"},
        )
    watcher = asyncio.ensure_future(_watch_disconnect(request, disconnected))
    try:
        reply = await gateway.run(panel, idempotency_key, disconnected)
    finally:
        watcher.cancel()
    return json_response(wire.body(reply), headers=headers)


def _answer(reply: ChatCompletion, stream: bool, include_usage: bool, wire: Wire) -> Response:
    headers = {"x-request-id": reply["bench"]["panel"]}
    if not stream:
        return json_response(wire.body(reply), headers=headers)

    async def replayed() -> AsyncIterator[bytes]:
        for chunk in wire.frames(reply, include_usage):
            yield chunk

    return StreamingResponse(replayed(), media_type="text/event-stream", headers=headers)


async def _stream(
    request: Request, bench: Bench, panel: Any, idempotency_key: str | None, disconnected: ClientGone, wire: Wire
) -> AsyncIterator[bytes]:
    """Pings while the seats run, then the whole reply. A client that leaves cancels the seats
    still running; the panel is still recorded (the task outlives this generator, and holds the
    request's body memory until it is done)."""
    interval = (await bench.snapshot()).gateway.ping_interval
    task = asyncio.ensure_future(bench.panels.run(panel, idempotency_key, disconnected))
    try:
        yield wire.ping
        while not task.done():
            done, _ = await asyncio.wait({task}, timeout=interval)
            if not done:
                yield wire.ping
        for chunk in wire.frames(task.result(), panel.include_usage):
            yield chunk
    finally:
        if not task.done():
            disconnected.set()
            bench.panels.keep_until_done(task)
            body_memory.keep_until(request.scope, task)
