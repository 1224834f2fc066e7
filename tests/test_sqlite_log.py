"""SQLite's write-ahead log starts over after each checkpoint (store/db.py `checkpoint`), so a busy
bench's log stays the size of what is written between two checkpoints instead of growing for ever."""

from __future__ import annotations

import asyncio
from pathlib import Path

from benchwarmers.bench.state import BenchState
from benchwarmers.settings import Settings
from benchwarmers.store import calls
from tests.test_bulk_rows import panel


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
