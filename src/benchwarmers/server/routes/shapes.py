"""`/api/shapes`: the task shapes a decision model sorts requests into, set and removed (admin only)."""

from __future__ import annotations

from typing import Annotated

from starlette.responses import Response

from benchwarmers.server.deps import Admin, BenchDep, admin_body, admin_router
from benchwarmers.server.responses import json_response
from benchwarmers.server.schemas import ShapeBody

router = admin_router()


@router.get("/api/shapes")
async def get_shapes(bench: BenchDep) -> Response:
    return json_response((await bench.snapshot()).shapes)


@router.put("/api/shapes/{name}")
async def put_shape(
    name: str, actor: Admin, bench: BenchDep, body: Annotated[ShapeBody, admin_body(ShapeBody)]
) -> Response:
    return json_response(await bench.shapes.set_shape(name, body.description, actor=actor))


@router.delete("/api/shapes/{name}")
async def delete_shape(name: str, actor: Admin, bench: BenchDep) -> Response:
    return json_response(await bench.shapes.remove_shape(name, actor=actor))
