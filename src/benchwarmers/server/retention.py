"""The daily retention run inside `benchwarmers serve`: with the gateway setting `retention_days`
above 0, prompts and answers older than that are purged (see `store.calls.purge_before`) and the
database rewritten so they are gone from its files. Checked at start and then once a day; the
setting is read each time, so changing it needs no restart. Nothing it meets stops the server."""

from __future__ import annotations

import asyncio
import logging
import time
from typing import TYPE_CHECKING

from benchwarmers.store import calls
from benchwarmers.store.changes import record_change

if TYPE_CHECKING:
    from benchwarmers.bench.core import Bench

log = logging.getLogger("benchwarmers.retention")

DAY = 86_400.0


async def apply_retention(bench: Bench) -> dict[str, int] | None:
    """Purge what is older than `retention_days`; None when the setting keeps everything."""
    days = (await bench.snapshot()).gateway["retention_days"]
    if not days:
        return None
    now = time.time()
    cutoff = now - days * DAY
    counts = await calls.purge_before(bench.write, cutoff, now)
    if counts["panels"]:
        async with bench.write() as conn:
            after = {"before": cutoff, "retention_days": days, **counts}
            await record_change(conn, actor=bench.actor, subject="data", name="calls", action="purge", after=after)
        assert bench.engine is not None
        await calls.reclaim_space(bench.engine)
        log.info("retention: purged %d panels older than %s days", counts["panels"], days)
    return counts


async def retention_loop(bench: Bench, every: float = DAY) -> None:
    while True:
        try:
            await apply_retention(bench)
        except Exception as exc:  # the database away for a moment, say: try again tomorrow
            log.warning("retention run failed (%s); next try in a day", type(exc).__name__)
        await asyncio.sleep(every)
