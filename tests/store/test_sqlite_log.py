"""SQLite's write-ahead log starts over after each checkpoint (store/db.py `checkpoint`), so a busy
bench's log stays the size of what is written between two checkpoints instead of growing for ever."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest

from benchwarmers.bench.state import BenchState, checkpoint_due
from benchwarmers.settings import Settings
from benchwarmers.store import calls
from benchwarmers.store.db import LogFrames
from tests.support.rows import panel


def test_the_log_is_reused_after_each_checkpoint(tmp_path: Path) -> None:
    home = tmp_path / "home"

    async def main() -> list[int]:
        state = BenchState(Settings(home=home))
        await state.open()
        [log] = list(home.rglob("*.db-wal"))
        sizes = []
        written = 0

        async def commit() -> None:
            nonlocal written
            written += 1
            async with state.write() as conn:
                await calls.reserve_panels(conn, [panel(f"p-{written}")])

        try:
            for _ in range(8):
                for _ in range(150):  # a commit each: the log grows by a few pages per commit
                    await commit()
                # As in the server: the checkpoint runs in a reader's thread while panels go on
                # being written, so PASSIVE alone is always behind the writer.
                running = asyncio.ensure_future(state.checkpoint())
                while not running.done():
                    await commit()
                    await asyncio.sleep(0)
                await running
                sizes.append(log.stat().st_size)
        finally:
            await state.close()
        return sizes

    sizes = asyncio.run(main())
    assert sizes[0] > 300_000, sizes  # 150 commits of a few 4 KB pages each
    # The file keeps its largest size but stops growing, even when a checkpoint could not start the
    # log over (a busy machine: it tries again at the next). PASSIVE alone: 3, 6, 9 ... 25 MB.
    assert sizes[-1] < 4 * sizes[0], sizes
    print(sizes)


def test_log_frames_reads_what_sqlite_reports(tmp_path: Path) -> None:
    """`LogFrames` (what decides when to checkpoint) agrees with SQLite's own count of the log's frames."""
    database = tmp_path / "bench.db"
    frames = LogFrames(f"sqlite+aiosqlite:///{database}")
    assert frames() == 0  # nothing opened yet
    connection = sqlite3.connect(database, isolation_level=None)
    try:
        connection.execute("PRAGMA journal_mode=WAL")
        connection.execute("PRAGMA wal_autocheckpoint=0")
        connection.execute("CREATE TABLE t (x BLOB)")
        for _ in range(40):
            connection.execute("INSERT INTO t VALUES (randomblob(3000))")
        counted = frames()
        busy, log, copied = connection.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
        assert (busy, counted) == (0, log), (counted, log)
        assert log >= 40 and copied == log
        connection.execute("PRAGMA wal_checkpoint(RESTART)")
        connection.execute("INSERT INTO t VALUES (randomblob(3000))")  # the log starts over here
        assert 0 < frames() < 5
    finally:
        connection.close()
        frames.close()
    assert LogFrames("postgresql+asyncpg://bench@127.0.0.1/bench")() == 0


@pytest.mark.parametrize(
    ("seconds", "frames", "due"),
    [
        (0.5, 50_000, False),  # at most once a second, however long the log
        (1.0, 999, False),
        (1.0, 1000, True),  # SQLite's own autocheckpoint size
        (9.9, 10, False),
        (10.0, 1, True),  # light load: any commit after 10 s
    ],
)
def test_when_a_checkpoint_is_due(seconds: float, frames: int, due: bool) -> None:
    assert checkpoint_due(seconds, lambda: frames) is due
