"""`POST /v1/messages` and `/v1/messages/count_tokens`: Anthropic's Messages API over the same panel
as chat completions.

The request is translated into the panel's chat request (bench/panels/messages.py) and goes through
`serve_panel` like any chat completion: the same refusals, seating, recording, verdicts, replays and
access rules (a gateway key in `x-api-key` as well as `Authorization: Bearer`). Only the reply is
written differently: a Message, or Anthropic's event stream (`ping` events while the seats run, then
`message_start` … `message_stop`). Errors on these routes take Anthropic's shape (server/errors.py).
`anthropic-version` and `anthropic-beta` are accepted and not read: the reply is the same for each.
"""

from __future__ import annotations

from typing import Any

import orjson
from fastapi import Request
from starlette.responses import Response

from benchwarmers.bench.panels.messages import chat_request, message_events, message_object, prompt_tokens
from benchwarmers.bench.panels.prepare import request_hash
from benchwarmers.bench.panels.reply import ChatCompletion
from benchwarmers.server.body import parse_json_object, read_body
from benchwarmers.server.deps import BenchDep, GatewayCaller, gateway_router
from benchwarmers.server.panel_http import Wire, serve_panel
from benchwarmers.server.responses import json_response
from benchwarmers.server.schemas import error_responses

router = gateway_router()

PING = b'event: ping\ndata: {"type":"ping"}\n\n'
_HEADERS = [
    {
        "name": "anthropic-version",
        "in": "header",
        "required": False,
        "schema": {"type": "string"},
        "description": "Accepted and not read (Anthropic's SDKs send 2023-06-01).",
    },
    {
        "name": "x-api-key",
        "in": "header",
        "required": False,
        "schema": {"type": "string"},
        "description": "A gateway key, as Anthropic's clients send one (instead of Authorization: Bearer).",
    },
]


def _document(model: str) -> dict[str, Any]:
    content = {"application/json": {"schema": {"$ref": f"#/components/schemas/{model}"}}}
    return {"requestBody": {"required": True, "content": content}, "parameters": _HEADERS}


def _frames(reply: ChatCompletion, _include_usage: bool) -> list[bytes]:
    return [
        b"event: " + event["type"].encode() + b"\ndata: " + orjson.dumps(event) + b"\n\n"
        for event in message_events(reply)
    ]


MESSAGES_WIRE = Wire(body=message_object, frames=_frames, ping=PING)


@router.post("/v1/messages", openapi_extra=_document("MessagesRequest"), responses=error_responses(404, 422))
async def create_message(request: Request, caller: GatewayCaller, bench: BenchDep) -> Response:
    raw = await read_body(request)
    body, body_hash = parse_json_object(raw), request_hash(raw)
    del raw
    chat = chat_request(body)
    del body
    return await serve_panel(request, caller, bench, chat, body_hash, MESSAGES_WIRE)


@router.post(
    "/v1/messages/count_tokens",
    openapi_extra=_document("CountTokensRequest"),
    responses={200: {"description": "The estimate."}, **error_responses(404)},
)
async def count_tokens(request: Request, caller: GatewayCaller, bench: BenchDep) -> Response:
    """The bench's estimate of a conversation's tokens: no model is called, and nothing is recorded."""
    chat = chat_request(parse_json_object(await read_body(request)))
    snapshot = await bench.snapshot()
    return json_response({"input_tokens": prompt_tokens(snapshot, chat, bench.ratios, caller.collections)})
