"""`/api/keys`: gateway keys for the dashboard's Settings page (list, make, revoke).

A new key is in the POST reply and nowhere else: the reply is marked no-store.
"""

from __future__ import annotations

from fastapi import APIRouter, Request
from starlette.responses import Response

from benchwarmers.errors import InvalidRequest
from benchwarmers.server.auth import access, admin_for
from benchwarmers.server.body import parse_json_object, read_body
from benchwarmers.server.responses import json_response

router = APIRouter()

_FIELDS = {"name", "collections", "rpm"}


@router.get("/api/keys")
async def list_keys(request: Request) -> Response:
    await admin_for(request)
    revoked = request.query_params.get("revoked") in ("1", "true", "yes")
    keys = await access(request).keys.list_keys(include_revoked=revoked)
    return json_response({"object": "list", "data": keys})


@router.post("/api/keys")
async def create_key(request: Request) -> Response:
    admin = await admin_for(request)
    data = parse_json_object(await read_body(request, cap=64 * 1024))
    unknown = set(data) - _FIELDS
    if unknown:
        raise InvalidRequest(f"unknown field(s): {', '.join(sorted(unknown))}; a key has name, collections, rpm")
    key, record = await access(request).keys.create(
        data.get("name"), data.get("collections"), data.get("rpm"), actor=admin
    )
    return json_response({**record, "key": key}, status=201, headers={"cache-control": "no-store"})


@router.delete("/api/keys/{name}")
async def revoke_key(name: str, request: Request) -> Response:
    admin = await admin_for(request)
    return json_response(await access(request).keys.revoke(name, actor=admin))
