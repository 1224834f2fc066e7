"""What the dashboard's Gateway card reads besides `calls.list_panels`: the verdicts owed, and a
cheap look at the newest panels so an open page can tell when to fetch again (with
`evidence.newest_verdict`, which moves with every verdict)."""

from __future__ import annotations

from sqlalchemy import and_, func, select
from sqlalchemy.ext.asyncio import AsyncConnection

from benchwarmers.store.schema import panels, seats, verdicts


async def owed_count(conn: AsyncConnection) -> int:
    """Seats awaiting a verdict, as `list_panels` counts them per panel: every answered seat
    (ok or empty, the merger's included) without a current verdict; decision calls never."""
    query = (
        select(func.count())
        .select_from(seats)
        .outerjoin(verdicts, and_(verdicts.c.call == seats.c.call, verdicts.c.current.is_(True)))
        .where(and_(seats.c.status != "error", seats.c.seat != "decision", verdicts.c.id.is_(None)))
    )
    return int(await conn.scalar(query) or 0)


async def newest_panel_ids(conn: AsyncConnection, limit: int = 20) -> list[str]:
    """The newest panels' ids (the created_at index, no seats read)."""
    query = select(panels.c.id).order_by(panels.c.created_at.desc()).limit(limit)
    return [row[0] for row in await conn.execute(query)]

