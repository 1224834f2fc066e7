"""Writing panels with group commit: each panel's id reserved before its seats are called, and the
finished panel with every seat before its reply leaves.

Both writes must be durable before the caller goes on, but a commit per write costs more than the
panel's own work under load. Writes that arrive while a commit is in progress wait for the next
one and go together: one transaction, one commit, each caller still waiting for its own.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from benchwarmers.bench.panels.learning import learn_from_seats
from benchwarmers.store import calls
from benchwarmers.store.records import PanelRow, SeatRow

if TYPE_CHECKING:
    from benchwarmers.bench.core.outcomes import SeatOutcome
    from benchwarmers.bench.state import BenchState


@dataclass
class _Pending:
    """One write waiting for the next commit: a panel id to reserve, or a finished panel."""

    done: asyncio.Future[None]
    reservation: Mapping[str, Any] | None = None
    panel: PanelRow | None = None
    seats: list[SeatRow] = field(default_factory=list)
    outcomes: list[SeatOutcome] = field(default_factory=list)
    now: float = 0.0
    estimate: int = 0


def _settle(done: asyncio.Future[None], error: Exception | None = None) -> None:
    if done.done():  # its caller went away (cancelled)
        return
    if error is None:
        done.set_result(None)
    else:
        done.set_exception(error)


class Recorder:
    def __init__(self, state: BenchState) -> None:
        self.state = state
        self._queue: list[_Pending] = []
        self._task: asyncio.Task[None] | None = None

    async def reserve(self, row: Mapping[str, Any]) -> None:
        """Reserve a panel's id; raises PanelIdTaken when another process holds it."""
        await self._enqueue(_Pending(asyncio.get_running_loop().create_future(), reservation=row))

    async def write(
        self,
        panel: PanelRow,
        seat_rows: list[SeatRow],
        outcomes: list[SeatOutcome],
        now: float,
        estimate: int = 0,
    ) -> None:
        """Record one finished panel; returns once it is committed (raises if it could not be)."""
        done = asyncio.get_running_loop().create_future()
        await self._enqueue(_Pending(done, panel=panel, seats=seat_rows, outcomes=outcomes, now=now, estimate=estimate))

    async def _enqueue(self, pending: _Pending) -> None:
        loop = asyncio.get_running_loop()
        self._queue.append(pending)
        self.state.metrics.queue.inc()
        if self._task is None or self._task.done():
            self._task = loop.create_task(self._drain())
        # The commit runs in the drain task, so a caller that goes away (cancelling its own future)
        # cancels nothing that holds other panels; `_settle` skips a future no one waits for.
        await pending.done

    async def _drain(self) -> None:
        while self._queue:
            batch, self._queue = self._queue, []
            self.state.metrics.queue.dec(len(batch))
            try:
                await self._commit(batch)
            except Exception:
                # Something in the batch is bad; write the others one by one so only it fails.
                for pending in batch:
                    try:
                        await self._commit([pending])
                    except Exception as exc:
                        _settle(pending.done, exc)
                    else:
                        _settle(pending.done)
            else:
                for pending in batch:
                    _settle(pending.done)

    async def _commit(self, batch: list[_Pending]) -> None:
        finished = [p for p in batch if p.panel is not None]
        # What the seats taught is weighed against the current config; reservations need none.
        snapshot = await self.state.snapshot() if finished else None
        started = time.perf_counter()
        async with self.state.write() as conn:
            await calls.reserve_panels(conn, [p.reservation for p in batch if p.reservation is not None])
            rows = [p.panel for p in finished if p.panel is not None]
            await calls.finish_panels(conn, rows, [row for p in finished for row in p.seats])
            for pending in finished:
                assert snapshot is not None
                await learn_from_seats(
                    conn,
                    snapshot,
                    pending.outcomes,
                    pending.now,
                    self.state.history,
                    request=pending.panel["request"] if pending.panel is not None else None,
                    estimate=pending.estimate,
                )
        self.state.metrics.commit_seconds.observe(time.perf_counter() - started)
        self.state.metrics.commit_writes.inc(len(batch))

    async def close(self) -> None:
        if self._task is not None and not self._task.done():
            await self._task
