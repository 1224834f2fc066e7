"""`/api/settings`: the gateway's settings, read and set (admin only; a change is in the changes log)."""

from __future__ import annotations

from typing import Annotated

from starlette.responses import Response

from benchwarmers.server.deps import Admin, BenchDep, admin_body, admin_router
from benchwarmers.server.responses import json_response
from benchwarmers.server.schemas import Body, GatewaySettingsBody

router = admin_router()


@router.get("/api/settings")
async def get_settings(bench: BenchDep) -> Response:
    return json_response((await bench.snapshot()).gateway.model_dump())


@router.put("/api/settings")
async def put_settings(
    actor: Admin, bench: BenchDep, body: Annotated[Body, admin_body(GatewaySettingsBody)]
) -> Response:
    values = body.model_dump(exclude_unset=True)
    return json_response(await bench.gateway_settings.set_gateway(actor=actor, **values))
