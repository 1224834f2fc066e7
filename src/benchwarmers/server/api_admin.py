"""`/api/...`: the dashboard's JSON admin API over the same core the CLI uses.

Every route is guarded by the router (`admin_router()`: the dashboard's token whenever keys are required) and
writes the admin's name into the changes log. Bodies are typed (`server/schemas.py`) and read
within a cap; unknown fields are refused rather than ignored, so a typo is never a silent no-op.
Errors are BenchErrors (the one handler in `server/errors.py` renders them).
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Depends, Path, Query
from starlette.responses import Response

from benchwarmers.bench.admin import alerts as bench_alerts
from benchwarmers.bench.admin import endpoint_edit
from benchwarmers.bench.admin.changes import list_changes
from benchwarmers.bench.admin.collection_rules import explorer_seats
from benchwarmers.bench.evidence.wrong import DEFAULT_LIMIT, MAX_LIMIT, wrong_claims
from benchwarmers.bench.names import collection_name
from benchwarmers.bench.presets import endpoint_options
from benchwarmers.bench.services import Bench
from benchwarmers.bench.upkeep import discover as bench_discover
from benchwarmers.errors import InvalidRequest
from benchwarmers.server.deps import Admin, BenchDep, JsonBody, admin_router
from benchwarmers.server.params import Blank, Flag, MinWindow, flag
from benchwarmers.server.responses import json_response
from benchwarmers.server.schemas import (
    Body,
    CollectionCreate,
    CollectionReplace,
    DecisionModelCreate,
    DiscoverAdd,
    EndpointCreate,
    EndpointEdit,
    GatewaySettingsBody,
    ModelPatch,
    ShapeBody,
    error_responses,
)
from benchwarmers.server.v1_routes import together

router = admin_router()

BODY_CAP = 256 * 1024


def _body(model: type[Any]) -> Any:
    return Depends(JsonBody(model, BODY_CAP))


# -- collections ------------------------------------------------------------------------------------


async def collection_views(bench: Bench) -> list[dict[str, Any]]:
    """Each collection with what the gateway makes of it: explorer seats and combined window."""
    snapshot = await bench.state.snapshot()
    return [
        {**c, "explorers": explorer_seats(c, snapshot.gateway), "together": together(c, snapshot)}
        for c in await bench.collections.list_collections()
    ]


@router.get("/api/collections")
async def get_collections(bench: BenchDep) -> Response:
    return json_response({"object": "list", "data": await collection_views(bench)})


@router.post("/api/collections", status_code=201, responses=error_responses(409))
async def create_collection(
    actor: Admin, bench: BenchDep, body: Annotated[CollectionCreate, _body(CollectionCreate)]
) -> Response:
    made = await bench.collections.add_collection(body.model_dump(exclude_unset=True), actor=actor)
    return json_response({**made, "warnings": await bench.collections.warnings(made)}, status=201)


@router.put("/api/collections/{name}")
async def replace_collection(
    name: str, actor: Admin, bench: BenchDep, body: Annotated[CollectionReplace, _body(CollectionReplace)]
) -> Response:
    data = body.model_dump(exclude_unset=True)
    given = data.pop("name", None)
    if given is not None and collection_name(given) != collection_name(name):
        raise InvalidRequest("a collection cannot be renamed: create one under the new name", param="name")
    edited = await bench.collections.edit_collection(name, data, actor=actor, replace=True)
    return json_response({**edited, "warnings": await bench.collections.warnings(edited)})


@router.delete("/api/collections/{name}")
async def delete_collection(name: str, actor: Admin, bench: BenchDep) -> Response:
    await bench.collections.remove_collection(name, actor=actor)
    return json_response({"name": name, "deleted": True})


# -- models -----------------------------------------------------------------------------------------


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
    claims = await wrong_claims(bench.state, alias, limit)
    return json_response({"object": "list", "alias": alias, "data": claims})


@router.post("/api/models/{alias:path}/restore")
async def restore_model(alias: str, actor: Admin, bench: BenchDep) -> Response:
    return json_response(await bench.models.restore(alias, actor=actor))


@router.get("/api/models/{alias:path}")
async def get_model(alias: str, bench: BenchDep) -> Response:
    return json_response(await bench.models.model(alias))


@router.patch("/api/models/{alias:path}")
async def patch_model(
    alias: str, actor: Admin, bench: BenchDep, body: Annotated[ModelPatch, _body(ModelPatch)]
) -> Response:
    changes = body.model_dump(exclude_none=True)  # null leaves a fact as it is
    if not changes:
        raise InvalidRequest(f"nothing to change: give any of {', '.join(ModelPatch.model_fields)}")
    return json_response(await bench.models.set_model(alias, actor=actor, **changes))


# -- endpoints ------------------------------------------------------------------------------------


@router.get("/api/endpoints")
async def get_endpoints(bench: BenchDep) -> Response:
    return json_response({"object": "list", "data": await bench.endpoints.list_endpoints()})


def _text(value: str | None) -> str | None:
    """A form's field: blank is as if left out."""
    return (value.strip() or None) if value is not None else None


@router.post("/api/endpoints", status_code=201, responses=error_responses(409))
async def create_endpoint(
    actor: Admin, bench: BenchDep, body: Annotated[EndpointCreate, _body(EndpointCreate)]
) -> Response:
    given: dict[str, Any] = {f: _text(getattr(body, f)) for f in ("base_url", "kind", "api_key_env", "api_key")}
    free_tier = body.free_tier
    preset = _text(body.preset)
    if preset:
        given = {**given, **endpoint_options(preset, **given, free_tier=free_tier)}
        free_tier = given.pop("free_tier")
    elif not given["base_url"]:
        raise InvalidRequest("give a base URL, or pick a preset", param="base_url")
    endpoint = await bench.endpoints.add_endpoint(
        _text(body.name) or "",
        given["base_url"] or "",
        given["kind"] or "openai",
        api_key_env=given["api_key_env"],
        api_key=given["api_key"],
        free_tier=bool(free_tier),
        actor=actor,
    )
    return json_response(endpoint, status=201, headers={"cache-control": "no-store"})


@router.patch("/api/endpoints/{name}", responses=error_responses(404))
async def patch_endpoint(
    name: str, actor: Admin, bench: BenchDep, body: Annotated[EndpointEdit, _body(EndpointEdit)]
) -> Response:
    endpoint = await endpoint_edit.edit_endpoint(
        bench.state,
        name,
        base_url=_text(body.base_url),
        api_key_env=_text(body.api_key_env),
        api_key=_text(body.api_key),
        free_tier=body.free_tier,
        actor=actor,
    )
    return json_response(endpoint, headers={"cache-control": "no-store"})


@router.post("/api/endpoints/{name}/test", responses=error_responses(404))
async def try_endpoint(name: str, bench: BenchDep) -> Response:
    return json_response(await endpoint_edit.try_endpoint(bench.state, name))


@router.delete("/api/endpoints/{name}", responses=error_responses(409))
async def delete_endpoint(
    name: str,
    actor: Admin,
    bench: BenchDep,
    force: Annotated[Flag, flag("Remove it even while collections seat its models.")] = False,
) -> Response:
    await bench.endpoints.remove_endpoint(name, force=force, actor=actor)
    return json_response({"name": name, "deleted": True})


@router.post("/api/endpoints/{name}/refresh", responses=error_responses(502))
async def refresh_endpoint(name: str, actor: Admin, bench: BenchDep) -> Response:
    summary = await bench.endpoints.refresh_endpoint(name, actor=actor)
    return json_response({"name": name, **summary})


# -- gateway settings, shapes, decision models ------------------------------------------------------


@router.get("/api/settings")
async def get_settings(bench: BenchDep) -> Response:
    return json_response((await bench.state.snapshot()).gateway)


@router.put("/api/settings")
async def put_settings(actor: Admin, bench: BenchDep, body: Annotated[Body, _body(GatewaySettingsBody)]) -> Response:
    values = body.model_dump(exclude_unset=True)
    return json_response(await bench.gateway_settings.set_gateway(actor=actor, **values))


@router.get("/api/shapes")
async def get_shapes(bench: BenchDep) -> Response:
    return json_response((await bench.state.snapshot()).shapes)


@router.put("/api/shapes/{name}")
async def put_shape(name: str, actor: Admin, bench: BenchDep, body: Annotated[ShapeBody, _body(ShapeBody)]) -> Response:
    return json_response(await bench.shapes.set_shape(name, body.description, actor=actor))


@router.delete("/api/shapes/{name}")
async def delete_shape(name: str, actor: Admin, bench: BenchDep) -> Response:
    return json_response(await bench.shapes.remove_shape(name, actor=actor))


@router.get("/api/decision-models")
async def get_decision_models(bench: BenchDep) -> Response:
    return json_response({"object": "list", "data": (await bench.state.snapshot()).decision_models})


@router.post("/api/decision-models", status_code=201, responses=error_responses(409, 502))
async def create_decision_model(
    actor: Admin, bench: BenchDep, body: Annotated[DecisionModelCreate, _body(DecisionModelCreate)]
) -> Response:
    row = await bench.shapes.add_decision_model(body.alias, body.kind or "chat", actor=actor)
    return json_response(row, status=201)


@router.delete("/api/decision-models/{alias:path}")
async def delete_decision_model(alias: str, actor: Admin, bench: BenchDep) -> Response:
    await bench.shapes.remove_decision_model(alias, actor=actor)
    return json_response({"alias": alias, "deleted": True})


# -- the changes log, alerts, discover ------------------------------------------------------------


@router.get("/api/changes")
async def get_changes(
    bench: BenchDep,
    limit: Annotated[int, Query(ge=1, le=1000, description="How many changes, newest first.")] = 100,
    subject: Annotated[
        str | None, Blank, Query(description="Only changes to this kind of thing, e.g. collection.")
    ] = None,
) -> Response:
    rows = await list_changes(bench.state, limit=limit, subject=subject)
    # Plain str keys: SQLAlchemy names some columns with a str subclass orjson will not take as a key.
    return json_response({"object": "list", "data": [{str(k): v for k, v in row.items()} for row in rows]})


@router.get("/api/alerts")
async def get_alerts(
    bench: BenchDep, everything: Annotated[Flag, flag("Acknowledged alerts too.", alias="all")] = False
) -> Response:
    found = await bench_alerts.list_alerts(bench.state, include_acknowledged=everything)
    return json_response({"object": "list", "data": found})


@router.post("/api/alerts/{alert_id}/ack")
async def acknowledge_alert(
    alert_id: Annotated[int, Path(description="The alert's id, from GET /api/alerts.")], actor: Admin, bench: BenchDep
) -> Response:
    return json_response(await bench_alerts.acknowledge(bench.state, alert_id, actor=actor))


@router.get("/api/discover")
async def get_discover(
    bench: BenchDep,
    free: Annotated[Flag, flag("Only models that cost nothing.")] = False,
    vision: Annotated[Flag, flag("Only models that take images.")] = False,
    min_context: MinWindow = None,
    provider: Annotated[str | None, Blank, Query(description="Only this provider's models.")] = None,
    limit: Annotated[int, Query(ge=1, le=10_000, description="How many models at most.")] = 200,
) -> Response:
    found = await bench_discover.discover(
        bench.state, free=free, vision=vision, min_context=min_context, provider=provider, limit=limit
    )
    return json_response({"object": "list", "data": found})


@router.post("/api/discover", status_code=201, responses=error_responses(409))
async def add_discovered(actor: Admin, bench: BenchDep, body: Annotated[DiscoverAdd, _body(DiscoverAdd)]) -> Response:
    return json_response(await bench_discover.add(bench.state, body.model, actor=actor), status=201)
