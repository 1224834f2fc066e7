"""`/v1`: the OpenAI-compatible face of the bench — collections as models, panels as completions."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from fastapi import APIRouter, Request
from starlette.responses import Response, StreamingResponse

from benchwarmers.bench.admin.collection_rules import explorer_seats
from benchwarmers.bench.panels.prepare import request_hash
from benchwarmers.bench.snapshot import Snapshot
from benchwarmers.server.auth import caller_for
from benchwarmers.server.body import parse_json_object, read_body
from benchwarmers.server.responses import json_response
from benchwarmers.server.sse import PING, stream_chunks

router = APIRouter()


def together(collection: dict[str, Any], snapshot: Snapshot) -> dict[str, Any]:
    members = [snapshot.models.get(alias) for alias in collection["members"]]
    windows = [m.window for m in members if m is not None and m.window]
    capabilities = ["text"]
    if members and all(m is not None and m.vision for m in members):
        capabilities.append("vision")
    return {"context_window": min(windows) if windows else None, "capabilities": capabilities}


def model_entries(collection: dict[str, Any], snapshot: Snapshot) -> list[dict[str, Any]]:
    """A collection as a model, then again in its other reply mode (for clients that only pick names)."""
    base = {
        "object": "model",
        "created": int(collection.get("created_at") or 0),
        "owned_by": "benchwarmers",
        "description": collection["description"],
        "tags": collection["tags"],
        "members": collection["members"],
        "shape": collection["shape"],
        "explorers": explorer_seats(collection, snapshot.gateway),
        "together": together(collection, snapshot),
    }
    own = collection["reply"]
    other = "merged" if own == "all" else "all"
    name = f"bench/{collection['name']}"
    return [{"id": name, **base, "reply": own}, {"id": f"{name}:{other}", **base, "reply": other}]


@router.get("/v1/models")
async def list_models(request: Request) -> Response:
    bench = request.app.state.bench
    caller = await caller_for(request)
    snapshot = await bench.state.snapshot()
    data = []
    for name, collection in snapshot.collections.items():
        if caller.collections is None or name in caller.collections:
            data.extend(model_entries(collection, snapshot))
    return json_response({"object": "list", "data": data})


async def _watch_disconnect(request: Request, event: asyncio.Event) -> None:
    while True:
        message = await request.receive()
        if message["type"] == "http.disconnect":
            event.set()
            return


@router.post("/v1/chat/completions")
async def chat_completions(request: Request) -> Response:
    bench = request.app.state.bench
    gateway = bench.panels
    caller = await caller_for(request)  # before reading: a refused caller gets no 20 MB read
    raw = await read_body(request)
    body, body_hash = parse_json_object(raw), request_hash(raw)
    del raw  # an image request's body is megabytes: keep one copy (the seats' shared one), not three
    idempotency_key = request.headers.get("idempotency-key") or None
    retry = request.headers.get("x-stainless-retry-count", "0")
    if idempotency_key or (retry.isdecimal() and int(retry) > 0):
        recorded = await gateway.replay(caller, body_hash, idempotency_key)
        if recorded is not None:
            return _answer(recorded, bool(body.get("stream")), _include_usage(body))
    panel = await gateway.prepare(body, body_hash, caller, gateway.new_panel_id())
    del body
    headers = {"x-request-id": panel.panel_id}
    disconnected = asyncio.Event()
    if panel.stream:
        return StreamingResponse(
            _stream(bench, panel, idempotency_key, disconnected),
            media_type="text/event-stream",
            headers={**headers, "cache-control": "no-store", "x-accel-buffering": "no"},
        )
    watcher = asyncio.ensure_future(_watch_disconnect(request, disconnected))
    try:
        reply = await gateway.run(panel, idempotency_key, disconnected)
    finally:
        watcher.cancel()
    return json_response(reply, headers=headers)


def _include_usage(body: dict[str, Any]) -> bool:
    options = body.get("stream_options")
    return isinstance(options, dict) and bool(options.get("include_usage"))


def _answer(reply: dict[str, Any], stream: bool, include_usage: bool) -> Response:
    headers = {"x-request-id": reply["bench"]["panel"]}
    if not stream:
        return json_response(reply, headers=headers)

    async def replayed() -> AsyncIterator[bytes]:
        for chunk in stream_chunks(reply, include_usage):
            yield chunk

    return StreamingResponse(replayed(), media_type="text/event-stream", headers=headers)


async def _stream(
    bench: Any, panel: Any, idempotency_key: str | None, disconnected: asyncio.Event
) -> AsyncIterator[bytes]:
    """Pings while the seats run, then the whole reply as one chunk. A client that leaves cancels
    the seats still running; the panel is still recorded (the task outlives this generator)."""
    interval = float((await bench.state.snapshot()).gateway["ping_interval"])
    task = asyncio.ensure_future(bench.panels.run(panel, idempotency_key, disconnected))
    try:
        yield PING
        while not task.done():
            done, _ = await asyncio.wait({task}, timeout=interval)
            if not done:
                yield PING
        for chunk in stream_chunks(task.result(), panel.include_usage):
            yield chunk
    finally:
        if not task.done():
            disconnected.set()
            bench.panels.keep_until_done(task)
