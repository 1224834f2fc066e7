"""What a daily budget may be and when its day starts: pure, so the CLI and the forms check a value
without the store (the counting is bench/budgets.py)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from benchwarmers.errors import InvalidRequest

MAX_BUDGET = 1_000_000_000


def day_start(now: float, reset_hour: int = 0) -> float:
    """The latest reset at or before `now`: `reset_hour`:00 UTC today, or yesterday's."""
    moment = datetime.fromtimestamp(now, UTC)
    start = moment.replace(hour=reset_hour, minute=0, second=0, microsecond=0)
    if start > moment:
        start -= timedelta(days=1)
    return start.timestamp()


def next_reset(now: float, reset_hour: int = 0) -> float:
    return (datetime.fromtimestamp(day_start(now, reset_hour), UTC) + timedelta(days=1)).timestamp()


def check_budget(value: Any, param: str) -> int | None:
    """A daily budget as given: None (or 0) is no budget; else a whole number, or a refusal naming `param`."""
    if value is None or value == 0:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_BUDGET:
        raise InvalidRequest(
            f"{param} must be a whole number from 1 to {MAX_BUDGET:,} a day, or 0 (or null) for no budget",
            param=param,
        )
    return value
