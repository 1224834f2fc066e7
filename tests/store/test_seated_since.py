"""The seat history's once-a-second catch-up query (`calls.seated_since`): the right answer, read
from the created_at range, not from a walk over every seat ever recorded."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from sqlalchemy import event

from benchwarmers.bench.state import BenchState
from benchwarmers.settings import Settings
from benchwarmers.store import calls
from tests.support.rows import panel, seat


def test_seated_since_answers_from_the_created_at_range(tmp_path: Path) -> None:
    async def main() -> tuple[dict[tuple[str, str], float], list[str]]:
        state = BenchState(Settings(home=tmp_path / "home"))
        await state.open()
        try:
            rows = []
            for n in range(40):
                row = seat(f"p-{n}")
                row.update(alias=f"e{n % 2}/model", shape="review" if n % 4 < 2 else "code", created_at=1000.0 + n)
                if n == 39:
                    row["status"] = "paced"  # not called: it did not sit
                rows.append(row)
            async with state.write() as conn:
                await calls.reserve_panels(conn, [panel(f"p-{n}") for n in range(40)])
                await calls.finish_panels(conn, [], rows)
            statements: list[tuple[str, Any]] = []
            assert state.engine is not None

            def seen(_conn: Any, _cursor: Any, statement: str, parameters: Any, *_: Any) -> None:
                statements.append((statement, parameters))

            event.listen(state.engine.sync_engine, "before_cursor_execute", seen)
            async with state.read() as conn:
                found = await calls.seated_since(conn, 1030.0)
                statement, parameters = next(s for s in statements if "max(seats.created_at)" in s[0])
                plan = await conn.exec_driver_sql(f"EXPLAIN QUERY PLAN {statement}", parameters)
                details = [row[-1] for row in plan]
            return found, details
        finally:
            await state.close()

    found, plan = asyncio.run(main())
    # Seats 31..38 (39 was paced): e1/model on review at 33, 37; on code at 31, 35; e0 likewise.
    assert found == {
        ("e0/model", "review"): 1036.0,
        ("e1/model", "review"): 1037.0,
        ("e0/model", "code"): 1038.0,
        ("e1/model", "code"): 1035.0,
    }
    assert any("ix_seats_created_at (created_at>?)" in step for step in plan), plan
    assert not any(step.startswith("SCAN seats") for step in plan), plan
