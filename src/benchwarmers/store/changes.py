"""The changes log: every config change with who, what, before, after and when.

The newest change's id is the config version: a running server compares it to what it
cached, which is how it sees edits made by the CLI without a restart.
"""

from __future__ import annotations

import time
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncConnection

from benchwarmers.store.schema import changes

CHANGED = "benchwarmers.config_changed"


async def record_change(
    conn: AsyncConnection,
    *,
    actor: str,
    subject: str,
    name: str,
    action: str,
    before: Any = None,
    after: Any = None,
) -> None:
    await conn.execute(
        changes.insert().values(
            at=time.time(), actor=actor, subject=subject, name=name, action=action, before=before, after=after
        )
    )
    # Tells the transaction's owner (Bench.write) to signal running servers once it commits.
    conn.info[CHANGED] = True


async def config_version(conn: AsyncConnection) -> int:
    """The newest change's id: it grows with every change, in any process."""
    return int(await conn.scalar(select(func.max(changes.c.id))) or 0)


async def list_changes(conn: AsyncConnection, limit: int = 100, subject: str | None = None) -> list[dict[str, Any]]:
    query = select(changes).order_by(changes.c.id.desc()).limit(limit)
    if subject:
        query = query.where(changes.c.subject == subject)
    return [dict(row._mapping) for row in await conn.execute(query)]
