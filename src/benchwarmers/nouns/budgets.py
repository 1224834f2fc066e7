"""What a daily budget may be (a collection's, a gateway key's): none, or a whole number a day."""

from __future__ import annotations

from typing import Any

from benchwarmers.errors import InvalidRequest

MAX_BUDGET = 1_000_000_000


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
