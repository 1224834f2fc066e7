"""The watch that runs inside `benchwarmers serve`: every minute it probes the retired models whose
turn has come (bench/upkeep/probe.py) and checks the data folder's free space (bench/upkeep/disk.py),
and every ten minutes it checks the verdicts owed
(bench/upkeep/owed.py) and makes the decisive swaps of collections with auto_swap on
(bench/evidence/swaps.py).

The clock and the sleep are injectable: tests drive it without waiting. Nothing it meets stops it
(a database away for a moment, a provider that hangs up), and nothing it does can stop the server.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from benchwarmers.bench.core.background import BackgroundJob
from benchwarmers.bench.evidence.swaps import SWAP_EVERY, auto_swap
from benchwarmers.bench.upkeep.disk import check_disk
from benchwarmers.bench.upkeep.owed import check_owed
from benchwarmers.bench.upkeep.probe import probe_due

if TYPE_CHECKING:
    from benchwarmers.bench.state import BenchState

log = logging.getLogger("benchwarmers.watch")

TICK = 60.0  # a probe is late by a minute at most; a minute's sleep costs nothing
OWED_EVERY = 600.0


class Watch(BackgroundJob):
    task_name = "benchwarmers-watch"

    def __init__(
        self,
        state: BenchState,
        *,
        clock: Callable[[], float] = time.time,
        sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
        tick: float = TICK,
        owed_every: float = OWED_EVERY,
        swap_every: float = SWAP_EVERY,
    ) -> None:
        self.state = state
        self.clock = clock
        self.sleep = sleep
        self.tick = tick
        self.owed_every = owed_every
        self.swap_every = swap_every
        self._swap_due = 0.0
        self.rounds = 0
        self.failures = 0
        self._owed_due = 0.0  # at once on start

    async def run(self) -> None:
        while True:
            await self.run_once()
            await self.sleep(self.tick)

    async def run_once(self) -> None:
        """One round: due probes, then the owed check when its turn has come (each on its own: one
        failing does not keep the other from running)."""
        now = self.clock()
        await self._guarded(self._probe(now))
        await self._guarded(self._disk(now))
        if now >= self._owed_due:
            self._owed_due = now + self.owed_every
            await self._guarded(self._owed(now))
        if now >= self._swap_due:
            self._swap_due = now + self.swap_every
            await self._guarded(self._swaps())
        self.rounds += 1

    async def _probe(self, now: float) -> None:
        for probed in await probe_due(self.state, now):
            if probed.answered:
                log.info("%s answered its probe and is back", probed.alias)
            else:
                log.info("%s did not answer its probe (%s)", probed.alias, probed.error)

    async def _disk(self, now: float) -> None:
        if changed := await check_disk(self.state, now):
            log.warning("low-disk alert %s", changed)

    async def _owed(self, now: float) -> None:
        if changed := await check_owed(self.state, now):
            log.info("verdicts-owed alert %s", changed)

    async def _swaps(self) -> None:
        for swap in await auto_swap(self.state):
            log.info(
                "auto_swap: %s replaces %s (P = %s on %s)", swap["explorer"], swap["member"], swap["p"], swap["shape"]
            )

    async def _guarded(self, job: Awaitable[None]) -> None:
        try:
            await job
        except Exception as exc:  # the database away for a moment, say: the next round tries again
            self.failures += 1
            log.warning("watch job failed (%s); next try in %.0f s", type(exc).__name__, self.tick)
