"""The daily catalog refresh that runs inside `benchwarmers serve`.

Due a day after the last refresh (a scheduled one, `benchwarmers catalog refresh`, or the newest
endpoint refresh, so restarts do not postpone it forever); on a fresh bench, a day after start. It
naps at most an hour at a time, so a refresh by hand or a suspended laptop moves the due time. The
clock and the sleep are injectable: tests drive it without waiting. Nothing it meets stops it, and
nothing it does can stop the server.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from benchwarmers.bench.admin.refresh import last_refresh, refresh_all
from benchwarmers.bench.core.background import BackgroundJob
from benchwarmers.catalog.modelsdev import MODELS_DEV_URL

if TYPE_CHECKING:
    from benchwarmers.bench.state import BenchState

log = logging.getLogger("benchwarmers.scheduler")

DAY = 24 * 3600.0
MAX_NAP = 3600.0
RETRY_AFTER_ERROR = 3600.0


class CatalogScheduler(BackgroundJob):
    task_name = "benchwarmers-catalog-refresh"

    def __init__(
        self,
        state: BenchState,
        *,
        every: float = DAY,
        clock: Callable[[], float] = time.time,
        sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
        job: Callable[[], Awaitable[Any]] | None = None,
        models_dev_url: str | None = MODELS_DEV_URL,
        max_nap: float = MAX_NAP,
    ) -> None:
        self.state = state
        self.every = every
        self.clock = clock
        self.sleep = sleep
        self.job = job or (lambda: refresh_all(state, models_dev_url=models_dev_url, actor="scheduler"))
        self.max_nap = max_nap
        self.runs = 0
        self.failures = 0
        self._started = clock()
        self._not_before: float | None = None

    async def due(self) -> float:
        """When the next refresh is due (epoch seconds)."""
        async with self.state.read() as conn:
            last = await last_refresh(conn)
        due = (self._started if last is None else last) + self.every
        return due if self._not_before is None else max(due, self._not_before)

    async def run(self) -> None:
        while True:
            try:
                wait = await self.due() - self.clock()
            except Exception as exc:  # e.g. the database is away for a moment: try again later
                log.warning("catalog schedule unreadable: %s", exc)
                wait = RETRY_AFTER_ERROR
            if wait > 0:
                await self.sleep(min(wait, self.max_nap))
                continue
            await self.run_once()

    async def run_once(self) -> bool:
        """One refresh; True when it ran to the end (sources may still have failed, each noted)."""
        try:
            await self.job()
        except Exception:
            self.failures += 1
            self._not_before = self.clock() + RETRY_AFTER_ERROR
            log.exception("scheduled catalog refresh failed; next try in %.0f s", RETRY_AFTER_ERROR)
            return False
        self.runs += 1
        # The job records its own time; this only guards against one that does not.
        self._not_before = self.clock() + self.every
        log.info("scheduled catalog refresh done")
        return True
