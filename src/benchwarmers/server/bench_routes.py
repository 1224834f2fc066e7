"""`/bench`: verdicts and the call log."""

from __future__ import annotations

from fastapi import APIRouter, Request
from starlette.responses import Response

from benchwarmers.errors import InvalidRequest
from benchwarmers.server.auth import caller_for
from benchwarmers.server.body import parse_json_object, read_body
from benchwarmers.server.responses import json_response

router = APIRouter()


@router.post("/bench/verdict")
async def post_verdict(request: Request) -> Response:
    caller = await caller_for(request)
    data = parse_json_object(await read_body(request, cap=1024 * 1024))
    result = await request.app.state.bench.verdicts.record(data, caller)
    return json_response(result)


def _limit(raw: str | None) -> int:
    if raw is None:
        return 20
    if not raw.isdecimal() or not 1 <= int(raw) <= 200:
        raise InvalidRequest("limit must be a whole number from 1 to 200", param="limit")
    return int(raw)


@router.get("/bench/panels")
async def list_panels(request: Request) -> Response:
    caller = await caller_for(request)
    params = request.query_params
    owed = params.get("owed") in ("1", "true", "yes")
    before = params.get("before")
    try:
        before_at = float(before) if before else None
    except ValueError:
        raise InvalidRequest("before must be a time in epoch seconds", param="before") from None
    panels = await request.app.state.bench.log.panels(
        limit=_limit(params.get("limit")), before=before_at, owed=owed, caller=caller
    )
    return json_response({"object": "list", "data": panels})


@router.get("/bench/panels/{panel_id}")
async def get_panel(panel_id: str, request: Request) -> Response:
    caller = await caller_for(request)
    return json_response(await request.app.state.bench.log.panel(panel_id, caller))
