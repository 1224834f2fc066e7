"""What the evidence is read from: seated seats with their current verdicts, and the pinned roles."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from sqlalchemy import and_, delete, func, select
from sqlalchemy.ext.asyncio import AsyncConnection

from benchwarmers.store.calls import NOT_CALLED, SEATED_KINDS
from benchwarmers.store.schema import panels, roles, seats, verdicts

_CURRENT = and_(verdicts.c.call == seats.c.call, verdicts.c.current.is_(True))


async def seat_evidence(conn: AsyncConnection, since: float | None = None) -> list[dict[str, Any]]:
    """Every member, nominee and explorer seat since `since`, with its current verdict (or None).

    Answers are not loaded, only their length in characters; merger and decision seats are left
    out because they answer a different question than the prompt, and seats whose model was not
    called (paced, cooling, retired) because they say nothing of the model.
    """
    query = (
        select(
            seats.c.call,
            seats.c.panel_id,
            seats.c.seat,
            seats.c.alias,
            seats.c.endpoint,
            seats.c.shape,
            seats.c.status,
            seats.c.error_kind,
            seats.c.truncated,
            seats.c.seconds,
            seats.c.caller,
            seats.c.created_at,
            func.length(seats.c.answer).label("length"),
            verdicts.c.useful,
            verdicts.c.real,
            verdicts.c["false"].label("false_claims"),
            verdicts.c.caller.label("judge"),
            verdicts.c.created_at.label("judged_at"),
            verdicts.c.source,
        )
        .outerjoin(verdicts, _CURRENT)
        .where(and_(seats.c.seat.in_(SEATED_KINDS), seats.c.status.not_in(NOT_CALLED)))
        .order_by(seats.c.created_at, seats.c.call)
    )
    if since is not None:
        query = query.where(seats.c.created_at >= since)
    return [dict(row._mapping) for row in await conn.execute(query)]


async def newest_verdict(conn: AsyncConnection) -> int:
    """The newest verdict's id: it moves with every verdict written, replacements included."""
    return int(await conn.scalar(select(func.max(verdicts.c.id))) or 0)


async def iter_judged(conn: AsyncConnection) -> AsyncIterator[dict[str, Any]]:
    """Every seat with a current verdict, oldest first, with its panel's redacted request."""
    query = (
        select(
            seats.c.call,
            seats.c.panel_id,
            seats.c.seat,
            seats.c.alias,
            seats.c.shape,
            seats.c.status,
            seats.c.answer,
            panels.c.request,
            verdicts.c.useful,
            verdicts.c.note,
            verdicts.c.real,
            verdicts.c["false"].label("false_claims"),
            verdicts.c.created_at.label("judged_at"),
            verdicts.c.source,
        )
        .join(verdicts, _CURRENT)
        .join(panels, panels.c.id == seats.c.panel_id)
        .order_by(seats.c.created_at, seats.c.panel_id, seats.c.position)
    )
    for row in await conn.execute(query):
        yield dict(row._mapping)


async def false_claims(conn: AsyncConnection, alias: str, limit: int) -> list[dict[str, Any]]:
    """The claims current verdicts marked false in `alias`'s answers (seats and merges), newest
    verdict first: one row per claim, at most `limit`."""
    query = (
        select(
            seats.c.call,
            seats.c.panel_id,
            seats.c.seat,
            seats.c.shape,
            verdicts.c["false"].label("false_claims"),
            verdicts.c.note,
            verdicts.c.caller,
            verdicts.c.created_at,
        )
        .join(verdicts, _CURRENT)
        .where(seats.c.alias == alias)
        .order_by(verdicts.c.created_at.desc(), verdicts.c.id.desc())
    )
    found: list[dict[str, Any]] = []
    # Whether a JSON list is empty is not portable SQL: verdicts without false claims are skipped here.
    async with conn.stream(query) as rows:
        async for row in rows:
            for claim in row.false_claims or []:
                if len(found) == limit:
                    return found
                found.append(
                    {
                        "claim": claim,
                        "call": row.call,
                        "panel": row.panel_id,
                        "seat": row.seat,
                        "shape": row.shape,
                        "note": row.note,
                        "judge": row.caller,
                        "at": row.created_at,
                    }
                )
    return found


async def has_seats(conn: AsyncConnection, alias: str) -> bool:
    return await conn.scalar(select(seats.c.call).where(seats.c.alias == alias).limit(1)) is not None


# -- roles: the user's pins (role "primary" per shape) ------------------------------------------


async def list_roles(conn: AsyncConnection) -> list[dict[str, Any]]:
    query = select(roles.c.role, roles.c.shape, roles.c.alias).order_by(roles.c.role, roles.c.shape)
    return [dict(row._mapping) for row in await conn.execute(query)]


async def get_role(conn: AsyncConnection, role: str, shape: str) -> str | None:
    query = select(roles.c.alias).where(and_(roles.c.role == role, roles.c.shape == shape))
    return await conn.scalar(query)


async def put_role(conn: AsyncConnection, role: str, shape: str, alias: str) -> None:
    where = and_(roles.c.role == role, roles.c.shape == shape)
    updated = await conn.execute(roles.update().where(where).values(alias=alias))
    if updated.rowcount == 0:
        await conn.execute(roles.insert().values(role=role, shape=shape, alias=alias))


async def delete_role(conn: AsyncConnection, role: str, shape: str) -> None:
    await conn.execute(delete(roles).where(and_(roles.c.role == role, roles.c.shape == shape)))
