"""`/api/collections`: the collections, listed with their explorer seats and combined window, made,
replaced and removed (admin only; every change is in the changes log).

Bodies are typed (`server/schemas.py`) and read within a cap; unknown fields are refused rather than
ignored, so a typo is never a silent no-op.
"""

from __future__ import annotations

from typing import Annotated

from starlette.responses import Response

from benchwarmers.bench.names import collection_name
from benchwarmers.errors import InvalidRequest
from benchwarmers.server.collection_views import collection_views
from benchwarmers.server.deps import Admin, BenchDep, admin_body, admin_router
from benchwarmers.server.responses import json_response
from benchwarmers.server.schemas import CollectionCreate, CollectionReplace, error_responses

router = admin_router()


@router.get("/api/collections")
async def get_collections(bench: BenchDep) -> Response:
    return json_response({"object": "list", "data": await collection_views(bench)})


@router.post("/api/collections", status_code=201, responses=error_responses(409))
async def create_collection(
    actor: Admin, bench: BenchDep, body: Annotated[CollectionCreate, admin_body(CollectionCreate)]
) -> Response:
    made = await bench.collections.add_collection(body.model_dump(exclude_unset=True), actor=actor)
    return json_response({**made, "warnings": await bench.collections.warnings(made)}, status=201)


@router.put("/api/collections/{name}")
async def replace_collection(
    name: str, actor: Admin, bench: BenchDep, body: Annotated[CollectionReplace, admin_body(CollectionReplace)]
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
