"""Telling running servers that the configuration changed, without a query per request.

Every process that commits a change replaces `$BENCHWARMERS_HOME/config.signal`. A server
compares the file's identity (inode, mtime, size — a replaced file always has a new inode) before
each request, a stat call of a few microseconds, and reads the config version from the database
only when it moved. Where the database is shared beyond this machine (PostgreSQL), another host
cannot touch our file, so the version is also checked at most every `fallback_interval` seconds.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

Stamp = tuple[int, int, int] | None


class ConfigSignal:
    def __init__(self, home: Path, *, shared_database: bool, fallback_interval: float = 1.0) -> None:
        self.path = home / "config.signal"
        self.shared_database = shared_database
        self.fallback_interval = fallback_interval

    def stamp(self) -> Stamp:
        try:
            found = os.stat(self.path)
        except FileNotFoundError:
            return None
        return found.st_ino, found.st_mtime_ns, found.st_size

    def touch(self, version: int) -> None:
        temporary = self.path.with_name(f"{self.path.name}.{os.getpid()}")
        temporary.write_text(f"{version}\n")
        os.replace(temporary, self.path)

    def unchanged(self, seen: Stamp, checked_at: float) -> bool:
        """True when nothing can have changed since `seen` was taken at `checked_at`."""
        if self.stamp() != seen:
            return False
        return not self.shared_database or time.monotonic() - checked_at < self.fallback_interval
