"""Writing finished panels with group commit.

Each panel must be durable before its reply leaves, but a commit per panel costs more than the
panel's own work under load. Panels that finish while a commit is in progress wait for the next
one and are written together: one transaction, one commit, each caller still waiting for its own.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING

from benchwarmers.bench.evidence.learning import learn_from_seats
from benchwarmers.store import calls
from benchwarmers.store.records import PanelRow, SeatRow

if TYPE_CHECKING:
    from benchwarmers.bench.panels.prepare import SeatOutcome
    from benchwarmers.bench.state import BenchState


@dataclass
class _Pending:
    panel: PanelRow
    seats: list[SeatRow]
    outcomes: list[SeatOutcome]
    now: float
    done: asyncio.Future[None]


class Recorder:
    def __init__(self, state: BenchState) -> None:
        self.state = state
        self._queue: list[_Pending] = []
        self._task: asyncio.Task[None] | None = None

    async def write(self, panel: PanelRow, seat_rows: list[SeatRow], outcomes: list[SeatOutcome], now: float) -> None:
        """Record one panel; returns once it is committed (raises if it could not be)."""
        loop = asyncio.get_running_loop()
        pending = _Pending(panel, seat_rows, outcomes, now, loop.create_future())
        self._queue.append(pending)
        if self._task is None or self._task.done():
            self._task = loop.create_task(self._drain())
        # Shielded: a caller that goes away must not cancel a commit that holds other panels.
        await asyncio.shield(pending.done)

    async def _drain(self) -> None:
        while self._queue:
            batch, self._queue = self._queue, []
            try:
                await self._commit(batch)
            except Exception:
                # Something in the batch is bad; write the others one by one so only it fails.
                for pending in batch:
                    try:
                        await self._commit([pending])
                    except Exception as exc:
                        pending.done.set_exception(exc)
                    else:
                        pending.done.set_result(None)
            else:
                for pending in batch:
                    pending.done.set_result(None)

    async def _commit(self, batch: list[_Pending]) -> None:
        snapshot = await self.state.snapshot()
        async with self.state.write() as conn:
            await calls.insert_panels(conn, [p.panel for p in batch], [row for p in batch for row in p.seats])
            for pending in batch:
                await learn_from_seats(conn, snapshot, pending.outcomes, pending.now, self.state.history)

    async def close(self) -> None:
        if self._task is not None and not self._task.done():
            await self._task
