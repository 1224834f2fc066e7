"""What real seats teach the bench: cooldowns after rate limits, lower windows after context errors,
the rate limits providers announce in their headers, and models that keep failing (retired: see
retirement.py).

The arithmetic is pure; `learn_from_seats` writes what it decides. It runs after every panel, so it
writes only what changed: streaks are counted in the database (the cached snapshot may be behind),
and rate limits are written when they differ from what is known.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

from sqlalchemy.ext.asyncio import AsyncConnection

from benchwarmers.bench.evidence.retirement import retire
from benchwarmers.bench.panels.parse import request_text
from benchwarmers.nouns.seats import SeatStatus
from benchwarmers.store import roster
from benchwarmers.store.changes import record_change
from benchwarmers.upstream.failures import FailureKind, caused_by_request, context_limit_in
from benchwarmers.upstream.ratelimits import announced_windows

if TYPE_CHECKING:
    from benchwarmers.bench.core.outcomes import SeatOutcome
    from benchwarmers.bench.history import SeatHistory
    from benchwarmers.bench.snapshot import ModelView, Snapshot

DEFAULT_COOLDOWN = 60.0
MAX_COOLDOWN = 24 * 3600.0

# The largest prompt a model has answered, in the prompt tokens its provider reported (the bench's
# estimate only when it reported none).
ANSWERED_FACT = "answered_tokens"


def _fact_int(model: ModelView, name: str) -> int:
    value = model.fact(name)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def cooldown_seconds(retry_after: float | None, streak: int) -> float:
    """How long to rest a model after its `streak`-th 429 in a row.

    The provider's own wait wins when it gives one; otherwise 60 s. Repeated 429s double the
    rest each time (a model that keeps refusing is not asked again soon), capped at a day.
    """
    base = retry_after if retry_after and retry_after > 0 else DEFAULT_COOLDOWN
    return cast(float, min(MAX_COOLDOWN, base * 2 ** max(0, min(streak - 1, 10))))


def lowered_window(current: int | None, learned: int, floor: int = 0) -> int | None:
    """A window learned from an error only ever lowers what the bench believes, and never below a
    prompt the model has already answered (an error cannot un-answer it)."""
    if learned <= 0 or learned < floor:
        return None
    if current is None or learned < current:
        return learned
    return None


def stated_window(error: str, limit: int | None, request_text: str) -> int | None:
    """The window a context error states, when the caller cannot have written it: a provider that
    quotes the caller's input would otherwise let any caller set a model's window."""
    if not limit or not error:
        return None
    if context_limit_in(request_text) is not None or str(limit) in request_text:
        return None
    return limit


def merged_limits(known: Any, headers: Mapping[str, str], now: float | None = None) -> dict[str, int | str] | None:
    """The model's known rate limits updated from one response's headers; None when nothing changed.

    Limits are kept per window (`requests`, `tokens`, `requests-day`, `tokens-minute`, `req-minute`...),
    with `resets-day` when a reset names a fixed hour; what remains changes on every call and is not
    kept. A response that names only some windows leaves the others as they were.
    """
    if not headers:
        return None
    announced = announced_windows(headers, now)
    if not announced:
        return None
    current = dict(known) if isinstance(known, Mapping) else {}
    merged = {**current, **announced}
    return merged if merged != current else None


def answered_tokens(usage: Mapping[str, Any] | None, estimate: int) -> int:
    """How large a prompt the model answered: the prompt tokens its provider counted, else the bench's
    estimate (which errs high: a floor from it would hide a real window below the estimate)."""
    reported = (usage or {}).get("prompt_tokens")
    if isinstance(reported, int) and not isinstance(reported, bool) and reported > 0:
        return reported
    return estimate


def _failed(outcome: SeatOutcome) -> bool:
    # A seat cancelled because the client left says nothing about the model.
    return outcome.failure is not None or outcome.status == SeatStatus.empty


async def _learn_limits(conn: AsyncConnection, model: ModelView, headers: Mapping[str, str]) -> None:
    limits = merged_limits(model.fact("rate_limits"), headers)
    if limits is None:
        return
    await roster.set_fact(conn, model.pk, "rate_limits", "headers", limits)
    await record_change(
        conn,
        actor="bench",
        subject="model",
        name=model.alias,
        action="limits",
        before={"rate_limits": model.fact("rate_limits")},
        after={"rate_limits": limits},
    )


async def _learn_window(
    conn: AsyncConnection,
    model: ModelView,
    alias: str,
    error: str,
    limit: int,
    request: Mapping[str, Any] | None,
    history: SeatHistory | None,
) -> None:
    text = request_text((request or {}).get("messages") or [])
    stated = stated_window(error, limit, text)
    floor = max(history.answered.get(model.alias, 0) if history else 0, _fact_int(model, ANSWERED_FACT))
    lower = lowered_window(model.window, stated, floor) if stated else None
    if lower is None:
        return
    await roster.set_fact(conn, model.pk, "context_window", "learned", lower)
    await record_change(
        conn,
        actor="bench",
        subject="model",
        name=alias,
        action="learned",
        before={"context_window": model.window},
        after={"context_window": lower},
    )


async def learn_from_seats(
    conn: AsyncConnection,
    snapshot: Snapshot,
    outcomes: Sequence[SeatOutcome],
    now: float,
    history: SeatHistory | None = None,
    *,
    request: Mapping[str, Any] | None = None,
    estimate: int = 0,
) -> None:
    """Apply what this panel's seats taught: rate limits, cooldowns, lower windows, failure streaks,
    and the largest prompt each model has answered (the floor under any window learned later)."""
    failing_after = snapshot.gateway.failing_after
    answered: list[int] = []
    for outcome in outcomes:
        model = snapshot.models.get(outcome.alias)
        if model is None:
            continue
        await _learn_limits(conn, model, outcome.headers)
        if outcome.status == SeatStatus.ok:
            answered.append(model.pk)
            size = answered_tokens(outcome.usage, estimate)
            if history is not None and size > history.answered.get(model.alias, 0):
                history.answered[model.alias] = size
                await roster.set_fact(conn, model.pk, ANSWERED_FACT, "learned", size)
            continue
        if not _failed(outcome):
            continue
        failure = outcome.failure
        if failure is not None and failure.kind is FailureKind.context_too_long and failure.context_limit:
            await _learn_window(conn, model, outcome.alias, outcome.error, failure.context_limit, request, history)
        # A refusal the request caused says nothing of the model: no streak starts or ends with it.
        if failure is not None and caused_by_request(failure):
            continue
        rate_limited = failure is not None and failure.kind is FailureKind.rate_limited
        streak, limited = await roster.count_failure(conn, model.pk, outcome.error, rate_limited)
        if history is not None:
            history.streak_started(model.pk)
        if rate_limited:
            assert failure is not None
            until = now + cooldown_seconds(failure.retry_after, limited)
            await roster.update_model(conn, model.pk, cooldown_until=until)
            await record_change(
                conn,
                actor="bench",
                subject="model",
                name=outcome.alias,
                action="cooldown",
                after={"until": until, "streak": limited},
            )
        # Once per streak: a retired model is not asked again until a probe or the user restores it.
        if streak >= failing_after and not model.retired:
            await retire(conn, model, streak=streak, error=outcome.error, now=now)
    if history is not None:
        answered = history.streaks_ended(answered)
    await roster.end_streaks(conn, answered)
