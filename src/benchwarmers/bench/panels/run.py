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
from typing import Any

from benchwarmers.bench.clients import SeatClients
from benchwarmers.bench.core.outcomes import SeatOutcome
from benchwarmers.bench.evidence.retirement import retired_note
from benchwarmers.bench.pacing import Pacer, Refusal, Slot, scopes_of
from benchwarmers.bench.panels.ids import seat_call
from benchwarmers.bench.panels.prepare import PreparedPanel
from benchwarmers.bench.panels.seating import SPARES, Candidate, Seat, SeatPlan, best_first, family_of
from benchwarmers.bench.snapshot import Snapshot
from benchwarmers.store.calls import RETIRED
from benchwarmers.upstream.failures import FailureKind, UpstreamFailure

CANCELLED = "cancelled: client disconnected"


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


Pace = Slot | Refusal


def frees_in(frees_at: float | None, now: float) -> str:
    """`frees up in 4s (12:01:03 UTC)`: when a model that was not called may be called again."""
    if frees_at is None:
        return "no slot will fit it"
    clock = time.strftime("%H:%M:%S UTC", time.gmtime(frees_at))
    return f"frees up in {max(0.0, frees_at - now):.1f}s ({clock})"


def not_called(outcome: SeatOutcome, status: str, frees_at: float | None, why: str) -> SeatOutcome:
    """A seat whose model was not called: `paced` or `cooling`, and when it frees up."""
    outcome.status, outcome.frees_at = status, frees_at
    outcome.error = f"{why}; {frees_in(frees_at, time.time())}"
    return outcome


def used_tokens(usage: dict[str, Any] | None) -> int | None:
    """Tokens a reply says it used, if it says."""
    if not usage:
        return None
    total = usage.get("total_tokens")
    if isinstance(total, int):
        return total
    parts = [usage.get("prompt_tokens"), usage.get("completion_tokens")]
    return sum(p for p in parts if isinstance(p, int)) if any(isinstance(p, int) for p in parts) else None


async def call_model(
    clients: SeatClients,
    pacer: Pacer,
    snapshot: Snapshot,
    *,
    alias: str,
    call: str,
    kind: str,
    body: bytes | Sequence[bytes],
    seat_timeout: float,
    tokens: int,
    pace: Pace | None = None,
    wait: bool = True,
    stands_in_for: str | None = None,
) -> SeatOutcome:
    """One model call as a recorded outcome: failures become statuses, never exceptions.

    `pace` is a slot (or refusal) already taken for it; without one the call takes its own, waiting
    up to `seat_timeout` when `wait`. The wait counts towards the seat's timeout.
    """
    model = snapshot.models[alias]
    endpoint = snapshot.endpoints[model.endpoint]
    started = time.perf_counter()
    outcome = SeatOutcome(call=call, seat=kind, alias=alias, endpoint=endpoint.name, status="error", seconds=0.0)
    outcome.stands_in_for = stands_in_for
    if endpoint.key_refused:
        # Its key variable is not one the bench reads: the model is not asked without its key.
        failure = UpstreamFailure(FailureKind.auth, endpoint.key_refused)
        outcome.error, outcome.failure = str(failure), failure
        return outcome
    now = time.time()
    if model.cooling(now):
        return not_called(outcome, "cooling", model.cooldown_until, "cooling down after a rate limit (429)")
    try:
        if pace is None:
            scopes = scopes_of(snapshot, alias)
            pace = await (pacer.wait(scopes, tokens, now + seat_timeout) if wait else pacer.take(scopes, tokens))
        if isinstance(pace, Refusal):
            not_called(outcome, "paced", pace.frees_at, f"paced: {pace.why}")
            outcome.seconds = round(time.perf_counter() - started, 3)
            return outcome
        cap = snapshot.gateway["answer_cap_kb"] * 1024
        timeout = max(0.0, seat_timeout - pace.waited)
        result = await clients.chat(endpoint, body, timeout, cap, model.concurrency, model.output_cap)
    except UpstreamFailure as failure:
        outcome.error, outcome.failure, outcome.headers = str(failure), failure, failure.headers
        if failure.kind is FailureKind.timeout and isinstance(pace, Slot) and pace.waited > 0:
            outcome.error = f"timeout after {seat_timeout:g}s ({pace.waited:.1f}s of it waiting for a slot)"
    except asyncio.CancelledError:
        outcome.error = CANCELLED
        outcome.seconds = round(time.perf_counter() - started, 3)
        raise _Cancelled(outcome) from None
    else:
        outcome.answer, outcome.usage, outcome.headers = result.answer, result.usage, result.headers
        outcome.tool_calls, outcome.finish_reason = result.tool_calls, result.finish_reason
        outcome.truncated_at = result.truncated_at
        # A tool call is an answer: a seat that only calls a tool answered.
        outcome.status = "ok" if result.answer.strip() or result.tool_calls else "empty"
        await pacer.settle(pace, used_tokens(result.usage))
    await pacer.align(alias, outcome.headers, model.limits)
    outcome.seconds = round(time.perf_counter() - started, 3)
    return outcome


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


class _Cancelled(Exception):
    def __init__(self, outcome: SeatOutcome) -> None:
        super().__init__(outcome.call)
        self.outcome = outcome


async def run_seats(
    clients: SeatClients,
    pacer: Pacer,
    snapshot: Snapshot,
    panel: PreparedPanel,
    seat_timeout: float,
    disconnected: ClientGone | None = None,
) -> list[SeatOutcome]:
    """Call every seat at once; when the client goes away, cancel those still running."""
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
            else call_model(
                clients,
                pacer,
                snapshot,
                alias=seat.alias,
                call=seat_call(panel.panel_id, seat.kind, seat.index),
                kind=seat.kind,
                body=panel.chat.parts_for(snapshot.models[seat.alias].model_id),
                seat_timeout=seat_timeout,
                tokens=panel.tokens,
                pace=pace,
                stands_in_for=seat.stands_in_for,
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
        if isinstance(exc, _Cancelled):
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
