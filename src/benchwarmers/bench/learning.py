"""What a failed seat teaches the bench: cooldowns after rate limits, lower windows after
context errors. Pure arithmetic; the panel applies it."""

from __future__ import annotations

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
