"""What the bench's calls used: every call's model, collection, caller, time and reported usage.

Read for the cost report; the answers, errors and requests are never read here.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncConnection

from benchwarmers.store.schema import panels, seats


async def calls_since(conn: AsyncConnection, since: float | None) -> list[dict[str, Any]]:
    """Every call (seats, mergers and decision calls) made at or after `since` (None: ever), oldest
    first: `at`, `alias`, `endpoint`, `seat`, `status`, `caller`, `collection`, `usage` (None when the provider
    reported none)."""
    query = (
        select(
            seats.c.created_at.label("at"),
            seats.c.alias,
            seats.c.endpoint,
            seats.c.seat,
            seats.c.status,
            seats.c.caller,
            panels.c.collection,
            seats.c.usage,
        )
        .join(panels, panels.c.id == seats.c.panel_id)
        .order_by(seats.c.created_at, seats.c.call)
    )
    if since is not None:
        query = query.where(seats.c.created_at >= since)
    return [dict(row._mapping) for row in await conn.execute(query)]
