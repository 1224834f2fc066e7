"""Alerts: things the user should know about (a model went paid, is retiring, was retired for failing;
verdicts are owed), open until the user acknowledges them or the bench sees their cause go away
(`resolved_at`: a probe answered, the verdicts came)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import and_, func, select
from sqlalchemy.ext.asyncio import AsyncConnection

from benchwarmers.store.db import inserted_id
from benchwarmers.store.schema import alerts

_OPEN = and_(alerts.c.acknowledged_at.is_(None), alerts.c.resolved_at.is_(None))


async def open_alert(conn: AsyncConnection, kind: str, subject: str) -> dict[str, Any] | None:
    """The open alert (neither acknowledged nor resolved) of this kind about this subject, if any."""
    query = select(alerts).where(and_(alerts.c.kind == kind, alerts.c.subject == subject, _OPEN))
    row = (await conn.execute(query.limit(1))).first()
    return dict(row._mapping) if row else None


async def open_since(conn: AsyncConnection, kind: str, since: float) -> list[dict[str, Any]]:
    """Open alerts of this kind raised at or after `since`, oldest first."""
    query = select(alerts).where(and_(alerts.c.kind == kind, alerts.c.created_at >= since, _OPEN))
    return [dict(row._mapping) for row in await conn.execute(query.order_by(alerts.c.id))]


async def unresolved_alerts(conn: AsyncConnection, kind: str, subject: str) -> list[dict[str, Any]]:
    """Alerts of this kind about this subject whose cause the bench has not seen go away
    (open or acknowledged), oldest first."""
    query = select(alerts).where(
        and_(alerts.c.kind == kind, alerts.c.subject == subject, alerts.c.resolved_at.is_(None))
    )
    return [dict(row._mapping) for row in await conn.execute(query.order_by(alerts.c.id))]


async def raise_alert(conn: AsyncConnection, *, kind: str, subject: str, message: str, now: float) -> int | None:
    """Insert an alert unless the same one is still open; its id, or None when it was already open."""
    if await open_alert(conn, kind, subject) is not None:
        return None
    result = await conn.execute(alerts.insert().values(kind=kind, subject=subject, message=message, created_at=now))
    return inserted_id(result)


async def list_alerts(
    conn: AsyncConnection, *, include_acknowledged: bool = False, limit: int = 500
) -> list[dict[str, Any]]:
    """Newest first; only open ones unless asked (then acknowledged and resolved ones too)."""
    query = select(alerts).order_by(alerts.c.id.desc()).limit(limit)
    if not include_acknowledged:
        query = query.where(_OPEN)
    return [dict(row._mapping) for row in await conn.execute(query)]


async def get_alert(conn: AsyncConnection, alert_id: int) -> dict[str, Any] | None:
    row = (await conn.execute(select(alerts).where(alerts.c.id == alert_id))).first()
    return dict(row._mapping) if row else None


async def acknowledge(conn: AsyncConnection, alert_id: int, now: float) -> None:
    await conn.execute(alerts.update().where(alerts.c.id == alert_id).values(acknowledged_at=now))


async def resolve(conn: AsyncConnection, alert_ids: list[int], now: float) -> None:
    if alert_ids:
        await conn.execute(alerts.update().where(alerts.c.id.in_(alert_ids)).values(resolved_at=now))


async def open_counts(conn: AsyncConnection) -> dict[str, int]:
    """How many alerts of each kind are open (neither acknowledged nor resolved)."""
    query = select(alerts.c.kind, func.count()).where(_OPEN).group_by(alerts.c.kind)
    return {kind: int(count) for kind, count in await conn.execute(query)}
