"""`/api/endpoints`: the providers' endpoints, added (by hand or from a preset), edited, tried, refreshed
and removed (admin only)."""

from __future__ import annotations

from typing import Annotated, Any

from starlette.responses import Response

from benchwarmers.bench.presets import endpoint_options
from benchwarmers.errors import InvalidRequest
from benchwarmers.server.deps import Admin, BenchDep, admin_body, admin_router
from benchwarmers.server.params import Flag, flag
from benchwarmers.server.responses import json_response
from benchwarmers.server.schemas import EndpointCreate, EndpointEdit, error_responses

router = admin_router()


@router.get("/api/endpoints")
async def get_endpoints(bench: BenchDep) -> Response:
    return json_response({"object": "list", "data": await bench.endpoints.list_endpoints()})


def _text(value: str | None) -> str | None:
    """A form's field: blank is as if left out."""
    return (value.strip() or None) if value is not None else None


@router.post("/api/endpoints", status_code=201, responses=error_responses(409))
async def create_endpoint(
    actor: Admin, bench: BenchDep, body: Annotated[EndpointCreate, admin_body(EndpointCreate)]
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
    name: str, actor: Admin, bench: BenchDep, body: Annotated[EndpointEdit, admin_body(EndpointEdit)]
) -> Response:
    endpoint = await bench.endpoint_edits.edit_endpoint(
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
    return json_response(await bench.endpoint_edits.try_endpoint(name))


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
