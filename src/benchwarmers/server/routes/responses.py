"""`POST /v1/responses`: the Responses API over the same panel as chat completions.

The request is translated into the panel's chat request (bench/panels/responses.py) and goes
through `serve_panel` like any chat completion: the same refusals, seating, recording, verdicts,
replays and access rules. Only the way the reply is written differs: a Response object, or the
Responses event stream (`event:` lines, `response.created` … `response.completed`) after pings.
"""

from __future__ import annotations

from typing import Any

import orjson
from fastapi import Request
from starlette.responses import Response

from benchwarmers.bench.panels.reply import ChatCompletion
from benchwarmers.bench.panels.responses import chat_request, echoed, response_events, response_object
from benchwarmers.server.body import read_panel_request
from benchwarmers.server.deps import BenchDep, GatewayCaller, gateway_router
from benchwarmers.server.panel_http import Wire, serve_panel
from benchwarmers.server.schemas import error_responses

router = gateway_router()

RESPONSES_DOCUMENT: dict[str, Any] = {
    "requestBody": {
        "required": True,
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ResponsesRequest"}}},
    },
}


def _wire(echo: dict[str, Any]) -> Wire:
    def frames(reply: ChatCompletion, _include_usage: bool) -> list[bytes]:
        return [
            b"event: " + event["type"].encode() + b"\ndata: " + orjson.dumps(event) + b"\n\n"
            for event in response_events(reply, echo)
        ]

    return Wire(body=lambda reply: response_object(reply, echo), frames=frames)


@router.post("/v1/responses", openapi_extra=RESPONSES_DOCUMENT, responses=error_responses(404, 422))
async def create_response(request: Request, caller: GatewayCaller, bench: BenchDep) -> Response:
    body, body_hash = await read_panel_request(request)
    panel = serve_panel(request, caller, bench, chat_request(body), body_hash, _wire(echoed(body)))
    del body  # as on the chat route: the panel holds the request until it is prepared
    return await panel
