"""Collection rows."""

from __future__ import annotations

import time
from typing import Any

from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncConnection

from benchwarmers.store.schema import collections

FIELDS = ("name", "description", "tags", "members", "shape", "reply", "merger", "max_explorers", "max_calls")


def _public(row: Any) -> dict:
    data = dict(row._mapping)
    return {field: data[field] for field in (*FIELDS, "created_at")}


async def list_collections(conn: AsyncConnection) -> list[dict]:
    rows = await conn.execute(select(collections).order_by(collections.c.name))
    return [_public(r) for r in rows]


async def get_collection(conn: AsyncConnection, name: str) -> dict | None:
    row = (await conn.execute(select(collections).where(collections.c.name == name))).first()
    return _public(row) if row else None


async def insert_collection(conn: AsyncConnection, values: dict) -> None:
    now = time.time()
    await conn.execute(collections.insert().values(created_at=now, updated_at=now, **values))


async def update_collection(conn: AsyncConnection, name: str, values: dict) -> None:
    await conn.execute(collections.update().where(collections.c.name == name).values(updated_at=time.time(), **values))


async def delete_collection(conn: AsyncConnection, name: str) -> None:
    await conn.execute(delete(collections).where(collections.c.name == name))
