"""Running a panel's seats: each takes a slot under the limits it is paced by (bench/pacing.py),
then is called. A seat whose model is cooling down after a 429, or gets no slot, is not called: it
is recorded as `cooling` or `paced`, with the time its model frees up; a retired member or nominee
is recorded as `retired`, not called either.

Who waits for a slot: members and nominees, up to the seat timeout (the caller asked for them by
name; a panel of one member would otherwise have no seat at all). Explorers never wait: each takes
its slot at once or is listed as paced, and the next spare takes the seat. Nobody waits out a
cooldown: the provider said stop.

In a collection with stand-ins, a member whose slot would not free up within the seat timeout is
listed as paced and its place goes to a stand-in (the plan's reserves, best first); stand-ins
never wait either: each takes its slot at once, or the next reserve takes the seat.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import replace

from benchwarmers.bench.calls.call import CANCELLED, Cancelled, Pace
from benchwarmers.bench.calls.service import ModelCaller
from benchwarmers.bench.core.outcomes import SeatOutcome
from benchwarmers.bench.evidence.retirement import retired_note
from benchwarmers.bench.pacing import Pacer, Refusal, Slot, scopes_of
from benchwarmers.bench.panels.ids import seat_call
from benchwarmers.bench.panels.prepare import PreparedPanel
from benchwarmers.bench.panels.seating import SPARES, Candidate, Seat, SeatPlan, best_first, family_of
from benchwarmers.bench.snapshot import Snapshot
from benchwarmers.store.calls import RETIRED


class ClientGone:
    """Set once the client that asked for a panel has gone away. What waits on it is called back at
    once, in the setter's turn: no task per panel sits waiting for a client that nearly always stays.

    With `linger` (a client that may retry: it sent an Idempotency-Key or an SDK's retry count), a
    client leaving is not yet the end: the seats run on for up to `linger` seconds, so the retry,
    which attaches to this panel, gets every seat's answer; only then are those still running
    cancelled. `done` says the panel no longer needs either."""

    def __init__(self, linger: float = 0.0) -> None:
        self.linger = linger
        self._gone = False
        self._left = False
        self._timer: asyncio.TimerHandle | None = None
        self._callbacks: list[Callable[[], None]] = []

    def set(self) -> None:
        """The client left: cancel now, or after the linger."""
        if self._left or self._gone:
            return
        self._left = True
        if self.linger > 0:
            self._timer = asyncio.get_running_loop().call_later(self.linger, self._cancel)
        else:
            self._cancel()

    def _cancel(self) -> None:
        self._gone, self._timer = True, None
        for callback in self._callbacks:
            callback()
        self._callbacks.clear()

    def done(self) -> None:
        """The panel is over: nothing is left to cancel, whether the client has left or leaves now."""
        self._left = True
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def is_set(self) -> bool:
        """Whether what is still running is cancelled: the client went and no retry is waited for."""
        return self._gone

    def on_set(self, callback: Callable[[], None]) -> Callable[[], None]:
        """Call `callback` when the seats are cancelled (now, if they are); returns what forgets it."""
        if self._gone:
            callback()
            return lambda: None
        self._callbacks.append(callback)
        return lambda: self._callbacks.remove(callback) if callback in self._callbacks else None


async def fill_explorers(pacer: Pacer, snapshot: Snapshot, plan: SeatPlan, tokens: int) -> list[tuple[Seat, Pace]]:
    """Each chosen explorer with a slot taken now, or refused (listed as paced); for each refused,
    the next spare that gets a slot, of a family no seated explorer has. Numbered as listed."""
    filled: list[tuple[Seat, Pace]] = []
    families: set[str] = set()
    for seat in (s for s in plan.seats if s.kind == "explorer"):
        found = await pacer.take(scopes_of(snapshot, seat.alias), tokens)
        filled.append((replace(seat, index=len(filled) + 1), found))
        if isinstance(found, Slot):
            families.add(seat.family)
    empty = sum(isinstance(found, Refusal) for _, found in filled)
    for spare in plan.spares:
        if empty == 0:
            break
        if spare.family in families:
            continue
        found = await pacer.take(scopes_of(snapshot, spare.alias), tokens)
        if isinstance(found, Slot):
            filled.append((replace(spare, index=len(filled) + 1), found))
            families.add(spare.family)
            empty -= 1
    return filled


async def stand_in_seats(
    pacer: Pacer,
    snapshot: Snapshot,
    panel: PreparedPanel,
    explorers: Sequence[tuple[Seat, Pace]],
    seat_timeout: float,
) -> list[tuple[Seat, Pace | None]]:
    """Members, nominees and stand-ins with what each was paced by. A stand-in the plan chose takes
    its slot now, or the first reserve that gets one does; a member the pacer turns away for longer
    than the seat timeout keeps its seat (paced) and the first reserve with a slot stands in for it."""
    plan, now = panel.plan, time.time()
    seated = {s.alias for s in plan.seats} | {s.alias for s, _ in explorers}
    index = sum(s.kind == "standin" for s in plan.seats)
    reserves: list[Candidate] | None = None  # ranked at the first need: most panels have none

    async def reserve_with_slot(member: str, index: int) -> tuple[Seat, Slot] | None:
        nonlocal reserves
        if reserves is None:
            reserves = best_first((c for c in plan.reserves if c.alias not in seated), SPARES)
        while reserves:
            reserve = reserves.pop(0)
            found = await pacer.take(scopes_of(snapshot, reserve.alias), panel.tokens)
            if isinstance(found, Slot):
                return Seat("standin", index, reserve.alias, family=family_of(reserve), stands_in_for=member), found
        return None

    seats: list[tuple[Seat, Pace | None]] = []
    for seat in (s for s in plan.seats if s.kind != "explorer"):
        if seat.kind == "standin":
            pace: Pace = await pacer.take(scopes_of(snapshot, seat.alias), panel.tokens)
            member = seat.stands_in_for or ""
            if isinstance(pace, Refusal) and (found := await reserve_with_slot(member, seat.index)) is not None:
                seat, pace = found
            seats.append((seat, pace))
            continue
        stood_for = any(s.stands_in_for == seat.alias for s in plan.seats)
        if seat.kind != "member" or seat.retired or stood_for or snapshot.models[seat.alias].cooling(now):
            seats.append((seat, None))
            continue
        taken = await pacer.take(scopes_of(snapshot, seat.alias), panel.tokens)
        if isinstance(taken, Slot):
            seats.append((seat, taken))
        elif taken.frees_at is not None and taken.frees_at <= now + seat_timeout:
            seats.append((seat, None))  # frees up in time: the member waits for it, as without stand-ins
        else:
            seats.append((seat, taken))
            if (found := await reserve_with_slot(seat.alias, index + 1)) is not None:
                index += 1
                seats.append(found)
    return seats


async def _retired(snapshot: Snapshot, panel: PreparedPanel, seat: Seat) -> SeatOutcome:
    """A retired member or nominee keeps its seat, not asked: it kept failing (bench/evidence/retirement.py)."""
    model = snapshot.models[seat.alias]
    call = seat_call(panel.panel_id, seat.kind, seat.index)
    return SeatOutcome(call, seat.kind, seat.alias, model.endpoint, RETIRED, 0.0, error=retired_note(model))


async def run_seats(
    caller: ModelCaller,
    snapshot: Snapshot,
    panel: PreparedPanel,
    seat_timeout: float,
    disconnected: ClientGone | None = None,
) -> list[SeatOutcome]:
    """Call every seat at once; when the client goes away, cancel those still running. Each seat's
    outcome comes back scrubbed (of the request's `panel.hidden` too)."""
    pacer = caller.pacer
    explorers = await fill_explorers(pacer, snapshot, panel.plan, panel.tokens)
    seats: list[tuple[Seat, Pace | None]]
    if panel.collection.get("stand_ins"):
        seats = await stand_in_seats(pacer, snapshot, panel, explorers, seat_timeout)
    else:
        seats = [(s, None) for s in panel.plan.seats if s.kind != "explorer"]
    seats += explorers
    tasks = [
        asyncio.ensure_future(
            _retired(snapshot, panel, seat)
            if seat.retired
            else caller.call(
                snapshot,
                alias=seat.alias,
                call=seat_call(panel.panel_id, seat.kind, seat.index),
                kind=seat.kind,
                body=panel.chat.parts_for(snapshot.models[seat.alias].model_id),
                seat_timeout=seat_timeout,
                tokens=panel.tokens,
                pace=pace,
                stands_in_for=seat.stands_in_for,
                hidden=panel.hidden,
            )
        )
        for seat, pace in seats
    ]

    def client_left() -> None:
        for task in tasks:
            task.cancel()  # a seat already done is left as it is

    forget = disconnected.on_set(client_left) if disconnected is not None else None
    try:
        # One wait for all the seats (a wait per finished seat re-registers on every one still running).
        await asyncio.gather(*tasks, return_exceptions=True)
    finally:
        if forget is not None:
            forget()
    outcomes = []
    for (seat, _), task in zip(seats, tasks, strict=True):
        exc = task.exception() if not task.cancelled() else None
        if isinstance(exc, Cancelled):
            outcomes.append(exc.outcome)
        elif task.cancelled() or exc is not None:
            model = snapshot.models[seat.alias]
            outcomes.append(
                SeatOutcome(
                    call=seat_call(panel.panel_id, seat.kind, seat.index),
                    seat=seat.kind,
                    alias=seat.alias,
                    endpoint=model.endpoint,
                    status="error",
                    seconds=0.0,
                    error=CANCELLED if task.cancelled() else f"internal error: {type(exc).__name__}",
                    stands_in_for=seat.stands_in_for,
                )
            )
        else:
            outcomes.append(task.result())
    return outcomes
