"""The daily catalog refresh, driven by an injected clock and sleep (nothing here waits a day)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from benchwarmers.bench.admin.refresh import refresh_all
from benchwarmers.bench.services import Bench
from benchwarmers.bench.upkeep.scheduler import DAY, MAX_NAP, RETRY_AFTER_ERROR, CatalogScheduler
from benchwarmers.settings import Settings
from benchwarmers.store.changes import list_changes
from tests.support.catalog import OR_ID, entry


class Clock:
    """A clock that moves only when the scheduler sleeps. Once `hold()` is true, the next sleep is
    recorded and then lasts until the scheduler is stopped, so the test sees where it stopped."""

    def __init__(self, start: float, hold: Any = lambda: False) -> None:
        self.now = start
        self.naps: list[float] = []
        self.hold = hold

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.naps.append(seconds)
        if self.hold():
            await asyncio.Event().wait()
        self.now += seconds
        await asyncio.sleep(0)


@pytest.fixture
async def bench(tmp_path: Path) -> AsyncIterator[Bench]:
    async with Bench(Settings(home=tmp_path / "home"), actor="test") as opened:
        yield opened


async def until(condition: Any, timeout: float = 10.0) -> None:
    """Let the scheduler's task run until `condition()` holds (it never really sleeps)."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "the scheduler did not get there"
        await asyncio.sleep(0.01)


async def test_the_daily_job_refreshes_every_endpoint_and_models_dev(bench, fake_upstream):
    fake_upstream.listing("/v1/models", {"object": "list", "data": [entry(window=131_072)]})
    await bench.endpoints.add_endpoint("or", fake_upstream.base_url, "openrouter", free_tier=True)
    await bench.endpoints.refresh_endpoint("or")
    fake_upstream.listing("/v1/models", {"object": "list", "data": [entry(window=64_000)]})
    fake_upstream.listing("/api.json", {"error": "down"}, status=503)
    scheduler: CatalogScheduler | None = None
    clock = Clock(time.time(), hold=lambda: scheduler is not None and scheduler.runs > 0)
    scheduler = CatalogScheduler(
        bench.state, clock=clock, sleep=clock.sleep, models_dev_url=f"{fake_upstream.root_url}/api.json"
    )
    assert await scheduler.due() == pytest.approx(clock.now + DAY, abs=5)  # a day after the last refresh

    scheduler.start()
    try:
        await until(lambda: scheduler.runs == 1 and len(clock.naps) > 24)
        # It napped through the day, an hour at most at a time, ran once it was due, then napped again.
        *before, after = clock.naps
        assert sum(before) == pytest.approx(DAY, abs=5)
        assert max(before) <= MAX_NAP
        assert after == MAX_NAP
        assert await scheduler.due() == pytest.approx(clock.now + DAY, abs=5)
        model = await bench.models.model(f"or/{OR_ID}")
        assert model["facts"]["context_window"] == {"value": 64_000, "source": "listing"}
        assert "/api.json" in [r.path for r in fake_upstream.requests]
        async with bench.state.read() as conn:
            refreshes = [c for c in await list_changes(conn, subject="endpoint") if c["action"] == "refresh"]
        assert [c["actor"] for c in refreshes] == ["scheduler", "test"]
    finally:
        await scheduler.stop()


async def test_a_refresh_by_hand_moves_the_due_time(bench):
    clock = Clock(time.time() - 5 * DAY)  # started five days ago on a bench never refreshed: overdue
    scheduler = CatalogScheduler(bench.state, clock=clock, sleep=clock.sleep, models_dev_url=None)
    assert await scheduler.due() == pytest.approx(clock.now + DAY)
    await refresh_all(bench.state, models_dev_url=None)
    assert await scheduler.due() == pytest.approx(time.time() + DAY, abs=5)


async def test_a_failing_job_never_stops_the_scheduler(bench):
    scheduler: CatalogScheduler | None = None
    clock = Clock(time.time(), hold=lambda: scheduler is not None and scheduler.runs > 0)
    calls: list[float] = []

    async def job() -> None:
        calls.append(clock.now)
        if len(calls) == 1:
            raise RuntimeError("database went away")

    scheduler = CatalogScheduler(bench.state, clock=clock, sleep=clock.sleep, job=job, every=DAY)
    scheduler.start()
    try:
        await until(lambda: scheduler.runs == 1)
    finally:
        await scheduler.stop()
    assert (scheduler.failures, scheduler.runs) == (1, 1)
    # The first run at the day's end failed; it was tried again an hour later, not at once.
    assert calls[1] - calls[0] == pytest.approx(RETRY_AFTER_ERROR)
