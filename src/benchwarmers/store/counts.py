"""Counts the dashboard shows on every load, kept cheap at any size: each reads a covering index
(migration 0002) or the verdicts, never the seat rows with their answers.

- `owed_count`: seats awaiting a verdict, over the whole log; `oldest_owed`: since when.
- `newest_panel_ids`: what an open Gateway card compares to tell that it should fetch again.
- `standing_counts`: per model × shape, its seats, errors, empties, verdicts and useful ones.
- `spent_since`: the calls (or tokens) a model or an endpoint was sent since a moment: what a
  restarted pacer starts a day's allowance from (bench/pacing.py).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import ColumnElement, and_, case, func, select
from sqlalchemy.ext.asyncio import AsyncConnection

from benchwarmers.nouns.seats import SeatKind, SeatStatus
from benchwarmers.store.calls import NOT_CALLED, OWED, SEATED_KINDS
from benchwarmers.store.schema import panels, seats, verdicts

_CURRENT = and_(verdicts.c.call == seats.c.call, verdicts.c.current.is_(True))
# A seat awaiting a verdict (with the outer join on _CURRENT): it gave a real (non-empty) answer, and no
# verdict is current.
_OWED = and_(seats.c.status.in_(OWED), seats.c.seat != SeatKind.decision, verdicts.c.id.is_(None))


def _count_if(condition: Any) -> Any:
    return func.sum(case((condition, 1), else_=0))


async def owed_count(conn: AsyncConnection) -> int:
    """Seats awaiting a verdict, counted as `calls.list_panels` counts them per panel: every
    seat with a real answer (ok, a merger's included) with no current verdict; empty answers and decision
    calls never."""
    query = select(func.count()).select_from(seats).outerjoin(verdicts, _CURRENT).where(_OWED)
    return int(await conn.scalar(query) or 0)


async def oldest_owed(conn: AsyncConnection) -> float | None:
    """When the oldest panel with a seat awaiting a verdict was made; None when none is owed.

    Read from the owed count's covering index: call ids begin with their panel's UTC date and time
    (`p20261129-231501-…`), so the smallest owed call is the oldest, and its panel row has the time.
    """
    query = select(func.min(seats.c.call)).select_from(seats).outerjoin(verdicts, _CURRENT).where(_OWED)
    oldest = await conn.scalar(query)
    if oldest is None:
        return None
    return await conn.scalar(select(panels.c.created_at).where(panels.c.id == oldest.partition(".")[0]))


async def newest_panel_ids(conn: AsyncConnection, limit: int = 20) -> list[str]:
    query = select(panels.c.id).where(panels.c.response.is_not(None)).order_by(panels.c.created_at.desc()).limit(limit)
    return [row[0] for row in await conn.execute(query)]


async def standing_counts(conn: AsyncConnection, since: float | None = None) -> list[dict[str, Any]]:
    """Per (alias, shape) over seated seats (member, nominee, explorer) since `since`: `seats`,
    `errors`, `empties`, `last_seated`, and from current verdicts `verdicts`, `useful`,
    `judged_ok` (verdicts on seats with a real answer) and `last_judged`. Seats whose model was not
    called (paced, cooling, retired) are not seats here: they say nothing of the model."""
    seated: ColumnElement[bool] = and_(seats.c.seat.in_(SEATED_KINDS), seats.c.status.not_in(NOT_CALLED))
    if since is not None:
        seated = and_(seated, seats.c.created_at >= since)
    by_seat = (
        select(
            seats.c.alias,
            seats.c.shape,
            func.count().label("seats"),
            _count_if(seats.c.status == SeatStatus.error).label("errors"),
            _count_if(seats.c.status == SeatStatus.empty).label("empties"),
            func.max(seats.c.created_at).label("last_seated"),
        )
        .where(seated)
        .group_by(seats.c.alias, seats.c.shape)
    )
    by_verdict = (
        select(
            seats.c.alias,
            seats.c.shape,
            func.count().label("verdicts"),
            _count_if(verdicts.c.useful.is_(True)).label("useful"),
            _count_if(seats.c.status == SeatStatus.ok).label("judged_ok"),
            func.max(verdicts.c.created_at).label("last_judged"),
        )
        .select_from(verdicts)
        .join(seats, _CURRENT)
        .where(seated)
        .group_by(seats.c.alias, seats.c.shape)
    )
    found: dict[tuple[str, str], dict[str, Any]] = {}
    for row in await conn.execute(by_seat):
        found[(row.alias, row.shape)] = {
            **dict(row._mapping),
            "verdicts": 0,
            "useful": 0,
            "judged_ok": 0,
            "last_judged": None,
        }
    for row in await conn.execute(by_verdict):
        entry = found.get((row.alias, row.shape))
        if entry is not None:
            entry.update(
                verdicts=row.verdicts,
                useful=int(row.useful or 0),
                judged_ok=int(row.judged_ok or 0),
                last_judged=row.last_judged,
            )
    return list(found.values())


async def seat_figures(conn: AsyncConnection, since: float | None = None) -> dict[tuple[str, str], dict[str, Any]]:
    """(alias, shape) → `error_kinds` ({failure class: seats}) and `seconds` (of each ok seat), over seated
    seats since `since`: what the median, the p90 and the errors by class are computed from. Reads the
    seats' small columns only (never an answer)."""
    seated: ColumnElement[bool] = and_(seats.c.seat.in_(SEATED_KINDS), seats.c.status.in_(("ok", "error")))
    if since is not None:
        seated = and_(seated, seats.c.created_at >= since)
    query = select(seats.c.alias, seats.c.shape, seats.c.status, seats.c.error_kind, seats.c.seconds).where(seated)
    found: dict[tuple[str, str], dict[str, Any]] = {}
    for row in await conn.execute(query):
        entry = found.setdefault((row.alias, row.shape), {"error_kinds": {}, "seconds": []})
        if row.status == SeatStatus.error:
            kind = row.error_kind or "error"
            entry["error_kinds"][kind] = entry["error_kinds"].get(kind, 0) + 1
        elif row.seconds is not None:
            entry["seconds"].append(row.seconds)
    return found


async def spent_since(
    conn: AsyncConnection, *, alias: str | None, endpoint: str | None, since: float, tokens: bool
) -> int:
    """Seats called since `since` on `alias` (or every model of `endpoint`): their number, or with
    `tokens` the tokens their providers reported."""
    scope = seats.c.alias == alias if alias is not None else seats.c.endpoint == endpoint
    where = and_(scope, seats.c.created_at >= since, seats.c.status.not_in(NOT_CALLED))
    if not tokens:
        return int((await conn.execute(select(func.count()).select_from(seats).where(where))).scalar_one())
    spent = 0
    for (usage,) in await conn.execute(select(seats.c.usage).where(where)):
        total = usage.get("total_tokens") if isinstance(usage, dict) else None
        spent += total if isinstance(total, int) and not isinstance(total, bool) else 0
    return spent
