"""`/bench`: verdicts and the call log, for gateway callers (the router checks the key)."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Query
from starlette.responses import Response

from benchwarmers.server.deps import BenchDep, GatewayCaller, JsonBody, gateway_router
from benchwarmers.server.params import Before, Flag, flag
from benchwarmers.server.responses import json_response
from benchwarmers.server.schemas import VerdictBody, error_responses

router = gateway_router()

VERDICT_CAP = 1024 * 1024


@router.post("/bench/verdict", responses=error_responses(404))
async def post_verdict(
    caller: GatewayCaller, bench: BenchDep, body: Annotated[VerdictBody, Depends(JsonBody(VerdictBody, VERDICT_CAP))]
) -> Response:
    return json_response(await bench.verdicts.record(body.model_dump(), caller))


@router.get("/bench/panels")
async def list_panels(
    caller: GatewayCaller,
    bench: BenchDep,
    limit: Annotated[int, Query(ge=1, le=200, description="How many panels, newest first.")] = 20,
    before: Before = None,
    owed: Annotated[Flag, flag("Only panels with seats awaiting a verdict.")] = False,
) -> Response:
    panels = await bench.log.panels(limit=limit, before=before, owed=owed, caller=caller)
    return json_response({"object": "list", "data": panels})


@router.get("/bench/panels/{panel_id}")
async def get_panel(panel_id: str, caller: GatewayCaller, bench: BenchDep) -> Response:
    return json_response(await bench.log.panel(panel_id, caller))
