"""The recorder's group commit (bench/panels/record.py): writes that arrive together commit together,
and a caller that goes away takes nothing with it."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from sqlalchemy import text

from benchwarmers.bench.panels.record import Recorder
from benchwarmers.bench.state import BenchState
from benchwarmers.settings import Settings
from benchwarmers.store.calls import PanelIdTaken
from tests.support.rows import panel


def test_writes_arriving_together_share_one_commit_and_a_caller_leaving_cancels_nothing(tmp_path: Path) -> None:
    async def main() -> tuple[list[str], tuple[float, float], list[BaseException | None]]:
        state = BenchState(Settings(home=tmp_path / "home"))
        await state.open()
        try:
            recorder = Recorder(state)
            registry = state.metrics.registry

            def counts() -> tuple[float, float]:
                commits = registry.get_sample_value("benchwarmers_recorder_commit_seconds_count") or 0.0
                return commits, registry.get_sample_value("benchwarmers_recorder_writes_total") or 0.0

            before = counts()
            callers = [asyncio.ensure_future(recorder.reserve(panel(f"p-{n}"))) for n in range(3)]
            await asyncio.sleep(0)  # each caller has queued its write; the drain has not run yet
            callers[1].cancel()  # its client went away
            results = await asyncio.gather(*callers, return_exceptions=True)
            await recorder.close()
            async with state.read() as conn:
                ids = list((await conn.execute(text("SELECT id FROM panels ORDER BY id"))).scalars())
            after = counts()
            return ids, (after[0] - before[0], after[1] - before[1]), list(results)
        finally:
            await state.close()

    ids, (commits, writes), results = asyncio.run(main())
    assert ids == ["p-0", "p-1", "p-2"]  # the cancelled caller's write was committed with the others
    assert (commits, writes) == (1, 3)
    assert results[0] is None and results[2] is None
    assert isinstance(results[1], asyncio.CancelledError)


def test_a_bad_write_fails_alone_and_the_rest_of_its_batch_commits(tmp_path: Path) -> None:
    async def main() -> tuple[list[str], list[BaseException | None]]:
        state = BenchState(Settings(home=tmp_path / "home"))
        await state.open()
        try:
            recorder = Recorder(state)
            await recorder.reserve(panel("p-taken"))
            callers = [recorder.reserve(panel(name)) for name in ("p-a", "p-taken", "p-b")]
            results = await asyncio.gather(*callers, return_exceptions=True)
            async with state.read() as conn:
                ids = list((await conn.execute(text("SELECT id FROM panels ORDER BY id"))).scalars())
            return ids, list(results)
        finally:
            await state.close()

    ids, results = asyncio.run(main())
    assert ids == ["p-a", "p-b", "p-taken"]
    assert results[0] is None and results[2] is None
    with pytest.raises(PanelIdTaken, match="p-taken"):
        raise results[1]  # type: ignore[misc]
