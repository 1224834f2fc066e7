"""Requests a minute per gateway key, and failed admin logins per client, counted with `limits`.

Counters live in this process's memory (so they are per process) unless BENCHWARMERS_REDIS_URL
is set, when every process that shares the Redis shares the counts. The `redis` package is the
optional `redis` extra; it is imported only when a Redis URL is configured.
"""

from __future__ import annotations

import logging
import math
import time

from limits import RateLimitItem, RateLimitItemPerMinute
from limits.aio.strategies import MovingWindowRateLimiter

from benchwarmers.bench.pacing import limits_storage
from benchwarmers.errors import RateLimited

log = logging.getLogger("benchwarmers.ratelimit")

LOGIN_FAILURES_A_MINUTE = 10
_LOGIN = RateLimitItemPerMinute(LOGIN_FAILURES_A_MINUTE)
MAX_WAIT = 60


class RateLimits:
    def __init__(self, redis_url: str | None = None) -> None:
        self.shared = bool(redis_url)
        self.limiter = MovingWindowRateLimiter(limits_storage(redis_url))

    async def _wait(self, item: RateLimitItem, *ids: str) -> int:
        stats = await self.limiter.get_window_stats(item, *ids)
        return max(1, min(MAX_WAIT, math.ceil(stats.reset_time - time.time())))

    async def hit_key(self, name: str, rpm: int | None) -> None:
        """Count one request on a gateway key; 429 with Retry-After when it is past its rate."""
        if rpm is None:
            return
        item = RateLimitItemPerMinute(rpm)
        try:
            if await self.limiter.hit(item, "key", name):
                return
            wait = await self._wait(item, "key", name)
        except Exception as exc:
            # A shared counter that is down must not take the gateway down with it.
            log.warning("rate-limit storage failed (%s); request allowed", type(exc).__name__)
            return
        raise RateLimited(
            f"gateway key {name!r} may make {rpm} request{'s' if rpm != 1 else ''} a minute; retry in {wait} s",
            code="rate_limit_exceeded",
            headers={"Retry-After": str(wait), "x-should-retry": "false"},
        )

    async def login_blocked(self, client: str) -> int | None:
        """Seconds to wait before this client may try the admin token again, or None."""
        try:
            if await self.limiter.test(_LOGIN, "login", client):
                return None
            return await self._wait(_LOGIN, "login", client)
        except Exception as exc:
            log.warning("rate-limit storage failed (%s); login attempt allowed", type(exc).__name__)
            return None

    async def login_failed(self, client: str) -> None:
        try:
            await self.limiter.hit(_LOGIN, "login", client)
        except Exception as exc:
            log.warning("rate-limit storage failed (%s)", type(exc).__name__)
