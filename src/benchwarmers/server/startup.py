"""Opening the bench when a server starts, and waiting for its database when it is away.

uvicorn takes an app whose start-up fails for a broken app: the process exits with code 3, and
`serve --workers N`'s manager then stops every worker (a restart would fail the same way). A
worker restarted while PostgreSQL was down failed its migration, so a short outage stopped the
bench for good. Here the first attempt is made during start-up as before, so a configuration that
cannot work (a bad password, a database that does not exist, a schema newer than this version)
still fails the start at once. When the database cannot be reached (`BenchState.open` raises
`DatabaseUnavailable`) the
server starts anyway: `/healthz` answers, `/readyz` is 503 with the reason, every request that
needs the database is a 503 `database_unavailable`, and the bench is opened in the background,
the pauses doubling from FIRST_PAUSE to LONGEST_PAUSE, for as long as the outage lasts.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Iterator

from benchwarmers.bench.services import Bench
from benchwarmers.bench.state import DatabaseUnavailable

log = logging.getLogger("benchwarmers.server")

FIRST_PAUSE = 0.5  # seconds before the second attempt
LONGEST_PAUSE = 30.0  # the pause between attempts stops doubling here


def pauses(first: float = FIRST_PAUSE, longest: float = LONGEST_PAUSE) -> Iterator[float]:
    """The pauses between attempts: first, doubled each time, never above longest (and never ending)."""
    pause = first
    while True:
        yield pause
        pause = min(pause * 2, longest)


class Startup:
    """Opening one process's bench; `/readyz` asks it how far that has come."""

    def __init__(self, bench: Bench) -> None:
        self.bench = bench
        self.attempts = 0
        self.failure: str | None = None  # why the last attempt failed (the error's type), None once open
        self._task: asyncio.Task[None] | None = None

    @property
    def opened(self) -> bool:
        return self.bench.state.opened

    async def open(self, then: Callable[[], Awaitable[None]]) -> None:
        """Open the bench now and run `then`; or, if the database cannot be reached, return at once
        and keep trying in the background (`then` runs once it opens). Any other failure raises."""
        if await self._attempt(raise_other=True):
            await then()
            return
        self._task = asyncio.create_task(self._wait(then), name="benchwarmers-startup")

    async def _attempt(self, *, raise_other: bool) -> bool:
        self.attempts += 1
        try:
            await self.bench.open()
        except Exception as exc:
            if not isinstance(exc, DatabaseUnavailable) and raise_other:
                raise
            self.failure = type(exc.__cause__ or exc).__name__
            return False
        self.failure = None
        return True

    async def _wait(self, then: Callable[[], Awaitable[None]]) -> None:
        where = self.bench.state.database_address
        for pause in pauses():
            log.warning(
                "start-up: the database %s could not be opened (%s) at attempt %d; trying again in %.1f s",
                where,
                self.failure,
                self.attempts,
                pause,
            )
            await asyncio.sleep(pause)
            # Past the first attempt nothing fails the start any more (the server is answering):
            # a database back with a problem is logged and tried again, and /readyz says so.
            if await self._attempt(raise_other=False):
                break
        log.warning("start-up: the database %s answered at attempt %d; the bench is open", where, self.attempts)
        await then()

    async def stop(self) -> None:
        """Stop waiting (the server is shutting down before the database came back)."""
        task, self._task = self._task, None
        if task is not None and not task.done():
            task.cancel()
        if task is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await task
