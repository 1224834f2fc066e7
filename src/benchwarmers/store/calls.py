"""The call log: panels, their seats, and the verdicts on each seat."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any

from sqlalchemy import ColumnElement, Select, Text, and_, bindparam, cast, func, literal_column, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from benchwarmers.nouns.seats import ANSWERED as ANSWERED
from benchwarmers.nouns.seats import NOT_CALLED as NOT_CALLED
from benchwarmers.nouns.seats import SEATED_KINDS as SEATED_KINDS
from benchwarmers.nouns.seats import SeatKind, SeatStatus
from benchwarmers.store.bulk import insert_rows, update_rows
from benchwarmers.store.records import ListedPanel, LoggedSeat, PanelRow, PublicVerdict, Replay, SeatRow
from benchwarmers.store.schema import alerts, models, panels, seats, verdicts

OWED = (SeatStatus.ok,)  # a verdict is owed only on a real answer: an empty one is not useful, nothing to read
FAILED = SeatStatus.error  # the call failed: no answer, so no verdict
RETIRED = SeatStatus.retired  # a member or nominee recorded in its seat but not asked: it kept failing
RECLAIM_TRIES = 40  # a purge's log-emptying checkpoint is tried for up to ~2 s


async def insert_panel(conn: AsyncConnection, panel: PanelRow, seat_rows: Sequence[SeatRow]) -> None:
    await conn.execute(panels.insert().values(**panel))
    if seat_rows:
        await conn.execute(seats.insert(), list(seat_rows))


class PanelIdTaken(Exception):
    """Another process reserved this panel id first."""


async def reserve_panels(conn: AsyncConnection, panel_rows: Sequence[Mapping[str, Any]]) -> None:
    """Reserve panel ids before their seats are called: a row without a response (not listed yet)."""
    try:
        await insert_rows(conn, panels, panel_rows)
    except IntegrityError:
        raise PanelIdTaken(", ".join(p["id"] for p in panel_rows)) from None


async def finish_panels(conn: AsyncConnection, panel_rows: Sequence[PanelRow], seat_rows: Sequence[SeatRow]) -> None:
    """Fill in reserved panels and write all their seats, in two statements (the group commit)."""
    await update_rows(conn, panels, "id", panel_rows)
    await insert_rows(conn, seats, seat_rows)


async def drop_reservation(conn: AsyncConnection, panel_id: str) -> None:
    """A reserved panel that was refused before any seat was called."""
    await drop_reservations(conn, [panel_id])


async def drop_reservations(conn: AsyncConnection, panel_ids: Sequence[str]) -> None:
    """Reserved panels that failed before they were recorded (a recorded panel is never dropped)."""
    await conn.execute(panels.delete().where(and_(panels.c.id.in_(panel_ids), panels.c.response.is_(None))))


async def set_panel_response(conn: AsyncConnection, panel_id: str, response: Any) -> None:
    await conn.execute(panels.update().where(panels.c.id == panel_id).values(response=response))


async def find_replay(
    conn: AsyncConnection, *, caller: str, request_hash: str, idempotency_key: str | None, since: float
) -> Replay | None:
    """The recorded reply to the same request from the same caller, if one is recent enough."""
    # An Idempotency-Key names the request; without one, the same body from the same caller does.
    match = panels.c.idempotency_key == idempotency_key if idempotency_key else panels.c.request_hash == request_hash
    query = (
        select(panels.c.id, panels.c.response, panels.c.request_hash)
        .where(and_(panels.c.caller == caller, match, panels.c.created_at >= since, panels.c.response.is_not(None)))
        .order_by(panels.c.created_at.desc())
        .limit(1)
    )
    row = (await conn.execute(query)).first()
    return {"panel": row.id, "response": row.response, "request_hash": row.request_hash} if row else None


async def find_inflight(
    conn: AsyncConnection, *, caller: str, request_hash: str, since: float
) -> tuple[str, float] | None:
    """The newest panel reserved for the same request from the same caller and not finished yet
    (another process is running it), if any: its id and when it was reserved."""
    query = (
        select(panels.c.id, panels.c.created_at)
        .where(
            and_(
                panels.c.caller == caller,
                panels.c.request_hash == request_hash,
                panels.c.created_at >= since,
                panels.c.response.is_(None),
            )
        )
        .order_by(panels.c.created_at.desc())
        .limit(1)
    )
    row = (await conn.execute(query)).first()
    return (row.id, row.created_at) if row is not None else None


async def panel_outcome(conn: AsyncConnection, panel_id: str) -> tuple[bool, Any]:
    """(whether the panel's row exists, its recorded reply or None while it runs)."""
    row = (await conn.execute(select(panels.c.response).where(panels.c.id == panel_id))).first()
    return (row is not None, row.response if row is not None else None)


async def seated_since(conn: AsyncConnection, since: float) -> dict[tuple[str, str], float]:
    """(alias, shape) → the newest seat recorded after `since` (any process's), for models that sat."""
    group: tuple[ColumnElement[Any], ...] = (seats.c.alias, seats.c.shape)
    if conn.dialect.name == "sqlite":
        # Grouped by plain columns, SQLite walked the whole (alias, shape, ...) index to spare itself
        # the grouping (it has no statistics): every seat ever recorded, once a second, ~1,000 page
        # reads at 75,000 seats. `+column` rules that out: the created_at range, a few rows.
        group = (literal_column("+seats.alias"), literal_column("+seats.shape"))
    query = (
        select(seats.c.alias, seats.c.shape, func.max(seats.c.created_at))
        .where(and_(seats.c.created_at > since, seats.c.seat.in_(SEATED_KINDS), seats.c.status.not_in(NOT_CALLED)))
        .group_by(*group)
    )
    return {(alias, shape): at for alias, shape, at in await conn.execute(query)}


async def last_seated(conn: AsyncConnection) -> dict[tuple[str, str], float]:
    """(alias, shape) → when that model last sat a seat on that shape."""
    query = (
        select(seats.c.alias, seats.c.shape, func.max(seats.c.created_at))
        .where(and_(seats.c.seat.in_(SEATED_KINDS), seats.c.status.not_in(NOT_CALLED)))
        .group_by(seats.c.alias, seats.c.shape)
    )
    return {(alias, shape): at for alias, shape, at in await conn.execute(query)}


async def verdict_sequence(conn: AsyncConnection) -> list[tuple[str, str, bool, str, float]]:
    """Every current verdict on a seat as (alias, shape, useful, source, created_at), in the order
    they were given (the verdicts' primary key): what the change detector replays."""
    query = (
        select(seats.c.alias, seats.c.shape, verdicts.c.useful, verdicts.c.source, verdicts.c.created_at)
        .join(seats, seats.c.call == verdicts.c.call)
        .where(verdicts.c.current.is_(True) & seats.c.seat.in_(SEATED_KINDS))
        .order_by(verdicts.c.id)
    )
    return [(alias, shape, bool(useful), source, at) for alias, shape, useful, source, at in await conn.execute(query)]


async def get_seat(conn: AsyncConnection, call: str) -> dict[str, Any] | None:
    row = (await conn.execute(select(seats).where(seats.c.call == call))).first()
    return dict(row._mapping) if row else None


async def current_verdict(conn: AsyncConnection, call: str) -> dict[str, Any] | None:
    query = select(verdicts).where(and_(verdicts.c.call == call, verdicts.c.current.is_(True)))
    row = (await conn.execute(query)).first()
    return dict(row._mapping) if row else None


async def insert_verdict(conn: AsyncConnection, verdict: dict[str, Any]) -> None:
    """Retire the current verdict on this call (it stays in history) and record the new one."""
    await conn.execute(
        verdicts.update()
        .where(and_(verdicts.c.call == verdict["call"], verdicts.c.current.is_(True)))
        .values(current=False)
    )
    await conn.execute(verdicts.insert().values(created_at=time.time(), current=True, **verdict))


async def verdict_history(conn: AsyncConnection, call: str) -> list[dict[str, Any]]:
    rows = await conn.execute(select(verdicts).where(verdicts.c.call == call).order_by(verdicts.c.id))
    return [dict(r._mapping) for r in rows]


def _verdict_public(row: dict[str, Any] | None) -> PublicVerdict | None:
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


def _panel_filter(
    query: Select[*tuple[Any, ...]],
    *,
    owed: bool = False,
    caller: str | None = None,
    collection: str | None = None,
    alias: str | None = None,
    status: str | None = None,
    text: str | None = None,
) -> Select[*tuple[Any, ...]]:
    """The call log's filters, on a query over `panels`: each narrows to panels that match."""
    if caller is not None:
        query = query.where(panels.c.caller == caller)
    if collection is not None:
        query = query.where(panels.c.collection == collection)
    if alias is not None:
        query = query.where(panels.c.id.in_(select(seats.c.panel_id).where(seats.c.alias == alias)))
    if status is not None:
        query = query.where(panels.c.id.in_(select(seats.c.panel_id).where(seats.c.status == status)))
    if text:
        # The stored request is redacted JSON text: a case-insensitive substring of it (the prompt).
        escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        query = query.where(cast(panels.c.request, Text).ilike(f"%{escaped}%", escape="\\"))
    if owed:
        unjudged = (
            select(seats.c.panel_id)
            .outerjoin(verdicts, and_(verdicts.c.call == seats.c.call, verdicts.c.current.is_(True)))
            .where(and_(seats.c.status.in_(OWED), verdicts.c.id.is_(None), seats.c.seat != SeatKind.decision))
        )
        query = query.where(panels.c.id.in_(unjudged))
    return query


async def count_panels(conn: AsyncConnection, **filters: Any) -> int:
    """How many recorded panels match the call log's filters (`_panel_filter`)."""
    query = select(func.count()).select_from(panels).where(panels.c.response.is_not(None))
    return int(await conn.scalar(_panel_filter(query, **filters)) or 0)


async def running_panels(conn: AsyncConnection, since: float, caller: str | None = None) -> list[dict[str, Any]]:
    """Panels reserved since `since` whose seats are still running (no response yet), newest first."""
    query = (
        select(panels.c.id, panels.c.created_at, panels.c.collection, panels.c.shape, panels.c.caller, panels.c.request)
        .where(and_(panels.c.response.is_(None), panels.c.created_at >= since))
        .order_by(panels.c.created_at.desc())
    )
    if caller is not None:
        query = query.where(panels.c.caller == caller)
    return [dict(r._mapping) for r in await conn.execute(query)]


async def list_panels(
    conn: AsyncConnection,
    *,
    limit: int = 20,
    before: float | None = None,
    after: float | None = None,
    owed: bool = False,
    caller: str | None = None,
    panel_id: str | None = None,
    collection: str | None = None,
    alias: str | None = None,
    status: str | None = None,
    text: str | None = None,
) -> list[ListedPanel]:
    """Recent panels, newest first, each with its seats and their current verdicts; with `after`, the
    `limit` panels just newer than that time (still listed newest first)."""
    order = panels.c.created_at.asc() if after is not None else panels.c.created_at.desc()
    query = select(panels).where(panels.c.response.is_not(None)).order_by(order).limit(limit)
    if before is not None:
        query = query.where(panels.c.created_at < before)
    if after is not None:
        query = query.where(panels.c.created_at > after)
    if panel_id is not None:
        query = query.where(panels.c.id == panel_id)
    query = _panel_filter(query, owed=owed, caller=caller, collection=collection, alias=alias, status=status, text=text)
    panel_rows = [dict(r._mapping) for r in await conn.execute(query)]
    if after is not None:
        panel_rows.reverse()
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
                "error_kind": data[seats.c.error_kind],
                "frees_at": data[seats.c.frees_at],
                "usage": data[seats.c.usage],
                "tool_calls": data[seats.c.tool_calls] or [],
                "truncated_at": data[seats.c.truncated_at],
                "truncated": data[seats.c.truncated],
                "stands_in_for": data[seats.c.stands_in_for],
                "verdict": verdict,
            }
        )
    result: list[ListedPanel] = []
    for panel in panel_rows:
        # The decision call is logged like a seat but is not one: it is shown apart and never owed.
        # When the first decision model failed the next was asked: the last one asked decided.
        decision = next((s for s in reversed(by_panel[panel["id"]]) if s["seat"] == SeatKind.decision), None)
        panel_seats = [s for s in by_panel[panel["id"]] if s["seat"] != SeatKind.decision]
        judgeable = [s for s in panel_seats if s["status"] in OWED]
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


async def iter_seats(conn: AsyncConnection) -> AsyncIterator[dict[str, Any]]:
    query = (
        select(seats, panels.c.collection, panels.c.request)
        .join(panels, panels.c.id == seats.c.panel_id)
        .order_by(seats.c.created_at, seats.c.call)
    )
    for row in await conn.execute(query):
        yield dict(row._mapping)


async def iter_verdicts(conn: AsyncConnection) -> AsyncIterator[dict[str, Any]]:
    query = (
        select(verdicts, seats.c.alias, seats.c.shape, seats.c.panel_id)
        .join(seats, seats.c.call == verdicts.c.call)
        .order_by(verdicts.c.id)
    )
    for row in await conn.execute(query):
        yield dict(row._mapping)


# -- retention: forgetting old prompts and answers ------------------------------------------------

PURGED_CLAIM = "[purged]"
LAST_ERROR = "; last error: "  # how a "failing" alert quotes the model's last error
PURGE_BATCH = 500  # panels a transaction: about 0.1 s of write lock each, measured on 100,000 seats


def _unpurged_before(cutoff: float) -> Select[int]:
    """Panels older than `cutoff` whose prompt is still stored (a purged panel's request_hash is '')."""
    return select(panels.c.id).where(and_(panels.c.created_at < cutoff, panels.c.request_hash != ""))


async def purgeable(conn: AsyncConnection, cutoff: float) -> dict[str, int]:
    """How many panels, seats and verdicts `purge_before(cutoff)` would empty."""
    old = _unpurged_before(cutoff)
    judged = select(func.count()).select_from(verdicts.join(seats, seats.c.call == verdicts.c.call))
    return {
        "panels": int(await conn.scalar(select(func.count()).select_from(old.subquery())) or 0),
        "seats": int(await conn.scalar(select(func.count()).where(seats.c.panel_id.in_(old))) or 0),
        "verdicts": int(await conn.scalar(judged.where(seats.c.panel_id.in_(old))) or 0),
    }


async def purge_before(
    write: Callable[[], AbstractAsyncContextManager[AsyncConnection]],
    cutoff: float,
    now: float,
    progress: Callable[[dict[str, int]], None] | None = None,
) -> dict[str, int]:
    """Empty what panels older than `cutoff` said, keeping what the evidence is computed from;
    how many panels, seats and verdicts were emptied.

    Gone: the request (prompt, options, tools), the recorded reply, the request hash and
    idempotency key, the panel's note; each seat's answer, tool calls and error text; each verdict's note and
    the text of its claims. Error text kept elsewhere goes too once as old: a model's last error
    (unless it failed again since the cutoff) and the last error quoted by a "failing" alert.
    Kept: panel ids, times, collection, shape, caller, skipped seats; each seat's alias,
    endpoint, shape, status, error kind, seconds and usage; each verdict's usefulness, judge,
    time, and how many claims were real and false (a claim becomes PURGED_CLAIM), which is all
    the leaderboard and the pairwise strengths read.

    `write()` opens one transaction; each takes PURGE_BATCH panels, oldest first, so that a
    server recording panels meanwhile waits a moment at most. `progress` hears each batch's counts.
    """
    total = dict.fromkeys(("panels", "seats", "verdicts"), 0)
    while True:
        async with write() as conn:
            counts = await _purge_batch(conn, cutoff, now)
            if counts["panels"] < PURGE_BATCH:
                await _forget_old_errors(conn, cutoff)
        total = {kind: total[kind] + counts[kind] for kind in total}
        if progress is not None:
            progress(counts)
        if counts["panels"] < PURGE_BATCH:
            return total


async def _purge_batch(conn: AsyncConnection, cutoff: float, now: float) -> dict[str, int]:
    ids = list(await conn.scalars(_unpurged_before(cutoff).order_by(panels.c.created_at).limit(PURGE_BATCH)))
    if not ids:
        return dict.fromkeys(("panels", "seats", "verdicts"), 0)
    judged = (
        select(verdicts.c.id, verdicts.c.real, verdicts.c["false"])
        .join(seats, seats.c.call == verdicts.c.call)
        .where(seats.c.panel_id.in_(ids))
    )
    placeholders = [
        {
            "verdict_id": vid,
            "real_claims": [PURGED_CLAIM] * len(real or []),
            "false_claims": [PURGED_CLAIM] * len(false or []),
        }
        for vid, real, false in await conn.execute(judged)
    ]
    if placeholders:
        await conn.execute(
            verdicts.update()
            .where(verdicts.c.id == bindparam("verdict_id"))
            .values(
                {
                    verdicts.c.note: "",
                    verdicts.c.real: bindparam("real_claims", type_=verdicts.c.real.type),
                    verdicts.c["false"]: bindparam("false_claims", type_=verdicts.c["false"].type),
                }
            ),
            placeholders,
        )
    emptied = await conn.execute(
        seats.update().where(seats.c.panel_id.in_(ids)).values(answer="", error="", tool_calls=None, truncated_at=None)
    )
    await conn.execute(
        panels.update()
        .where(panels.c.id.in_(ids))
        .values(request={"purged_at": now}, response=None, request_hash="", idempotency_key=None, note=None)
    )
    return {"panels": len(ids), "seats": emptied.rowcount, "verdicts": len(placeholders)}


async def _forget_old_errors(conn: AsyncConnection, cutoff: float) -> None:
    """A model's last error unless it failed since the cutoff; the error an older "failing" alert quotes."""
    failed_since = select(seats.c.alias).where(and_(seats.c.status == SeatStatus.error, seats.c.created_at >= cutoff))
    await conn.execute(
        models.update()
        .where(and_(models.c.last_error.is_not(None), models.c.alias.not_in(failed_since)))
        .values(last_error=None)
    )
    quoted = select(alerts.c.id, alerts.c.message).where(
        and_(alerts.c.kind == "failing", alerts.c.created_at < cutoff, alerts.c.message.contains(LAST_ERROR))
    )
    for alert_id, message in (await conn.execute(quoted)).all():
        cut = message.split(LAST_ERROR)[0] + LAST_ERROR + PURGED_CLAIM
        if cut != message:
            await conn.execute(alerts.update().where(alerts.c.id == alert_id).values(message=cut))


async def reclaim_space(engine: AsyncEngine) -> bool:
    """Rewrite the database so emptied rows are gone from its files, not only from queries.

    SQLite: VACUUM rebuilds the file, then a TRUNCATE checkpoint empties the write-ahead log (which
    can hold old pages too). False when a reader kept the log from being emptied. PostgreSQL:
    VACUUM FULL rewrites the three tables (its own WAL and any backups are beyond reach here).
    Either briefly holds the database's write lock.
    """
    async with engine.connect() as conn:
        conn = await conn.execution_options(isolation_level="AUTOCOMMIT")  # neither runs in a transaction
        if engine.dialect.name != "sqlite":
            await conn.exec_driver_sql("VACUUM FULL panels, seats, verdicts")
            return True
        await conn.exec_driver_sql("VACUUM")
        # Busy while another checkpoint runs (the server's own, once a second at most): try again.
        for _ in range(RECLAIM_TRIES):
            busy = (await conn.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)")).one()[0]  # (busy, pages, done)
            if not busy:
                return True
            await asyncio.sleep(0.05)
        return False
