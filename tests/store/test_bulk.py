"""store/bulk.py: rows the SQLite writer writes itself are stored exactly as SQLAlchemy stores them."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select, text
from sqlalchemy.exc import IntegrityError

from benchwarmers.bench.state import BenchState
from benchwarmers.settings import Settings
from benchwarmers.store import calls
from benchwarmers.store.bulk import insert_rows, update_rows, writer_connection
from benchwarmers.store.schema import panels, seats
from tests.support.rows import panel, seat

STORED = text(
    "SELECT p.*, typeof(p.note), typeof(p.response), typeof(p.idempotency_key), s.*, typeof(s.tool_calls), "
    "typeof(s.truncated_at), typeof(s.usage) FROM panels p JOIN seats s ON s.panel_id = p.id WHERE p.id = :id"
)


def test_the_writer_and_sqlalchemy_store_the_same_values(tmp_path: Path) -> None:
    async def main() -> tuple[list[Any], list[Any], bool, bool]:
        state = BenchState(Settings(home=tmp_path / "home"))
        await state.open()
        try:
            finished = {"id": "chatcmpl-1", "choices": [{"message": {"content": "No."}}], "usage": None}
            async with state.write() as conn:  # the writer: its own sqlite3 connection
                through_writer = writer_connection(conn) is not None
                await calls.reserve_panels(conn, [panel("p-writer")])
                await calls.finish_panels(conn, [panel("p-writer", finished)], [seat("p-writer")])
            async with state.engine.begin() as conn:  # a reader's connection: SQLAlchemy writes
                through_sqlalchemy = writer_connection(conn) is None
                await insert_rows(conn, panels, [panel("p-sqla")])
                await update_rows(conn, panels, "id", [panel("p-sqla", finished)])
                await insert_rows(conn, seats, [seat("p-sqla")])
            async with state.read() as conn:
                mine = list((await conn.execute(STORED, {"id": "p-writer"})).one())
                theirs = list((await conn.execute(STORED, {"id": "p-sqla"})).one())
                assert (await conn.execute(select(panels.c.response).where(panels.c.id == "p-writer"))).scalar() == (
                    finished
                )
            return mine, theirs, through_writer, through_sqlalchemy
        finally:
            await state.close()

    mine, theirs, through_writer, through_sqlalchemy = asyncio.run(main())
    assert through_writer and through_sqlalchemy
    ids = {"p-writer", "p-writer.member0", "p-sqla", "p-sqla.member0"}
    assert [v for v in mine if v not in ids] == [v for v in theirs if v not in ids]
    assert "null" in mine  # tool_calls: JSON None is stored as the JSON text null, as SQLAlchemy does
    assert mine.count("null") == theirs.count("null")


def test_a_taken_panel_id_is_refused_as_sqlalchemy_refuses_it(tmp_path: Path) -> None:
    async def main() -> None:
        state = BenchState(Settings(home=tmp_path / "home"))
        await state.open()
        try:
            async with state.write() as conn:
                await calls.reserve_panels(conn, [panel("p-1")])
            with pytest.raises(calls.PanelIdTaken, match="p-1"):
                async with state.write() as conn:
                    await calls.reserve_panels(conn, [panel("p-1")])
            with pytest.raises(IntegrityError):
                async with state.write() as conn:
                    await insert_rows(conn, seats, [seat("p-missing")])  # no such panel: the foreign key
            async with state.read() as conn:
                assert (await conn.execute(text("SELECT count(*) FROM seats"))).scalar() == 0
                assert (await conn.execute(text("SELECT count(*) FROM panels"))).scalar() == 1
        finally:
            await state.close()

    asyncio.run(main())
