"""`/api/discover`: models the catalog knows of that are not on the roster yet, and adding one (admin only)."""

from __future__ import annotations

from typing import Annotated

from fastapi import Query
from starlette.responses import Response

from benchwarmers.server.deps import Admin, BenchDep, admin_body, admin_router
from benchwarmers.server.params import Blank, Flag, MinWindow, flag
from benchwarmers.server.responses import json_response
from benchwarmers.server.schemas import DiscoverAdd, error_responses

router = admin_router()


@router.get("/api/discover")
async def get_discover(
    bench: BenchDep,
    free: Annotated[Flag, flag("Only models that cost nothing.")] = False,
    vision: Annotated[Flag, flag("Only models that take images.")] = False,
    min_context: MinWindow = None,
    provider: Annotated[str | None, Blank, Query(description="Only this provider's models.")] = None,
    limit: Annotated[int, Query(ge=1, le=10_000, description="How many models at most.")] = 200,
) -> Response:
    found = await bench.discovery.discover(
        free=free, vision=vision, min_context=min_context, provider=provider, limit=limit
    )
    return json_response({"object": "list", "data": found})


@router.post("/api/discover", status_code=201, responses=error_responses(409))
async def add_discovered(
    actor: Admin, bench: BenchDep, body: Annotated[DiscoverAdd, admin_body(DiscoverAdd)]
) -> Response:
    return json_response(await bench.discovery.add(body.model, actor=actor), status=201)
