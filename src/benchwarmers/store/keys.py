"""Gateway key rows: a name, the key's SHA-256 and last four characters, scopes, times.

The key itself is never stored. A revoked key keeps its row (its name is on the calls it made), so
its name is never given to another key.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncConnection

from benchwarmers.store.schema import gateway_keys


async def list_keys(conn: AsyncConnection, *, include_revoked: bool = True) -> list[dict[str, Any]]:
    query = select(gateway_keys).order_by(gateway_keys.c.name)
    if not include_revoked:
        query = query.where(gateway_keys.c.revoked_at.is_(None))
    return [dict(row._mapping) for row in await conn.execute(query)]


async def get_key(conn: AsyncConnection, name: str) -> dict[str, Any] | None:
    row = (await conn.execute(select(gateway_keys).where(gateway_keys.c.name == name))).first()
    return dict(row._mapping) if row else None


async def insert_key(conn: AsyncConnection, **values: Any) -> None:
    await conn.execute(gateway_keys.insert().values(**values))


async def revoke_key(conn: AsyncConnection, name: str, at: float) -> None:
    await conn.execute(gateway_keys.update().where(gateway_keys.c.name == name).values(revoked_at=at))


async def touch_key(conn: AsyncConnection, sha256: str, at: float) -> None:
    await conn.execute(gateway_keys.update().where(gateway_keys.c.sha256 == sha256).values(last_used_at=at))


async def update_key(conn: AsyncConnection, name: str, values: dict[str, Any]) -> None:
    await conn.execute(gateway_keys.update().where(gateway_keys.c.name == name).values(**values))
