"""Telling running servers that the configuration changed, without a query per request.

Every process that commits a change replaces `$BENCHWARMERS_HOME/config.signal`. A server
compares the file's identity (inode, mtime, size — a replaced file always has a new inode) before
each request, a stat call of a few microseconds, and reads the config version from the database
only when it moved. Where the database is shared beyond this machine (PostgreSQL), another host
cannot touch our file: with BENCHWARMERS_REDIS_URL the version is also published in Redis and read
there before each request (one GET), so a change on one host is seen by the next request on every
other; without Redis (or while it is unreachable) the database's version is checked at most every
`fallback_interval` seconds.
"""

from __future__ import annotations

import logging
import os
import time
from pathlib import Path
from typing import Any

Stamp = tuple[int, int, int] | None

log = logging.getLogger("benchwarmers.config")

REDIS_KEY = "benchwarmers/config_version"
REDIS_TIMEOUT = 0.5  # seconds: a Redis that does not answer is skipped, not waited for
REDIS_BACKOFF = 1.0  # seconds without asking Redis after it failed (the fallback interval covers it)


class ConfigSignal:
    def __init__(
        self, home: Path, *, shared_database: bool, fallback_interval: float = 1.0, redis_url: str | None = None
    ) -> None:
        self.path = home / "config.signal"
        self.shared_database = shared_database
        self.fallback_interval = fallback_interval
        self.redis_url = redis_url
        self._redis: Any = None
        self._redis_down_until = 0.0

    def stamp(self) -> Stamp:
        try:
            found = os.stat(self.path)
        except FileNotFoundError:
            return None
        return found.st_ino, found.st_mtime_ns, found.st_size

    async def touch(self, version: int) -> None:
        """Called once a change has committed: it stands whatever happens here."""
        temporary = self.path.with_name(f"{self.path.name}.{os.getpid()}")
        try:
            temporary.write_text(f"{version}\n")
            os.replace(temporary, self.path)
        except OSError as exc:
            # A full disk, say: a new mtime on the old file still moves its stamp (and takes no room).
            temporary.unlink(missing_ok=True)
            try:
                os.utime(self.path)
            except OSError:
                log.warning("config change not signalled (%s): other processes on this host see it with the next", exc)
        client = self._client()
        if client is not None:
            try:
                # Only ever raised: a slower process must not put back an older version.
                await client.eval(_RAISE, 1, REDIS_KEY, version)
            except Exception as exc:
                self._failed(exc)

    def unchanged(self, seen: Stamp, checked_at: float) -> bool:
        """True when nothing on this host can have changed since `seen` was taken at `checked_at`."""
        if self.stamp() != seen:
            return False
        return not self.shared_database or self.redis_url is not None or self._fallback_fresh(checked_at)

    def _fallback_fresh(self, checked_at: float) -> bool:
        return time.monotonic() - checked_at < self.fallback_interval

    async def newer_than(self, version: int, checked_at: float) -> bool:
        """Whether another host published a version after `version` (Redis), or, Redis away, whether
        the fallback interval has passed (the database is asked then)."""
        client = self._client()
        if client is None:
            return self.shared_database and not self._fallback_fresh(checked_at)
        try:
            published = await client.get(REDIS_KEY)
        except Exception as exc:
            self._failed(exc)
            return not self._fallback_fresh(checked_at)
        return published is not None and int(published) > version

    def _client(self) -> Any:
        if self.redis_url is None or time.monotonic() < self._redis_down_until:
            return None
        if self._redis is None:
            import redis.asyncio

            self._redis = redis.asyncio.Redis.from_url(
                self.redis_url, socket_timeout=REDIS_TIMEOUT, socket_connect_timeout=REDIS_TIMEOUT
            )
        return self._redis

    def _failed(self, exc: Exception) -> None:
        if time.monotonic() >= self._redis_down_until:
            log.warning("config version in Redis unreachable (%s); checking the database instead", type(exc).__name__)
        self._redis_down_until = time.monotonic() + REDIS_BACKOFF

    async def aclose(self) -> None:
        if self._redis is not None:
            await self._redis.aclose()
            self._redis = None


_RAISE = """
local current = tonumber(redis.call('GET', KEYS[1]) or '0')
if tonumber(ARGV[1]) > current then redis.call('SET', KEYS[1], ARGV[1]) end
return current
"""
