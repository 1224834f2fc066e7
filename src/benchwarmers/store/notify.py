"""Notification targets and deliveries: the rows behind "each new alert goes once to each target".

A delivery row is made for every alert raised after a target was added (`after_alert`) and still
unacknowledged when a drain first sees it; a sender takes rows with one UPDATE that only a row no one
else holds can match (`claim`, until `claimed_until`), so two workers or hosts never both send one.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import and_, case, func, literal, or_, select
from sqlalchemy.ext.asyncio import AsyncConnection

from benchwarmers.store.db import inserted_id
from benchwarmers.store.schema import alerts, notify_deliveries, notify_targets

_d = notify_deliveries.c


async def list_targets(conn: AsyncConnection) -> list[dict[str, Any]]:
    return [dict(row._mapping) for row in await conn.execute(select(notify_targets).order_by(notify_targets.c.name))]


async def get_target(conn: AsyncConnection, name: str) -> dict[str, Any] | None:
    row = (await conn.execute(select(notify_targets).where(notify_targets.c.name == name))).first()
    return dict(row._mapping) if row else None


async def add_target(conn: AsyncConnection, *, name: str, url_enc: bytes, label: str, now: float) -> int:
    """A new target; alerts already raised are not sent to it (only those raised from now on)."""
    newest = await conn.scalar(select(func.coalesce(func.max(alerts.c.id), 0)))
    values = {"name": name, "url_enc": url_enc, "label": label, "created_at": now, "after_alert": newest}
    return inserted_id(await conn.execute(notify_targets.insert().values(**values)))


async def remove_target(conn: AsyncConnection, target_id: int) -> None:
    await conn.execute(notify_deliveries.delete().where(_d.target_id == target_id))
    await conn.execute(notify_targets.delete().where(notify_targets.c.id == target_id))


async def queue_new(conn: AsyncConnection, now: float) -> int:
    """A delivery row for each (unacknowledged alert, target) pair that has none yet; how many."""
    pairs = (
        select(alerts.c.id, notify_targets.c.id, literal(0), literal(now))
        .select_from(alerts)
        .join(notify_targets, alerts.c.id > notify_targets.c.after_alert)
        .where(alerts.c.acknowledged_at.is_(None))
        .where(~select(_d.id).where(and_(_d.alert_id == alerts.c.id, _d.target_id == notify_targets.c.id)).exists())
    )
    insert = _insert_ignoring_duplicates(conn).from_select(["alert_id", "target_id", "attempts", "due_at"], pairs)
    return (await conn.execute(insert)).rowcount or 0


def _insert_ignoring_duplicates(conn: AsyncConnection) -> Any:
    # Two hosts on one PostgreSQL may queue the same pair at once: the second's row is dropped, not an error.
    if conn.dialect.name == "postgresql":
        from sqlalchemy.dialects import postgresql

        return postgresql.insert(notify_deliveries).on_conflict_do_nothing(index_elements=["alert_id", "target_id"])
    from sqlalchemy.dialects import sqlite

    return sqlite.insert(notify_deliveries).on_conflict_do_nothing(index_elements=["alert_id", "target_id"])


def _takeable(now: float) -> Any:
    return and_(
        _d.sent_at.is_(None),
        _d.gave_up_at.is_(None),
        _d.due_at <= now,
        or_(_d.claimed_until.is_(None), _d.claimed_until < now),
    )


async def claim_due(conn: AsyncConnection, claim: str, now: float, *, lease: float, limit: int) -> list[dict[str, Any]]:
    """Take up to `limit` due deliveries for `claim` until now + lease; each with its alert and sealed URL."""
    due = select(_d.id).where(_takeable(now)).order_by(_d.id).limit(limit).scalar_subquery()
    # The condition is repeated on the rows updated: PostgreSQL re-checks it on a row another
    # transaction claimed meanwhile, so a row is only ever taken by one claim.
    await conn.execute(
        notify_deliveries.update()
        .where(and_(_d.id.in_(due), _takeable(now)))
        .values(claim=claim, claimed_until=now + lease, attempts=_d.attempts + 1)
    )
    query = (
        select(
            _d.id,
            _d.attempts,
            alerts.c.id.label("alert_id"),
            alerts.c.kind,
            alerts.c.subject,
            alerts.c.message,
            alerts.c.created_at,
            notify_targets.c.name.label("target"),
            notify_targets.c.label,
            notify_targets.c.url_enc,
        )
        .join(alerts, alerts.c.id == _d.alert_id)
        .join(notify_targets, notify_targets.c.id == _d.target_id)
        .where(_d.claim == claim)
        .order_by(_d.id)
    )
    return [dict(row._mapping) for row in await conn.execute(query)]


async def mark_sent(conn: AsyncConnection, delivery_id: int, claim: str, now: float) -> None:
    await conn.execute(
        notify_deliveries.update()
        .where(and_(_d.id == delivery_id, _d.claim == claim))
        .values(sent_at=now, claim=None, claimed_until=None, last_error=None)
    )


async def mark_failed(
    conn: AsyncConnection, delivery_id: int, claim: str, *, error: str, retry_at: float | None, now: float
) -> None:
    """Release the row for a later try at `retry_at`, or give up on it (retry_at None)."""
    values: dict[str, Any] = {"claim": None, "claimed_until": None, "last_error": error[:200]}
    values.update({"due_at": retry_at} if retry_at is not None else {"gave_up_at": now})
    await conn.execute(notify_deliveries.update().where(and_(_d.id == delivery_id, _d.claim == claim)).values(**values))


async def deliveries(conn: AsyncConnection, target_id: int | None = None) -> list[dict[str, Any]]:
    """Every delivery row, oldest first (what was sent, what failed): for `notify list` and tests."""
    query = select(notify_deliveries).order_by(_d.id)
    if target_id is not None:
        query = query.where(_d.target_id == target_id)
    return [dict(row._mapping) for row in await conn.execute(query)]


async def delivery_counts(conn: AsyncConnection) -> dict[str, int]:
    """Deliveries by state: sent, pending (queued or waiting for a retry), failed (given up)."""
    state = case((_d.sent_at.is_not(None), "sent"), (_d.gave_up_at.is_not(None), "failed"), else_="pending").label(
        "state"
    )
    query = select(state, func.count()).group_by(state)
    return {str(name): int(count) for name, count in await conn.execute(query)}
