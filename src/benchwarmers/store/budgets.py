"""What a daily budget has spent since its reset: panels (reserved or recorded) and the tokens their
seats reported, per collection or per caller (a gateway key, the suite).

A reserved panel counts at once (its seats are about to be called); a reservation dropped because its
panel failed before any seat was called is deleted, so it does not. A request a budget refused never
reserved a panel.
"""

from __future__ import annotations

from sqlalchemy import ColumnElement, Integer, func, select
from sqlalchemy.ext.asyncio import AsyncConnection

from benchwarmers.store.schema import panels, seats


def _tokens() -> ColumnElement[int]:
    # Seats' usage as the providers reported it: total_tokens, else prompt plus completion.
    usage = seats.c.usage
    total = usage["total_tokens"].as_integer()
    parts = usage["prompt_tokens"].as_integer() + usage["completion_tokens"].as_integer()
    return func.coalesce(func.sum(func.coalesce(total, parts, 0)), 0).cast(Integer)


async def spent(
    conn: AsyncConnection,
    *,
    since: float,
    collection: str | None = None,
    caller: str | None = None,
    tokens: bool = True,
) -> tuple[int, int]:
    """(panels, tokens) since `since` on the collection, or by the caller (exactly one is given).
    The tokens are summed only when asked (a token budget): the panels' count reads one index, the
    sum every seat of the day's panels."""
    column, value = (panels.c.collection, collection) if collection is not None else (panels.c.caller, caller)
    where = (column == value) & (panels.c.created_at >= since)
    count = (await conn.execute(select(func.count()).select_from(panels).where(where))).scalar_one()
    if not tokens:
        return int(count), 0
    joined = seats.join(panels, seats.c.panel_id == panels.c.id)
    used = (await conn.execute(select(_tokens()).select_from(joined).where(where))).scalar_one()
    return int(count), int(used or 0)
