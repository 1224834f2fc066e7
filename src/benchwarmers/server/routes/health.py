"""`/healthz` and `/readyz`: open in every mode, for balancers and orchestrators (no guard, no data)."""

from __future__ import annotations

from fastapi import APIRouter
from starlette.requests import Request
from starlette.responses import Response

from benchwarmers import __version__
from benchwarmers.server import readiness
from benchwarmers.server.responses import json_response
from benchwarmers.server.startup import Startup

router = APIRouter()


@router.get("/healthz")
async def healthz() -> Response:
    return json_response({"status": "ok", "version": __version__})


@router.get("/readyz", responses={503: {"description": "Not ready: the reasons (database, Redis, disk)."}})
async def readyz(request: Request) -> Response:
    startup: Startup = request.app.state.startup
    found = await readiness.reasons(startup)
    if found:
        database = "unreachable" if any(r.startswith("database:") for r in found) else "ok"
        return json_response({"status": "not ready", "database": database, "reasons": found}, status=503)
    return json_response({"status": "ready", "database": "ok"})
