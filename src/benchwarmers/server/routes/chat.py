"""`POST /v1/chat/completions`: the OpenAI-compatible face of the bench, panels as completions."""

from __future__ import annotations

from typing import Any

from fastapi import Request
from starlette.responses import Response

from benchwarmers.server.body import read_panel_request
from benchwarmers.server.deps import BenchDep, GatewayCaller, gateway_router
from benchwarmers.server.panel_http import Wire, serve_panel
from benchwarmers.server.schemas import error_responses
from benchwarmers.server.sse import stream_chunks

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
