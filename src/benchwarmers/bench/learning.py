"""What a failed seat teaches the bench: cooldowns after rate limits, lower windows after
context errors. The arithmetic is pure; `learn_from_seats` writes what it decides."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from sqlalchemy.ext.asyncio import AsyncConnection

from benchwarmers.store import roster
from benchwarmers.store.changes import record_change
from benchwarmers.upstream.failures import FailureKind

if TYPE_CHECKING:
    from benchwarmers.bench.config import Snapshot
    from benchwarmers.bench.panel import SeatOutcome

DEFAULT_COOLDOWN = 60.0
MAX_COOLDOWN = 24 * 3600.0


def cooldown_seconds(retry_after: float | None, streak: int) -> float:
    """How long to rest a model after its `streak`-th 429 in a row.

    The provider's own wait wins when it gives one; otherwise 60 s. Repeated 429s double the
    rest each time (a model that keeps refusing is not asked again soon), capped at a day.
    """
    base = retry_after if retry_after and retry_after > 0 else DEFAULT_COOLDOWN
    return min(MAX_COOLDOWN, base * 2 ** max(0, min(streak - 1, 10)))


def lowered_window(current: int | None, learned: int) -> int | None:
    """A window learned from an error only ever lowers what the bench believes."""
    if learned <= 0:
        return None
    if current is None or learned < current:
        return learned
    return None


async def learn_from_seats(
    conn: AsyncConnection, snapshot: Snapshot, outcomes: Sequence[SeatOutcome], now: float
) -> None:
    """Apply what this panel's seats taught: cooldowns, lower windows, failure streaks."""
    for outcome in outcomes:
        model = snapshot.models.get(outcome.alias)
        if model is None:
            continue
        failure = outcome.failure
        if failure is not None and failure.kind is FailureKind.rate_limited:
            row = await roster.get_model(conn, outcome.alias)
            streak = (row["rate_limited_streak"] if row else 0) + 1
            until = now + cooldown_seconds(failure.retry_after, streak)
            await roster.update_model(
                conn,
                model.pk,
                cooldown_until=until,
                rate_limited_streak=streak,
                failure_streak=model.failure_streak + 1,
                last_error=outcome.error,
            )
            await record_change(
                conn,
                actor="bench",
                subject="model",
                name=outcome.alias,
                action="cooldown",
                after={"until": until, "streak": streak},
            )
        elif failure is not None and failure.kind is FailureKind.context_too_long and failure.context_limit:
            lower = lowered_window(model.window, failure.context_limit)
            if lower is not None:
                await roster.set_fact(conn, model.pk, "context_window", "learned", lower)
                await record_change(
                    conn,
                    actor="bench",
                    subject="model",
                    name=outcome.alias,
                    action="learned",
                    before={"context_window": model.window},
                    after={"context_window": lower},
                )
            await roster.update_model(conn, model.pk, failure_streak=model.failure_streak + 1, last_error=outcome.error)
        elif outcome.status == "error":
            await roster.update_model(conn, model.pk, failure_streak=model.failure_streak + 1, last_error=outcome.error)
        elif model.failure_streak or model.cooldown_until:
            await roster.update_model(conn, model.pk, failure_streak=0, rate_limited_streak=0)
