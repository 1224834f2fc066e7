"""Decision models: roster models that label a prompt's shape."""

from __future__ import annotations

import time
from typing import Any

from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncConnection

from benchwarmers.store.schema import decision_models


async def list_decision_models(conn: AsyncConnection) -> list[dict[str, Any]]:
    rows = await conn.execute(select(decision_models).order_by(decision_models.c.id))
    return [{"alias": r.alias, "kind": r.kind, "path": r.path} for r in rows]


async def add_decision_model(conn: AsyncConnection, alias: str, kind: str, path: str | None) -> None:
    await conn.execute(decision_models.insert().values(alias=alias, kind=kind, path=path, created_at=time.time()))


async def remove_decision_model(conn: AsyncConnection, alias: str) -> int:
    result = await conn.execute(delete(decision_models).where(decision_models.c.alias == alias))
    return result.rowcount
