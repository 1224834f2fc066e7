"""`/api/models`: the roster, one model's facts, what it got wrong, a fact changed, a retired model restored
(admin only)."""

from __future__ import annotations

from typing import Annotated

from fastapi import Query
from starlette.responses import Response

from benchwarmers.bench.evidence.wrong import DEFAULT_LIMIT, MAX_LIMIT
from benchwarmers.errors import InvalidRequest
from benchwarmers.server.deps import Admin, BenchDep, admin_body, admin_router
from benchwarmers.server.responses import json_response
from benchwarmers.server.schemas import ModelPatch

router = admin_router()


@router.get("/api/models")
async def get_models(bench: BenchDep) -> Response:
    return json_response({"object": "list", "data": await bench.models.list_models()})


# Before GET /api/models/{alias:path}, which would take "…/wrong" as part of the alias.
@router.get("/api/models/{alias:path}/wrong")
async def get_wrong_claims(
    alias: str,
    bench: BenchDep,
    limit: Annotated[
        int, Query(ge=1, le=MAX_LIMIT, description="How many claims at most, newest verdict first.")
    ] = DEFAULT_LIMIT,
) -> Response:
    claims = await bench.evidence.wrong_claims(alias, limit)
    return json_response({"object": "list", "alias": alias, "data": claims})


@router.post("/api/models/{alias:path}/restore")
async def restore_model(alias: str, actor: Admin, bench: BenchDep) -> Response:
    return json_response(await bench.models.restore(alias, actor=actor))


@router.get("/api/models/{alias:path}")
async def get_model(alias: str, bench: BenchDep) -> Response:
    return json_response(await bench.models.model(alias))


@router.patch("/api/models/{alias:path}")
async def patch_model(
    alias: str, actor: Admin, bench: BenchDep, body: Annotated[ModelPatch, admin_body(ModelPatch)]
) -> Response:
    changes = body.model_dump(exclude_none=True)  # null leaves a fact as it is
    if not changes:
        raise InvalidRequest(f"nothing to change: give any of {', '.join(ModelPatch.model_fields)}")
    return json_response(await bench.models.set_model(alias, actor=actor, **changes))
