"""`/api/budgets`: the daily budgets of keys and collections, for the Settings page (admin only)."""

from __future__ import annotations

from starlette.responses import Response

from benchwarmers.server.deps import BenchDep, admin_router
from benchwarmers.server.responses import json_response

router = admin_router()


@router.get("/api/budgets")
async def budgets(bench: BenchDep) -> Response:
    """Every daily budget: what it allows, what it spent since its reset, when it resets."""
    return json_response({"object": "list", "data": await bench.budgets.today()})
