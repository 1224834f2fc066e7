"""What the dashboard's charts over time are read from: seated seats' small columns and current verdicts.

Never an answer, an error text or a request: the time, model, shape, status and seconds of each seat,
and whether its current verdict called it useful. Bucketing and the arithmetic are the caller's
(bench/evidence/series.py), in Python: local calendar days are not portable SQL.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import ColumnElement, and_, select
from sqlalchemy.ext.asyncio import AsyncConnection

from benchwarmers.store.calls import NOT_CALLED, SEATED_KINDS
from benchwarmers.store.schema import seats, verdicts

_CURRENT = and_(verdicts.c.call == seats.c.call, verdicts.c.current.is_(True))


async def seated_since(conn: AsyncConnection, since: float, shape: str | None = None) -> list[dict[str, Any]]:
    """Every member, nominee and explorer seat whose model was called at or after `since` (one shape's
    when `shape` is given), oldest first: `at`, `alias`, `shape`, `status`, `seconds`, and `useful` (its
    current verdict's, None when it has none). The leaderboard counts the same seats (store/counts.py)."""
    where: ColumnElement[bool] = and_(
        seats.c.seat.in_(SEATED_KINDS), seats.c.status.not_in(NOT_CALLED), seats.c.created_at >= since
    )
    if shape is not None:
        where = and_(where, seats.c.shape == shape)
    query = (
        select(
            seats.c.created_at.label("at"),
            seats.c.alias,
            seats.c.shape,
            seats.c.status,
            seats.c.seconds,
            verdicts.c.useful,
        )
        .outerjoin(verdicts, _CURRENT)
        .where(where)
        .order_by(seats.c.created_at, seats.c.call)
    )
    return [dict(row._mapping) for row in await conn.execute(query)]
