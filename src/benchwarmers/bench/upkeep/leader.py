"""Which process on this host runs the upkeep loops (catalog refresh, the watch, retention).

With `serve --workers N` every worker runs the app's lifespan, but the loops must run once: the
first worker to take an exclusive lock on `$BENCHWARMERS_HOME/upkeep.lock` runs them and holds it
for its life; the system releases it when that process ends, and the worker uvicorn starts in its
place takes it. Hosts sharing one PostgreSQL each run their own (the loops read when they last ran
from the database, so a second host's run finds little to do).
"""

from __future__ import annotations

import os
from pathlib import Path


class UpkeepLock:
    def __init__(self, home: Path) -> None:
        self.path = home / "upkeep.lock"
        self._fd: int | None = None

    def acquire(self) -> bool:
        """True when this process now holds the lock (it runs the upkeep loops)."""
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
        return True

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing the descriptor releases the lock
            self._fd = None
