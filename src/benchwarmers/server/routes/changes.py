"""`/api/changes`: the changes log, newest first (admin only)."""

from __future__ import annotations

from typing import Annotated

from fastapi import Query
from starlette.responses import Response

from benchwarmers.server.deps import BenchDep, admin_router
from benchwarmers.server.params import Blank
from benchwarmers.server.responses import json_response

router = admin_router()


@router.get("/api/changes")
async def get_changes(
    bench: BenchDep,
    limit: Annotated[int, Query(ge=1, le=1000, description="How many changes, newest first.")] = 100,
    subject: Annotated[
        str | None, Blank, Query(description="Only changes to this kind of thing, e.g. collection.")
    ] = None,
) -> Response:
    rows = await bench.changes.list_changes(limit=limit, subject=subject)
    # Plain str keys: SQLAlchemy names some columns with a str subclass orjson will not take as a key.
    return json_response({"object": "list", "data": [{str(k): v for k, v in row.items()} for row in rows]})
