"""Reservations that failed panels leave behind, dropped so that no retry waits for them or fails.

A panel's id is reserved (a `panels` row without a response) before any model is called, and a
panel that fails before it is recorded drops that row: a retry, on any worker, then runs afresh
instead of waiting for a panel no one runs. When the database is what failed, the drop fails too.
This process then remembers the row and drops it as soon as the database takes a write again (a
retry that finds one this process remembers drops it at once); a row no process remembers (its
process died) is waited for at most the panel's bound from its reservation, then dropped by the
retry that waited (`Panels.replay`).
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

from benchwarmers.nouns.gateway import GatewaySettings
from benchwarmers.store import calls

if TYPE_CHECKING:
    from benchwarmers.bench.state import BenchState

log = logging.getLogger("benchwarmers.panels")
FIRST_DELAY = 0.25  # seconds before the first try again of a drop that failed
MOST_DELAY = 5.0  # the backoff's ceiling while the database stays away


def panel_bound(gateway: GatewaySettings) -> float:
    """The longest a panel runs from its reservation to its record: the decision model, the seats,
    a merger, then recording. A reservation older than this is one whose panel will never be recorded."""
    return gateway.decision_timeout + 2 * gateway.seat_timeout + 30


class Reservations:
    def __init__(self, state: BenchState) -> None:
        self.state = state
        self._orphans: set[str] = set()  # reserved ids whose panels failed and whose drop failed
        self._retrying: asyncio.Task[None] | None = None

    async def drop(self, panel_id: str) -> None:
        """Drop the reservation of a panel that failed before it was recorded; when the database
        will not take the write, remember it and keep trying in the background (never raises)."""
        try:
            await self._delete([panel_id])
        except Exception as exc:
            log.warning(
                "could not drop the reservation of failed panel %s (%s); trying again until the database takes it",
                panel_id,
                type(exc).__name__,
            )
            self._orphans.add(panel_id)
            if self._retrying is None or self._retrying.done():
                self._retrying = asyncio.create_task(self._retry())

    def orphaned(self, panel_id: str) -> bool:
        """Whether `panel_id` is a reservation this process failed to drop (its panel is over)."""
        return panel_id in self._orphans

    async def reclaim(self, panel_id: str) -> None:
        """Drop a reservation whose panel will never be recorded (raises when the database still
        cannot be written: the caller's request fails as any write would)."""
        await self._delete([panel_id])
        self._orphans.discard(panel_id)

    async def _retry(self) -> None:
        delay = FIRST_DELAY
        while self._orphans:
            await asyncio.sleep(delay)
            waiting = sorted(self._orphans)
            try:
                await self._delete(waiting)
            except Exception:
                delay = min(delay * 2, MOST_DELAY)
                continue
            self._orphans.difference_update(waiting)
            log.info("dropped %d reservation(s) of failed panels once the database took writes again", len(waiting))

    async def _delete(self, panel_ids: list[str]) -> None:
        async with self.state.write() as conn:
            await calls.drop_reservations(conn, panel_ids)

    def close(self) -> None:
        """Stop trying (the process is stopping: what is left ages out of every retry's look)."""
        if self._retrying is not None:
            self._retrying.cancel()
