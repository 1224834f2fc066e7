"""Collection rows."""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from sqlalchemy import Row, delete, select
from sqlalchemy.ext.asyncio import AsyncConnection

from benchwarmers.store.records import Collection, CollectionFields
from benchwarmers.store.schema import collections


def collection_fields(collection: Mapping[str, Any]) -> CollectionFields:
    """The fields the user sets (what an export holds) from a stored collection or its row."""
    return {
        "name": collection["name"],
        "description": collection["description"],
        "tags": collection["tags"],
        "members": collection["members"],
        "shape": collection["shape"],
        "reply": collection["reply"],
        "merger": collection["merger"],
        "max_explorers": collection["max_explorers"],
        "max_calls": collection["max_calls"],
        "auto_swap": bool(collection.get("auto_swap", False)),
        "require_tags": list(collection.get("require_tags") or []),
        "exclude_tags": list(collection.get("exclude_tags") or []),
        "daily_panels": collection.get("daily_panels"),
        "daily_tokens": collection.get("daily_tokens"),
        "stand_ins": bool(collection.get("stand_ins", False)),
    }


def _collection(row: Row[Any]) -> Collection:
    data = row._asdict()
    return {**collection_fields(data), "created_at": data["created_at"]}


async def list_collections(conn: AsyncConnection) -> list[Collection]:
    rows = await conn.execute(select(collections).order_by(collections.c.name))
    return [_collection(r) for r in rows]


async def get_collection(conn: AsyncConnection, name: str) -> Collection | None:
    row = (await conn.execute(select(collections).where(collections.c.name == name))).first()
    return _collection(row) if row else None


async def insert_collection(conn: AsyncConnection, values: CollectionFields) -> None:
    now = time.time()
    await conn.execute(collections.insert().values(created_at=now, updated_at=now, **values))


async def update_collection(conn: AsyncConnection, name: str, values: Mapping[str, Any]) -> None:
    await conn.execute(collections.update().where(collections.c.name == name).values(updated_at=time.time(), **values))


async def delete_collection(conn: AsyncConnection, name: str) -> None:
    await conn.execute(delete(collections).where(collections.c.name == name))
