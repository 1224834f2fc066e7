"""`/api/...`: the dashboard's JSON admin API over the same core the CLI uses.

Every route is guarded by `admin_for` and writes the admin's name into the changes log. Bodies
are JSON objects; unknown fields are refused rather than ignored, so a typo is never a silent
no-op. Errors are BenchErrors (the one handler in `server/errors.py` renders them).
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from starlette.responses import Response

from benchwarmers.bench.admin import alerts as bench_alerts
from benchwarmers.bench.admin.changes import list_changes
from benchwarmers.bench.admin.collection_rules import explorer_seats
from benchwarmers.bench.admin.gateway_settings import GATEWAY_DEFAULTS
from benchwarmers.bench.admin.presets import endpoint_options
from benchwarmers.bench.upkeep import discover as bench_discover
from benchwarmers.errors import InvalidRequest
from benchwarmers.server.auth import admin_for
from benchwarmers.server.body import parse_json_object, read_body
from benchwarmers.server.responses import json_response
from benchwarmers.server.v1_routes import together

router = APIRouter()

BODY_CAP = 256 * 1024
COLLECTION_FIELDS = frozenset(
    {"name", "description", "tags", "members", "shape", "reply", "merger", "max_explorers", "max_calls"}
)
MODEL_FIELDS = {"context": int, "output": int, "vision": bool, "family": str, "free": bool, "enabled": bool}
ENDPOINT_FIELDS = frozenset({"name", "base_url", "kind", "api_key_env", "api_key", "free_tier", "preset"})


async def _body(request: Request, allowed: frozenset[str] | set[str]) -> dict[str, Any]:
    data = parse_json_object(await read_body(request, cap=BODY_CAP))
    unknown = set(data) - set(allowed)
    if unknown:
        raise InvalidRequest(
            f"unknown field(s): {', '.join(sorted(unknown))}; expected: {', '.join(sorted(allowed))}",
            param=sorted(unknown)[0],
        )
    return data


def _flag(request: Request, name: str) -> bool:
    return request.query_params.get(name) in ("1", "true", "yes", "on")


def _bench(request: Request) -> Any:
    return request.app.state.bench


# -- collections ------------------------------------------------------------------------------------


async def collection_views(bench: Any) -> list[dict[str, Any]]:
    """Each collection with what the gateway makes of it: explorer seats and combined window."""
    snapshot = await bench.state.snapshot()
    return [
        {**c, "explorers": explorer_seats(c, snapshot.gateway), "together": together(c, snapshot)}
        for c in await bench.collections.list_collections()
    ]


@router.get("/api/collections")
async def get_collections(request: Request) -> Response:
    await admin_for(request)
    return json_response({"object": "list", "data": await collection_views(_bench(request))})


@router.post("/api/collections")
async def create_collection(request: Request) -> Response:
    actor = await admin_for(request)
    data = await _body(request, COLLECTION_FIELDS)
    return json_response(await _bench(request).collections.add_collection(data, actor=actor), status=201)


@router.put("/api/collections/{name}")
async def replace_collection(name: str, request: Request) -> Response:
    actor = await admin_for(request)
    data = await _body(request, COLLECTION_FIELDS)
    if data.get("name", name) != name:
        raise InvalidRequest("a collection cannot be renamed: create one under the new name", param="name")
    data.pop("name", None)
    return json_response(await _bench(request).collections.edit_collection(name, data, actor=actor, replace=True))


@router.delete("/api/collections/{name}")
async def delete_collection(name: str, request: Request) -> Response:
    actor = await admin_for(request)
    await _bench(request).collections.remove_collection(name, actor=actor)
    return json_response({"name": name, "deleted": True})


# -- models -----------------------------------------------------------------------------------------


@router.get("/api/models")
async def get_models(request: Request) -> Response:
    await admin_for(request)
    return json_response({"object": "list", "data": await _bench(request).models.list_models()})


@router.get("/api/models/{alias:path}")
async def get_model(alias: str, request: Request) -> Response:
    await admin_for(request)
    return json_response(await _bench(request).models.model(alias))


def model_changes(data: dict[str, Any]) -> dict[str, Any]:
    """The popup's fields, typed: null leaves a fact as it is."""
    changes: dict[str, Any] = {}
    for field, kind in MODEL_FIELDS.items():
        value = data.get(field)
        if value is None:
            continue
        if kind is int and (isinstance(value, bool) or not isinstance(value, int) or value <= 0):
            raise InvalidRequest(f"{field} must be a positive whole number of tokens", param=field)
        if kind is bool and not isinstance(value, bool):
            raise InvalidRequest(f"{field} must be true or false", param=field)
        if kind is str:
            if not isinstance(value, str) or not value.strip() or len(value) > 64:
                raise InvalidRequest(f"{field} must be a name of 1 to 64 characters", param=field)
            value = value.strip()
        changes[field] = value
    if not changes:
        raise InvalidRequest(f"nothing to change: give any of {', '.join(MODEL_FIELDS)}")
    return changes


@router.patch("/api/models/{alias:path}")
async def patch_model(alias: str, request: Request) -> Response:
    actor = await admin_for(request)
    changes = model_changes(await _body(request, set(MODEL_FIELDS)))
    return json_response(await _bench(request).models.set_model(alias, actor=actor, **changes))


# -- endpoints ------------------------------------------------------------------------------------


@router.get("/api/endpoints")
async def get_endpoints(request: Request) -> Response:
    await admin_for(request)
    return json_response({"object": "list", "data": await _bench(request).endpoints.list_endpoints()})


def _optional_text(data: dict[str, Any], field: str) -> str | None:
    value = data.get(field)
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if not isinstance(value, str):
        raise InvalidRequest(f"{field} must be a string", param=field)
    return value.strip()


@router.post("/api/endpoints")
async def create_endpoint(request: Request) -> Response:
    actor = await admin_for(request)
    data = await _body(request, ENDPOINT_FIELDS)
    name = _optional_text(data, "name") or ""
    given = {field: _optional_text(data, field) for field in ("base_url", "kind", "api_key_env", "api_key")}
    free_tier = data.get("free_tier")
    if free_tier is not None and not isinstance(free_tier, bool):
        raise InvalidRequest("free_tier must be true or false", param="free_tier")
    preset = _optional_text(data, "preset")
    if preset:
        given = {**given, **endpoint_options(preset, **given, free_tier=free_tier)}
        free_tier = given.pop("free_tier")
    elif not given["base_url"]:
        raise InvalidRequest("give a base URL, or pick a preset", param="base_url")
    endpoint = await _bench(request).endpoints.add_endpoint(
        name,
        given["base_url"] or "",
        given["kind"] or "openai",
        api_key_env=given["api_key_env"],
        api_key=given["api_key"],
        free_tier=bool(free_tier),
        actor=actor,
    )
    return json_response(endpoint, status=201, headers={"cache-control": "no-store"})


@router.delete("/api/endpoints/{name}")
async def delete_endpoint(name: str, request: Request) -> Response:
    actor = await admin_for(request)
    await _bench(request).endpoints.remove_endpoint(name, actor=actor)
    return json_response({"name": name, "deleted": True})


@router.post("/api/endpoints/{name}/refresh")
async def refresh_endpoint(name: str, request: Request) -> Response:
    actor = await admin_for(request)
    summary = await _bench(request).endpoints.refresh_endpoint(name, actor=actor)
    return json_response({"name": name, **summary})


# -- gateway settings, shapes, decision models ------------------------------------------------------


@router.get("/api/settings")
async def get_settings(request: Request) -> Response:
    await admin_for(request)
    return json_response((await _bench(request).state.snapshot()).gateway)


@router.put("/api/settings")
async def put_settings(request: Request) -> Response:
    actor = await admin_for(request)
    data = await _body(request, set(GATEWAY_DEFAULTS))
    return json_response(await _bench(request).gateway_settings.set_gateway(actor=actor, **data))


@router.get("/api/shapes")
async def get_shapes(request: Request) -> Response:
    await admin_for(request)
    return json_response((await _bench(request).state.snapshot()).shapes)


@router.put("/api/shapes/{name}")
async def put_shape(name: str, request: Request) -> Response:
    actor = await admin_for(request)
    data = await _body(request, {"description"})
    description = data.get("description")
    if not isinstance(description, str):
        raise InvalidRequest("a shape needs a description: decision models choose by it", param="description")
    return json_response(await _bench(request).shapes.set_shape(name, description, actor=actor))


@router.delete("/api/shapes/{name}")
async def delete_shape(name: str, request: Request) -> Response:
    actor = await admin_for(request)
    return json_response(await _bench(request).shapes.remove_shape(name, actor=actor))


@router.get("/api/decision-models")
async def get_decision_models(request: Request) -> Response:
    await admin_for(request)
    return json_response({"object": "list", "data": (await _bench(request).state.snapshot()).decision_models})


@router.post("/api/decision-models")
async def create_decision_model(request: Request) -> Response:
    actor = await admin_for(request)
    data = await _body(request, {"alias", "kind"})
    alias, kind = data.get("alias"), data.get("kind") or "chat"
    if not isinstance(alias, str) or not alias:
        raise InvalidRequest("alias: the roster model that will label shapes", param="alias")
    if not isinstance(kind, str):
        raise InvalidRequest("kind must be chat or choice", param="kind")
    row = await _bench(request).shapes.add_decision_model(alias, kind, actor=actor)
    return json_response(row, status=201)


@router.delete("/api/decision-models/{alias:path}")
async def delete_decision_model(alias: str, request: Request) -> Response:
    actor = await admin_for(request)
    await _bench(request).shapes.remove_decision_model(alias, actor=actor)
    return json_response({"alias": alias, "deleted": True})


# -- the changes log, alerts, discover ------------------------------------------------------------


def _limit(raw: str | None, default: int, top: int) -> int:
    if raw is None:
        return default
    if not raw.isdecimal() or not 1 <= int(raw) <= top:
        raise InvalidRequest(f"limit must be a whole number from 1 to {top}", param="limit")
    return int(raw)


@router.get("/api/changes")
async def get_changes(request: Request) -> Response:
    await admin_for(request)
    params = request.query_params
    rows = await list_changes(
        _bench(request).state, limit=_limit(params.get("limit"), 100, 1000), subject=params.get("subject")
    )
    # Plain str keys: SQLAlchemy names some columns with a str subclass orjson will not take as a key.
    return json_response({"object": "list", "data": [{str(k): v for k, v in row.items()} for row in rows]})


@router.get("/api/alerts")
async def get_alerts(request: Request) -> Response:
    await admin_for(request)
    found = await bench_alerts.list_alerts(_bench(request).state, include_acknowledged=_flag(request, "all"))
    return json_response({"object": "list", "data": found})


@router.post("/api/alerts/{alert_id}/ack")
async def acknowledge_alert(alert_id: str, request: Request) -> Response:
    actor = await admin_for(request)
    if not alert_id.isdecimal():
        raise InvalidRequest(f"alert id {alert_id!r} is not a number", param="id")
    return json_response(await bench_alerts.acknowledge(_bench(request).state, int(alert_id), actor=actor))


def min_window(raw: str | None) -> int | None:
    if not raw:
        return None
    if not raw.isdecimal():
        raise InvalidRequest("min_context must be a whole number of tokens", param="min_context")
    return int(raw)


@router.get("/api/discover")
async def get_discover(request: Request) -> Response:
    await admin_for(request)
    params = request.query_params
    found = await bench_discover.discover(
        _bench(request).state,
        free=_flag(request, "free"),
        vision=_flag(request, "vision"),
        min_context=min_window(params.get("min_context")),
        provider=params.get("provider") or None,
        limit=_limit(params.get("limit"), 200, 10_000),
    )
    return json_response({"object": "list", "data": found})


@router.post("/api/discover")
async def add_discovered(request: Request) -> Response:
    actor = await admin_for(request)
    data = await _body(request, {"model"})
    model = data.get("model")
    if not isinstance(model, str):
        raise InvalidRequest("model: PROVIDER/MODEL as the discover list gives it", param="model")
    return json_response(await bench_discover.add(_bench(request).state, model, actor=actor), status=201)
