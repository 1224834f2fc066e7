"""`QuietServer` (server/listen.py): uvicorn's upkeep once a second instead of ten times, and a
signal to stop that wakes it at once."""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path

import pytest

from benchwarmers.server import listen
from benchwarmers.settings import Settings


def test_each_tick_does_the_once_a_second_work_and_a_stop_signal_wakes_it_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(listen, "TICK_SECONDS", 3600.0)  # only the signal can end the wait
    server = listen.QuietServer(listen.uvicorn_config(object(), Settings(home=tmp_path)))
    ticks: list[int] = []

    async def on_tick(counter: int) -> bool:
        ticks.append(counter)
        return server.should_exit

    server.on_tick = on_tick  # type: ignore[method-assign]

    async def main() -> None:
        loop = asyncio.create_task(server.main_loop())
        while not ticks:
            await asyncio.sleep(0)
        server.handle_exit(signal.SIGTERM, None)
        await asyncio.wait_for(loop, timeout=30)

    asyncio.run(main())
    assert ticks == [0, 10]  # uvicorn refreshes its Date header when the count is a multiple of 10
    assert server.should_exit
