"""`/api/notify`: where new alerts are sent (Apprise URLs), for the Settings page and scripts.

A target's URL holds its secrets: it goes in once, in the POST body, and never comes back (the
replies carry its scheme and host as `label`); every reply is marked no-store like the keys'.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends
from starlette.responses import Response

from benchwarmers.server.deps import Admin, BenchDep, JsonBody, admin_router
from benchwarmers.server.responses import json_response
from benchwarmers.server.schemas import NotifyTargetCreate, error_responses

router = admin_router()

BODY_CAP = 16 * 1024
NO_STORE = {"cache-control": "no-store"}


@router.get("/api/notify")
async def list_targets(bench: BenchDep) -> Response:
    return json_response({"object": "list", "data": await bench.notify.list_targets()}, headers=NO_STORE)


@router.post("/api/notify", status_code=201, responses=error_responses(409, 503))
async def add_target(
    admin: Admin, bench: BenchDep, body: Annotated[NotifyTargetCreate, Depends(JsonBody(NotifyTargetCreate, BODY_CAP))]
) -> Response:
    target = await bench.notify.add(body.url, body.name, actor=admin)
    return json_response(target, status=201, headers=NO_STORE)


@router.delete("/api/notify/{name}", responses=error_responses(404))
async def remove_target(name: str, admin: Admin, bench: BenchDep) -> Response:
    return json_response(await bench.notify.remove(name, actor=admin), headers=NO_STORE)


@router.post("/api/notify/{name}/test", responses=error_responses(404, 503))
async def test_target(name: str, bench: BenchDep) -> Response:
    """Send a test notification now: `status` is `ok` when the service took it, else `failed` with `error`."""
    return json_response(await bench.notify.test(name), headers=NO_STORE)
