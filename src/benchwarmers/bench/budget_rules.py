"""What a daily budget may be and when its day starts: pure, so the CLI and the forms check a value
without the store (the counting is bench/budgets.py)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from benchwarmers.nouns.budgets import MAX_BUDGET, check_budget

__all__ = ["MAX_BUDGET", "check_budget", "day_start", "next_reset"]


def day_start(now: float, reset_hour: int = 0) -> float:
    """The latest reset at or before `now`: `reset_hour`:00 UTC today, or yesterday's."""
    moment = datetime.fromtimestamp(now, UTC)
    start = moment.replace(hour=reset_hour, minute=0, second=0, microsecond=0)
    if start > moment:
        start -= timedelta(days=1)
    return start.timestamp()


def next_reset(now: float, reset_hour: int = 0) -> float:
    return (datetime.fromtimestamp(day_start(now, reset_hour), UTC) + timedelta(days=1)).timestamp()
