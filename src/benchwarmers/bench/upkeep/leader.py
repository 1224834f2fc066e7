"""Which process on this host runs the upkeep jobs (catalog refresh, the watch, retention).

With `serve --workers N` every worker runs the app's lifespan, but the loops must run once: the
first worker to take an exclusive lock on `$BENCHWARMERS_HOME/upkeep.lock` runs them and holds it
for its life; the system releases it when that process ends. `benchwarmers upkeep` (a timer's
run of the same jobs, once) takes the same lock for the length of its run, so it and a server never
run a job at once: it skips when a server holds it, and a server that finds it taken takes it when
the run is over (`wait_for`). Hosts sharing one PostgreSQL each run their own (the jobs read when
they last ran from the database, so a second host's run finds little to do).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

RETRY_EVERY = 60.0  # how often a server that found the lock taken tries again: a run takes minutes


class UpkeepLock:
    def __init__(self, home: Path) -> None:
        self.path = home / "upkeep.lock"
        self._fd: int | None = None

    def acquire(self) -> bool:
        """True when this process now holds the lock (it runs the upkeep jobs)."""
        if self._fd is not None:
            return True
        try:
            import fcntl
        except ImportError:  # not POSIX: one process per home is the rule there
            return True
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            return False
        self._fd = fd
        # Who holds it, for the `upkeep` that finds it taken to say (the lock is the flock, not this).
        with contextlib.suppress(OSError):
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        return True

    def holder(self) -> int | None:
        """The pid that last took the lock (read while it is held by another process), if known."""
        try:
            text = self.path.read_text().strip()
        except OSError:
            return None
        return int(text) if text.isdigit() else None

    async def wait_for(
        self, every: float | None = None, sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep
    ) -> None:
        """Take the lock once it is free, trying every `every` seconds (RETRY_EVERY by default): a
        poll, so it never blocks the event loop, and a process that ends while waiting holds nothing."""
        while not self.acquire():
            await sleep(RETRY_EVERY if every is None else every)

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing the descriptor releases the lock
            self._fd = None
