"""Suite runs and their graded results (the suite's verdicts go through bench/evidence/verdicts.py)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from sqlalchemy import and_, func, select
from sqlalchemy.ext.asyncio import AsyncConnection

from benchwarmers.store.schema import panels, seats, suite_results, suite_runs


async def create_run(conn: AsyncConnection, run_id: str, target: str, plan: dict[str, Any]) -> None:
    await conn.execute(suite_runs.insert().values(id=run_id, created_at=time.time(), target=target, plan=plan))


async def get_run(conn: AsyncConnection, run_id: str) -> dict[str, Any] | None:
    row = (await conn.execute(select(suite_runs).where(suite_runs.c.id == run_id))).first()
    return dict(row._mapping) if row else None


async def latest_run(conn: AsyncConnection) -> dict[str, Any] | None:
    query = select(suite_runs).order_by(suite_runs.c.created_at.desc(), suite_runs.c.id.desc()).limit(1)
    row = (await conn.execute(query)).first()
    return dict(row._mapping) if row else None


async def list_runs(conn: AsyncConnection, limit: int = 50) -> list[dict[str, Any]]:
    """Runs, newest first, with how many results each has and how many units those came from."""
    counted = select(suite_results.c.run_id, func.count().label("results")).group_by(suite_results.c.run_id).subquery()
    unit = (
        select(suite_results.c.run_id, suite_results.c.task, suite_results.c.attempt, suite_results.c.unit_alias)
        .distinct()
        .subquery()
    )
    units = select(unit.c.run_id, func.count().label("units")).group_by(unit.c.run_id).subquery()
    query = (
        select(
            suite_runs,
            func.coalesce(counted.c.results, 0).label("results"),
            func.coalesce(units.c.units, 0).label("units_done"),
        )
        .outerjoin(counted, counted.c.run_id == suite_runs.c.id)
        .outerjoin(units, units.c.run_id == suite_runs.c.id)
        .order_by(suite_runs.c.created_at.desc(), suite_runs.c.id.desc())
        .limit(limit)
    )
    return [dict(row._mapping) for row in await conn.execute(query)]


async def finish_run(conn: AsyncConnection, run_id: str) -> None:
    await conn.execute(suite_runs.update().where(suite_runs.c.id == run_id).values(finished_at=time.time()))


async def results(conn: AsyncConnection, run_id: str) -> list[dict[str, Any]]:
    query = select(suite_results).where(suite_results.c.run_id == run_id).order_by(suite_results.c.id)
    return [dict(row._mapping) for row in await conn.execute(query)]


async def done_units(conn: AsyncConnection, run_id: str) -> set[tuple[str, int, str | None]]:
    """(task, attempt, model asked alone or None) of the units that have results: what a resumed
    run skips."""
    query = select(suite_results.c.task, suite_results.c.attempt, suite_results.c.unit_alias).where(
        suite_results.c.run_id == run_id
    )
    return {(task, attempt, alias) for task, attempt, alias in await conn.execute(query)}


async def result_of(conn: AsyncConnection, run_id: str, task: str, attempt: int, alias: str) -> dict[str, Any] | None:
    """One model's result on one task attempt of a run (a control's bug twin), if it has one."""
    query = select(suite_results).where(
        and_(
            suite_results.c.run_id == run_id,
            suite_results.c.task == task,
            suite_results.c.attempt == attempt,
            suite_results.c.alias == alias,
        )
    )
    row = (await conn.execute(query)).first()
    return dict(row._mapping) if row else None


async def set_graded(conn: AsyncConnection, result_id: int, graded: dict[str, Any]) -> None:
    await conn.execute(suite_results.update().where(suite_results.c.id == result_id).values(graded=graded))


async def insert_results(conn: AsyncConnection, rows: Sequence[dict[str, Any]]) -> None:
    if rows:
        now = time.time()
        await conn.execute(suite_results.insert(), [{"created_at": now, **row} for row in rows])


async def finished_panel(conn: AsyncConnection, caller: str, idempotency_key: str) -> str | None:
    """The id of a panel this caller finished under this key (a run interrupted after the panel
    was recorded and before its results were: grading it again repeats no call)."""
    query = (
        select(panels.c.id)
        .where(
            and_(
                panels.c.caller == caller,
                panels.c.idempotency_key == idempotency_key,
                panels.c.response.is_not(None),
            )
        )
        .order_by(panels.c.created_at.desc())
        .limit(1)
    )
    return await conn.scalar(query)


async def panel_seats(conn: AsyncConnection, panel_id: str) -> list[dict[str, Any]]:
    query = select(seats).where(seats.c.panel_id == panel_id).order_by(seats.c.position)
    return [dict(row._mapping) for row in await conn.execute(query)]


async def answers(conn: AsyncConnection, calls: Sequence[str]) -> dict[str, str]:
    """call id → the seat's stored answer (for reports that show answers side by side)."""
    if not calls:
        return {}
    query = select(seats.c.call, seats.c.answer).where(seats.c.call.in_(list(calls)))
    return {call: answer for call, answer in await conn.execute(query)}
