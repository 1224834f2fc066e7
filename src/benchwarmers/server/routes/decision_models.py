"""`/api/decision-models`: the models that decide a request's shape, added and removed (admin only)."""

from __future__ import annotations

from typing import Annotated

from starlette.responses import Response

from benchwarmers.server.deps import Admin, BenchDep, admin_body, admin_router
from benchwarmers.server.responses import json_response
from benchwarmers.server.schemas import DecisionModelCreate, error_responses

router = admin_router()


@router.get("/api/decision-models")
async def get_decision_models(bench: BenchDep) -> Response:
    return json_response({"object": "list", "data": (await bench.snapshot()).decision_models})


@router.post("/api/decision-models", status_code=201, responses=error_responses(409, 502))
async def create_decision_model(
    actor: Admin, bench: BenchDep, body: Annotated[DecisionModelCreate, admin_body(DecisionModelCreate)]
) -> Response:
    row = await bench.shapes.add_decision_model(body.alias, body.kind or "chat", actor=actor)
    return json_response(row, status=201)


@router.delete("/api/decision-models/{alias:path}")
async def delete_decision_model(alias: str, actor: Admin, bench: BenchDep) -> Response:
    await bench.shapes.remove_decision_model(alias, actor=actor)
    return json_response({"alias": alias, "deleted": True})
