"""`/api/alerts`: the alerts the bench raised, listed and acknowledged (admin only)."""

from __future__ import annotations

from typing import Annotated

from fastapi import Path
from starlette.responses import Response

from benchwarmers.server.deps import Admin, BenchDep, admin_router
from benchwarmers.server.params import Flag, flag
from benchwarmers.server.responses import json_response

router = admin_router()


@router.get("/api/alerts")
async def get_alerts(
    bench: BenchDep, everything: Annotated[Flag, flag("Acknowledged alerts too.", alias="all")] = False
) -> Response:
    found = await bench.alerts.list_alerts(include_acknowledged=everything)
    return json_response({"object": "list", "data": found})


@router.post("/api/alerts/{alert_id}/ack")
async def acknowledge_alert(
    alert_id: Annotated[int, Path(description="The alert's id, from GET /api/alerts.")], actor: Admin, bench: BenchDep
) -> Response:
    return json_response(await bench.alerts.acknowledge(alert_id, actor=actor))
