"""What `GET /readyz` checks: one function per thing the bench cannot serve without.

A check returns None when all is well, else one short reason (`"database: ..."`). `/readyz` is
open in every mode, so a reason names what is wrong and never an address, a path or a URL
(those are in the server's log). Adding a check is one function here and its name in CHECKS.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Awaitable, Callable

from benchwarmers.bench.pacing import SharedStoreUnavailable
from benchwarmers.bench.upkeep.disk import readiness as space_readiness
from benchwarmers.server.startup import Startup

log = logging.getLogger("benchwarmers.server")

CHECK_SECONDS = 2.0  # a check that takes longer counts as failed: a balancer's probe must not hang


async def database(startup: Startup) -> str | None:
    if not startup.opened:  # the log has each attempt and its error
        return "database: not reachable since this process started; it opens by itself when the database answers"
    try:
        await startup.bench.state.ping()
    except Exception as exc:
        log.warning("database not reachable: %s", type(exc.__cause__ or exc).__name__)
        return "database: not reachable; requests that need it get 503 until it answers"
    return None


async def redis(startup: Startup) -> str | None:
    """BENCHWARMERS_REDIS_URL, when set: panels are refused while it does not answer."""
    try:
        await startup.bench.state.pacer.ensure_shared()
    except SharedStoreUnavailable:
        return "redis: the shared rate-limit store is not answering; panels are refused until it does"
    return None


async def disk(startup: Startup) -> str | None:
    """The data folder must be there, writable (secret.key, the metrics, SQLite's files) and not full."""
    home = startup.bench.settings.home
    try:
        os.stat(home)  # there at all (an unmounted volume, a folder removed)
        read_only = hasattr(os, "statvfs") and bool(os.statvfs(home).f_flag & os.ST_RDONLY)  # POSIX only
    except OSError as exc:
        return f"disk: the data folder is missing or cannot be read ({type(exc).__name__})"
    if read_only:
        return "disk: the data folder is on a read-only filesystem"
    if not os.access(home, os.W_OK | os.X_OK):
        return "disk: the data folder is not writable by this process"
    if startup.opened and (space := space_readiness(startup.bench.state)):  # full, or nearly
        return f"disk: {space}"
    return None


Check = Callable[[Startup], Awaitable[str | None]]
CHECKS: tuple[Check, ...] = (database, redis, disk)


async def _bounded(check: Check, startup: Startup) -> str | None:
    try:
        async with asyncio.timeout(CHECK_SECONDS):
            return await check(startup)
    except TimeoutError:
        return f"{check.__name__}: no answer within {CHECK_SECONDS:.0f} s"


async def reasons(startup: Startup) -> list[str]:
    """Why this process is not ready, in CHECKS' order: empty when it is."""
    found = await asyncio.gather(*(_bounded(check, startup) for check in CHECKS))
    return [reason for reason in found if reason is not None]
