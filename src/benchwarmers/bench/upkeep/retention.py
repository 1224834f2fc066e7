"""Forgetting old prompts and answers while keeping what the evidence is computed from.

`purge` empties what was said before a cutoff (see `store.calls.purge_before` for what is kept)
and rewrites the database so it is gone from its files; `retention_loop` applies the gateway
setting `retention_days` inside `benchwarmers serve`, daily (the setting is read each time, so
changing it needs no restart, and nothing it meets stops the server). Each run is remembered in the
database, and the next is due a day later: a restart, or `benchwarmers upkeep` from an hourly timer,
does not purge and rewrite the files again within the day.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection

from benchwarmers.bench.state import BenchState
from benchwarmers.store import calls
from benchwarmers.store import gateway_settings as setting_rows
from benchwarmers.store.changes import record_change

log = logging.getLogger("benchwarmers.retention")

DAY = 86_400.0
LAST_RUN_KEY = "retention_run"  # settings row: when retention last ran (bookkeeping, not configuration)


async def purgeable(state: BenchState, cutoff: float) -> dict[str, int]:
    """How many panels (seats, verdicts) from before `cutoff` still hold their prompts."""
    async with state.read() as conn:
        return await calls.purgeable(conn, cutoff)


async def purge(
    state: BenchState,
    cutoff: float,
    *,
    actor: str | None = None,
    progress: Callable[[dict[str, int]], Any] | None = None,
    **logged: Any,
) -> tuple[dict[str, int], bool]:
    """Empty what was said before `cutoff`, log it, reclaim the space: (counts, whether the files
    were rewritten completely)."""
    now = time.time()
    counts = await calls.purge_before(state.write, cutoff, now, progress)
    if not counts["panels"]:
        return counts, True
    async with state.write() as conn:
        after = {"before": cutoff, **logged, **counts}
        await record_change(conn, actor=actor or state.actor, subject="data", name="calls", action="purge", after=after)
    if state.engine is None:
        return counts, False
    return counts, await calls.reclaim_space(state.engine)


async def apply_retention(state: BenchState) -> dict[str, int] | None:
    """Purge what is older than `retention_days`; None when the setting keeps everything."""
    days = (await state.snapshot()).gateway.retention_days
    if not days:
        return None
    now = time.time()
    counts, _ = await purge(state, now - days * DAY, retention_days=days)
    async with state.write() as conn:
        await setting_rows.put_setting(conn, LAST_RUN_KEY, {"at": now})
    if counts["panels"]:
        log.info("retention: purged %d panels older than %s days", counts["panels"], days)
    return counts


async def last_retention(conn: AsyncConnection) -> float | None:
    """When retention last ran (by a server or `benchwarmers upkeep`), if it ever did."""
    return (await setting_rows.get_setting(conn, LAST_RUN_KEY, {}) or {}).get("at")


async def retention_loop(state: BenchState, every: float = DAY) -> None:
    while True:
        wait = every
        try:
            async with state.read() as conn:
                last = await last_retention(conn)
            # A run by `benchwarmers upkeep` (or before a restart) counts: due a day after it.
            due_in = 0.0 if last is None else last + every - time.time()
            if due_in > 0:
                wait = min(due_in, every)
            else:
                await apply_retention(state)
        except Exception as exc:  # the database away for a moment, say: try again tomorrow
            log.warning("retention run failed (%s); next try in a day", type(exc).__name__)
        await asyncio.sleep(wait)
