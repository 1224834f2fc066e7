"""`/api/keys`: gateway keys for the dashboard's Settings page (list, make, edit, revoke).

A new key is in the POST reply and nowhere else: the reply is marked no-store.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends
from starlette.responses import Response

from benchwarmers.server.deps import Admin, BenchDep, JsonBody, admin_router
from benchwarmers.server.params import Flag, flag
from benchwarmers.server.responses import json_response
from benchwarmers.server.schemas import KeyCreate, KeyPatch, error_responses

router = admin_router()

BODY_CAP = 64 * 1024


@router.get("/api/keys")
async def list_keys(bench: BenchDep, revoked: Annotated[Flag, flag("Revoked keys too.")] = False) -> Response:
    return json_response({"object": "list", "data": await bench.keys.list_keys(include_revoked=revoked)})


@router.post("/api/keys", status_code=201, responses=error_responses(404, 409))
async def create_key(
    admin: Admin, bench: BenchDep, body: Annotated[KeyCreate, Depends(JsonBody(KeyCreate, BODY_CAP))]
) -> Response:
    key, record = await bench.keys.create(
        body.name,
        body.collections,
        body.rpm,
        daily_panels=body.daily_panels,
        daily_tokens=body.daily_tokens,
        actor=admin,
    )
    return json_response({**record, "key": key}, status=201, headers={"cache-control": "no-store"})


@router.patch("/api/keys/{name}", responses=error_responses(404, 409))
async def edit_key(
    name: str, admin: Admin, bench: BenchDep, body: Annotated[KeyPatch, Depends(JsonBody(KeyPatch, BODY_CAP))]
) -> Response:
    return json_response(await bench.keys.edit(name, actor=admin, **body.model_dump()))


@router.delete("/api/keys/{name}", responses=error_responses(409))
async def revoke_key(name: str, admin: Admin, bench: BenchDep) -> Response:
    return json_response(await bench.keys.revoke(name, actor=admin))
