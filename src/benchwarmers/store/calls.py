"""The call log: panels, their seats, and the verdicts on each seat."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

from sqlalchemy import and_, bindparam, func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection

from benchwarmers.store.records import ListedPanel, LoggedSeat, PanelRow, PublicVerdict, Replay, SeatRow
from benchwarmers.store.schema import panels, seats, verdicts

SEATED_KINDS = ("member", "nominee", "explorer")


async def insert_panel(conn: AsyncConnection, panel: PanelRow, seat_rows: Sequence[SeatRow]) -> None:
    await conn.execute(panels.insert().values(**panel))
    if seat_rows:
        await conn.execute(seats.insert(), list(seat_rows))


class PanelIdTaken(Exception):
    """Another process reserved this panel id first."""


async def reserve_panels(conn: AsyncConnection, panel_rows: Sequence[Mapping[str, Any]]) -> None:
    """Reserve panel ids before their seats are called: a row without a response (not listed yet)."""
    if not panel_rows:
        return
    try:
        await conn.execute(panels.insert(), list(panel_rows))
    except IntegrityError:
        raise PanelIdTaken(", ".join(p["id"] for p in panel_rows)) from None


async def finish_panels(conn: AsyncConnection, panel_rows: Sequence[PanelRow], seat_rows: Sequence[SeatRow]) -> None:
    """Fill in reserved panels and write all their seats, in two statements (the group commit)."""
    if panel_rows:
        query = panels.update().where(panels.c.id == bindparam("panel_key"))
        await conn.execute(
            query, [{**{k: v for k, v in p.items() if k != "id"}, "panel_key": p["id"]} for p in panel_rows]
        )
    if seat_rows:
        await conn.execute(seats.insert(), list(seat_rows))


async def drop_reservation(conn: AsyncConnection, panel_id: str) -> None:
    """A reserved panel that was refused before any seat was called."""
    await conn.execute(panels.delete().where(and_(panels.c.id == panel_id, panels.c.response.is_(None))))


async def set_panel_response(conn: AsyncConnection, panel_id: str, response: Any) -> None:
    await conn.execute(panels.update().where(panels.c.id == panel_id).values(response=response))


async def find_replay(
    conn: AsyncConnection, *, caller: str, request_hash: str, idempotency_key: str | None, since: float
) -> Replay | None:
    """The recorded reply to the same request from the same caller, if one is recent enough."""
    # An Idempotency-Key names the request; without one, the same body from the same caller does.
    match = panels.c.idempotency_key == idempotency_key if idempotency_key else panels.c.request_hash == request_hash
    query = (
        select(panels.c.id, panels.c.response)
        .where(and_(panels.c.caller == caller, match, panels.c.created_at >= since, panels.c.response.is_not(None)))
        .order_by(panels.c.created_at.desc())
        .limit(1)
    )
    row = (await conn.execute(query)).first()
    return {"panel": row.id, "response": row.response} if row else None


async def last_seated(conn: AsyncConnection) -> dict[tuple[str, str], float]:
    """(alias, shape) → when that model last sat a seat on that shape."""
    query = (
        select(seats.c.alias, seats.c.shape, func.max(seats.c.created_at))
        .where(seats.c.seat.in_(SEATED_KINDS))
        .group_by(seats.c.alias, seats.c.shape)
    )
    return {(alias, shape): at for alias, shape, at in await conn.execute(query)}


async def verdict_counts(conn: AsyncConnection) -> dict[tuple[str, str], tuple[int, int]]:
    """(alias, shape) → (useful, not useful) over current verdicts on seats (not on merges)."""
    query = (
        select(seats.c.alias, seats.c.shape, verdicts.c.useful, func.count())
        .join(verdicts, verdicts.c.call == seats.c.call)
        .where(verdicts.c.current.is_(True) & seats.c.seat.in_(SEATED_KINDS))
        .group_by(seats.c.alias, seats.c.shape, verdicts.c.useful)
    )
    counts: dict[tuple[str, str], tuple[int, int]] = {}
    for alias, shape, useful, n in await conn.execute(query):
        good, bad = counts.get((alias, shape), (0, 0))
        counts[(alias, shape)] = (good + n, bad) if useful else (good, bad + n)
    return counts


async def get_seat(conn: AsyncConnection, call: str) -> dict | None:
    row = (await conn.execute(select(seats).where(seats.c.call == call))).first()
    return dict(row._mapping) if row else None


async def current_verdict(conn: AsyncConnection, call: str) -> dict | None:
    query = select(verdicts).where(and_(verdicts.c.call == call, verdicts.c.current.is_(True)))
    row = (await conn.execute(query)).first()
    return dict(row._mapping) if row else None


async def insert_verdict(conn: AsyncConnection, verdict: dict) -> None:
    """Retire the current verdict on this call (it stays in history) and record the new one."""
    await conn.execute(
        verdicts.update()
        .where(and_(verdicts.c.call == verdict["call"], verdicts.c.current.is_(True)))
        .values(current=False)
    )
    await conn.execute(verdicts.insert().values(created_at=time.time(), current=True, **verdict))


async def verdict_history(conn: AsyncConnection, call: str) -> list[dict]:
    rows = await conn.execute(select(verdicts).where(verdicts.c.call == call).order_by(verdicts.c.id))
    return [dict(r._mapping) for r in rows]


def _verdict_public(row: dict | None) -> PublicVerdict | None:
    if row is None:
        return None
    return {
        "useful": row["useful"],
        "note": row["note"],
        "real": row["real"],
        "false": row["false"],
        "caller": row["caller"],
        "at": row["created_at"],
    }


async def list_panels(
    conn: AsyncConnection,
    *,
    limit: int = 20,
    before: float | None = None,
    owed: bool = False,
    caller: str | None = None,
    panel_id: str | None = None,
) -> list[ListedPanel]:
    """Recent panels, newest first, each with its seats and their current verdicts."""
    query = select(panels).where(panels.c.response.is_not(None)).order_by(panels.c.created_at.desc()).limit(limit)
    if before is not None:
        query = query.where(panels.c.created_at < before)
    if caller is not None:
        query = query.where(panels.c.caller == caller)
    if panel_id is not None:
        query = query.where(panels.c.id == panel_id)
    if owed:
        unjudged = (
            select(seats.c.panel_id)
            .outerjoin(verdicts, and_(verdicts.c.call == seats.c.call, verdicts.c.current.is_(True)))
            .where(and_(seats.c.status != "error", verdicts.c.id.is_(None), seats.c.seat != "decision"))
        )
        query = query.where(panels.c.id.in_(unjudged))
    panel_rows = [dict(r._mapping) for r in await conn.execute(query)]
    if not panel_rows:
        return []
    ids = [p["id"] for p in panel_rows]
    seat_query = (
        select(seats, verdicts)
        .outerjoin(verdicts, and_(verdicts.c.call == seats.c.call, verdicts.c.current.is_(True)))
        .where(seats.c.panel_id.in_(ids))
        .order_by(seats.c.panel_id, seats.c.position)
    )
    by_panel: dict[str, list[LoggedSeat]] = {pid: [] for pid in ids}
    for row in await conn.execute(seat_query):
        data = row._mapping
        verdict = None
        if data[verdicts.c.id] is not None:
            verdict = _verdict_public(
                {
                    "useful": data[verdicts.c.useful],
                    "note": data[verdicts.c.note],
                    "real": data[verdicts.c.real],
                    "false": data[verdicts.c.false],
                    "caller": data[verdicts.c.caller],
                    "created_at": data[verdicts.c.created_at],
                }
            )
        by_panel[data[seats.c.panel_id]].append(
            {
                "call": data[seats.c.call],
                "seat": data[seats.c.seat],
                "alias": data[seats.c.alias],
                "endpoint": data[seats.c.endpoint],
                "status": data[seats.c.status],
                "seconds": data[seats.c.seconds],
                "answer": data[seats.c.answer],
                "error": data[seats.c.error],
                "usage": data[seats.c.usage],
                "verdict": verdict,
            }
        )
    result: list[ListedPanel] = []
    for panel in panel_rows:
        # The decision call is logged like a seat but is not one: it is shown apart and never owed.
        decision = next((s for s in by_panel[panel["id"]] if s["seat"] == "decision"), None)
        panel_seats = [s for s in by_panel[panel["id"]] if s["seat"] != "decision"]
        judgeable = [s for s in panel_seats if s["status"] != "error"]
        result.append(
            {
                "id": panel["id"],
                "created": panel["created_at"],
                "collection": panel["collection"],
                "reply": panel["reply"],
                "shape": panel["shape"],
                "shape_by": panel["shape_by"],
                "caller": panel["caller"],
                "seconds": panel["seconds"],
                "note": panel["note"],
                "skipped": panel["skipped"],
                "request": panel["request"],
                "seats": panel_seats,
                "decision": decision,
                "owed": sum(1 for s in judgeable if s["verdict"] is None),
            }
        )
    return result


async def iter_seats(conn: AsyncConnection) -> AsyncIterator[dict]:
    query = (
        select(seats, panels.c.collection, panels.c.request)
        .join(panels, panels.c.id == seats.c.panel_id)
        .order_by(seats.c.created_at, seats.c.call)
    )
    for row in await conn.execute(query):
        yield dict(row._mapping)


async def iter_verdicts(conn: AsyncConnection) -> AsyncIterator[dict]:
    query = (
        select(verdicts, seats.c.alias, seats.c.shape, seats.c.panel_id)
        .join(seats, seats.c.call == verdicts.c.call)
        .order_by(verdicts.c.id)
    )
    for row in await conn.execute(query):
        yield dict(row._mapping)
