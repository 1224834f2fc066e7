"""`/v1`: the OpenAI-compatible face of the bench — collections as models, panels as completions."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from fastapi import Request
from starlette.responses import Response, StreamingResponse

from benchwarmers.bench.admin.collection_rules import REPLIES as REPLY_MODES
from benchwarmers.bench.admin.collection_rules import explorer_seats
from benchwarmers.bench.caller import Caller
from benchwarmers.bench.panels.reply import ChatCompletion
from benchwarmers.bench.panels.run import ClientGone
from benchwarmers.bench.records import Collection
from benchwarmers.bench.services import Bench
from benchwarmers.bench.snapshot import Snapshot
from benchwarmers.errors import NotFound
from benchwarmers.header_numbers import header_int
from benchwarmers.server import body_memory
from benchwarmers.server.auth import access
from benchwarmers.server.body import read_panel_request
from benchwarmers.server.deps import BenchDep, GatewayCaller, gateway_router
from benchwarmers.server.responses import json_response
from benchwarmers.server.schemas import error_responses
from benchwarmers.server.sse import PING, stream_chunks

router = gateway_router()

# The chat route reads its body itself, after the caller is known (a refused caller gets no 20 MB
# read), so FastAPI does not see it: its document comes from here.
CHAT_DOCUMENT: dict[str, Any] = {
    "requestBody": {
        "required": True,
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ChatCompletionRequest"}}},
    },
    "parameters": [
        {
            "name": "Idempotency-Key",
            "in": "header",
            "required": False,
            "schema": {"type": "string"},
            "description": "A replay with the same key within the replay window gets the recorded panel back.",
        },
        {
            "name": "x-stainless-retry-count",
            "in": "header",
            "required": False,
            "schema": {"type": "integer", "minimum": 0},
            "description": "Above 0 (an SDK's retry): the same body from the same caller gets the recorded panel.",
        },
    ],
}


def together(collection: Collection, snapshot: Snapshot) -> dict[str, Any]:
    members = [snapshot.models.get(alias) for alias in collection["members"]]
    windows = [m.window for m in members if m is not None and m.window]
    capabilities = ["text"]
    if members and all(m is not None and m.vision for m in members):
        capabilities.append("vision")
    return {"context_window": min(windows) if windows else None, "capabilities": capabilities}


def model_entries(collection: Collection, snapshot: Snapshot) -> list[dict[str, Any]]:
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
    name = f"bench/{collection['name']}"
    others = [{"id": f"{name}:{mode}", **base, "reply": mode} for mode in REPLY_MODES if mode != own]
    return [{"id": name, **base, "reply": own}, *others]


def _listed(caller: Any, snapshot: Snapshot) -> list[dict[str, Any]]:
    data = []
    for name, collection in snapshot.collections.items():
        if caller.collections is None or name in caller.collections:
            data.extend(model_entries(collection, snapshot))
    return data


def _anthropic_entry(entry: dict[str, Any]) -> dict[str, Any]:
    """An entry with the fields of Anthropic's model object too (its SDKs send `anthropic-version`)."""
    created = datetime.fromtimestamp(entry["created"], UTC).isoformat().replace("+00:00", "Z")
    return {**entry, "type": "model", "display_name": entry["id"], "created_at": created}


@router.get("/v1/models")
async def list_models(request: Request, caller: GatewayCaller, bench: BenchDep) -> Response:
    snapshot = await bench.state.snapshot()
    data = _listed(caller, snapshot)
    if "anthropic-version" not in request.headers:
        return json_response({"object": "list", "data": data})
    # Anthropic's list is a page: one, holding every collection.
    data = [_anthropic_entry(entry) for entry in data]
    first, last = (data[0]["id"], data[-1]["id"]) if data else (None, None)
    return json_response({"object": "list", "data": data, "has_more": False, "first_id": first, "last_id": last})


@router.get("/v1/models/{model_id:path}", responses=error_responses(404))
async def retrieve_model(request: Request, model_id: str, caller: GatewayCaller, bench: BenchDep) -> Response:
    """One entry of `/v1/models` (what `client.models.retrieve(id)` reads); 404 for any other id."""
    snapshot = await bench.state.snapshot()
    found = next((entry for entry in _listed(caller, snapshot) if entry["id"] == model_id), None)
    if found is None:
        raise NotFound(
            f"the model {model_id!r} does not exist or you do not have access to it; GET /v1/models lists "
            "the collections this caller may use (bench/NAME, and bench/NAME:all, :merged, :pick)",
            param="model",
            code="model_not_found",
        )
    return json_response(_anthropic_entry(found) if "anthropic-version" in request.headers else found)


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


CHAT_WIRE = Wire(body=lambda reply: reply, frames=stream_chunks)


@router.post("/v1/chat/completions", openapi_extra=CHAT_DOCUMENT, responses=error_responses(404, 422))
async def chat_completions(request: Request, caller: GatewayCaller, bench: BenchDep) -> Response:
    # The router's guard has run: the body is read only for a caller it let through.
    # An image request's body is megabytes: its bytes are dropped once parsed, and the object once
    # the panel is prepared; then only the seats' shared encoded request is kept, not three copies.
    body, body_hash = await read_panel_request(request)
    panel = serve_panel(request, caller, bench, body, body_hash, CHAT_WIRE)
    del body  # the panel's coroutine holds the one reference now
    return await panel


async def serve_panel(
    request: Request, caller: Caller, bench: Bench, body: dict[str, Any], body_hash: str, wire: Wire
) -> Response:
    """One panel for a chat request (the Responses and Messages routes translate into one first): a replay, or
    prepare, run and reply, streamed with pings or as one JSON body."""
    gateway = bench.panels
    idempotency_key = request.headers.get("idempotency-key") or None
    retried = header_int(request.headers.get("x-stainless-retry-count"))  # unreadable or huge: no retry
    # A client that names its request, or an SDK that counts its attempts (0 on the first), may retry.
    replayable = idempotency_key is not None or retried is not None
    if idempotency_key or (retried or 0) > 0:
        recorded = await gateway.replay(caller, body_hash, idempotency_key)
        if recorded is not None:
            return _answer(recorded, bool(body.get("stream")), _include_usage(body), wire)
    limits = access(request).limits
    admit = functools.partial(limits.hit_key, caller.name, caller.rpm) if caller.rpm is not None else None
    panel = await gateway.prepare(body, body_hash, caller, gateway.new_panel_id(), admit=admit)
    del body
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


def _include_usage(body: dict[str, Any]) -> bool:
    options = body.get("stream_options")
    return isinstance(options, dict) and bool(options.get("include_usage"))


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
    interval = float((await bench.state.snapshot()).gateway["ping_interval"])
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
