"""SQLite's writer connection (bench/state.py, `BenchState.write`): kept open between transactions,
writes in this process taking turns on it, and replaced when a transaction leaves it unusable."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest
from sqlalchemy import text

from benchwarmers.bench.state import BenchState, DatabaseUnavailable
from benchwarmers.settings import Settings
from benchwarmers.store import calls, db
from benchwarmers.store.calls import PanelIdTaken
from benchwarmers.store.records import PanelRow
from tests.support.rows import panel


def reservation(panel_id: str) -> dict[str, object]:
    """A panel id reserved as `Panels.prepare` reserves it: no response yet (SQL NULL)."""
    row = panel(panel_id)
    return {key: value for key, value in row.items() if key not in ("response", "seconds", "note", "idempotency_key")}


async def _ids(state: BenchState) -> list[str]:
    async with state.read() as conn:
        return list((await conn.execute(text("SELECT id FROM panels ORDER BY id"))).scalars())


async def _reserve(state: BenchState, row: PanelRow) -> None:
    async with state.write() as conn:
        await calls.reserve_panels(conn, [row])


def test_one_connection_serves_every_write_and_writers_take_turns(tmp_path: Path) -> None:
    async def main() -> tuple[bool, list[str], list[str]]:
        state = BenchState(Settings(home=tmp_path / "home"))
        await state.open()
        try:
            order: list[str] = []
            seen = []
            holding = asyncio.Event()

            async def first() -> None:
                async with state.write() as conn:
                    seen.append(conn)
                    order.append("first begins")
                    holding.set()
                    await asyncio.sleep(0.05)  # another write arrives meanwhile
                    order.append("first commits")

            async def second() -> None:
                await holding.wait()
                async with state.write() as conn:
                    seen.append(conn)
                    order.append("second begins")

            await asyncio.gather(first(), second())
            return seen[0] is seen[1], order, await _ids(state)
        finally:
            await state.close()

    same, order, ids = asyncio.run(main())
    assert same
    assert order == ["first begins", "first commits", "second begins"]
    assert ids == []


def test_a_failed_statement_rolls_back_and_the_connection_is_kept(tmp_path: Path) -> None:
    async def main() -> tuple[bool, list[str]]:
        state = BenchState(Settings(home=tmp_path / "home"))
        await state.open()
        try:
            await _reserve(state, panel("p-1"))
            before = state._writer
            with pytest.raises(PanelIdTaken):
                async with state.write() as conn:
                    await calls.reserve_panels(conn, [panel("p-2")])
                    await calls.reserve_panels(conn, [panel("p-1")])  # taken: the whole transaction goes
            await _reserve(state, panel("p-3"))
            return state._writer is before, await _ids(state)
        finally:
            await state.close()

    kept, ids = asyncio.run(main())
    assert kept
    assert ids == ["p-1", "p-3"]  # p-2 was rolled back with the failed one


def test_a_write_lock_held_elsewhere_gives_503_and_the_next_write_goes_through(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(db, "LOCK_WAIT_SECONDS", 0.05)

    async def main() -> list[str]:
        state = BenchState(Settings(home=tmp_path / "home"))
        await state.open()
        other = sqlite3.connect(tmp_path / "home" / "bench.db", isolation_level=None)
        try:
            await _reserve(state, panel("p-1"))
            other.execute("BEGIN IMMEDIATE")  # another process holds the write lock
            with pytest.raises(DatabaseUnavailable):
                await _reserve(state, panel("p-2"))
            other.execute("ROLLBACK")
            await _reserve(state, panel("p-3"))
            return await _ids(state)
        finally:
            other.close()
            await state.close()

    assert asyncio.run(main()) == ["p-1", "p-3"]  # nothing of the refused write, no restart needed


def test_closing_the_connections_releases_the_file_and_the_next_write_reopens(tmp_path: Path) -> None:
    async def main() -> list[str]:
        state = BenchState(Settings(home=tmp_path / "home"))
        await state.open()
        try:
            await _reserve(state, panel("p-1"))
            await state.close_connections()
            assert state._writer is None
            await _reserve(state, panel("p-2"))
            return await _ids(state)
        finally:
            await state.close()

    assert asyncio.run(main()) == ["p-1", "p-2"]


def test_rows_written_in_place_and_through_sqlalchemy_share_one_transaction(tmp_path: Path) -> None:
    """The writer's transaction is begun on its sqlite3 connection; a SQLAlchemy statement inside joins
    it, so both kinds of write commit together, or roll back together."""

    async def main() -> tuple[bool, bool, list[str], list[str]]:
        state = BenchState(Settings(home=tmp_path / "home"))
        await state.open()
        try:
            async with state.write() as conn:
                await calls.reserve_panels(conn, [reservation("p-1")])  # in place (store/bulk.py)
                began_by_sqlalchemy = conn.in_transaction()
                await calls.drop_reservation(conn, "p-1")  # a SQLAlchemy statement
                await calls.reserve_panels(conn, [reservation("p-2")])
                joined = conn.in_transaction()
            committed = await _ids(state)
            with pytest.raises(RuntimeError):
                async with state.write() as conn:
                    await calls.reserve_panels(conn, [reservation("p-3")])
                    await calls.drop_reservation(conn, "p-2")
                    raise RuntimeError("after both kinds of write")
            return began_by_sqlalchemy, joined, committed, await _ids(state)
        finally:
            await state.close()

    began_by_sqlalchemy, joined, committed, after_failure = asyncio.run(main())
    assert (began_by_sqlalchemy, joined) == (False, True)
    assert committed == ["p-2"]  # the delete saw the row written in place: one transaction
    assert after_failure == ["p-2"]  # p-3 and the delete of p-2 rolled back together
