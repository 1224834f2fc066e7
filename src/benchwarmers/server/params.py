"""Query parameters more than one route reads, typed with their bounds.

A bad value is a 400 naming the parameter and what it takes (`server/validation.py`), in the
OpenAPI document as in the refusal. An empty value (`?days=`, what a form sends for a field left
empty) is as if the parameter were left out.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Query
from pydantic import BeforeValidator, Field

from benchwarmers.bench.bounds import MAX_TREND_DAYS


def _blank_is_none(value: Any) -> Any:
    return None if isinstance(value, str) and not value.strip() else value


def _blank_is_false(value: Any) -> Any:
    return False if isinstance(value, str) and not value.strip() else value


Blank = BeforeValidator(_blank_is_none)
Flag = Annotated[bool, BeforeValidator(_blank_is_false)]  # `?free=` is as if left out: no


def flag(description: str, *, alias: str | None = None) -> Any:
    """A yes/no query parameter: `1`, `true`, `yes` or `on` (and `0`, `false`, `no`, `off`)."""
    return Query(alias=alias, description=f"{description} 1 or 0 (true/false, yes/no, on/off).")


Days = Annotated[
    Annotated[float, Field(gt=0, allow_inf_nan=False)] | None,
    Blank,
    Query(description="Only the evidence of the last this many days; all of it when left out."),
]
MinWindow = Annotated[
    Annotated[int, Field(ge=0)] | None,
    Blank,
    Query(description="Only models whose context window is at least this many tokens."),
]
Before = Annotated[
    Annotated[float, Field(allow_inf_nan=False)] | None,
    Blank,
    Query(description="Only panels recorded before this time in epoch seconds (the last one's `created`)."),
]
TrendDays = Annotated[
    int,
    Query(
        ge=1,
        le=MAX_TREND_DAYS,
        description="The last this many calendar days, today included: by day, or by the hour for 1 or 2.",
    ),
]
