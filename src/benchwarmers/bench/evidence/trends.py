"""The dashboard's charts over time: each model's useful rate per shape, its errors and seconds, and
what the bench's calls would have cost, over the last `days` days by day (by hour up to two days).

Reads the store, then the pure arithmetic of `series.py`; the Trends page draws exactly these figures
(`/api/trends/...`).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from benchwarmers.bench.bounds import MAX_TREND_DAYS
from benchwarmers.bench.evidence import series
from benchwarmers.bench.evidence.cost import priced_calls
from benchwarmers.errors import InvalidRequest
from benchwarmers.store import trends as trend_rows

if TYPE_CHECKING:
    from benchwarmers.bench.state import BenchState


def _range(days: int, now: float | None) -> series.Buckets:
    if not 1 <= days <= MAX_TREND_DAYS:
        raise InvalidRequest(f"days must be a whole number from 1 to {MAX_TREND_DAYS} (got {days})", param="days")
    return series.buckets_for(days, time.time() if now is None else now)


def _head(kind: str, days: int, buckets: series.Buckets) -> dict[str, Any]:
    return {
        "object": f"trends.{kind}",
        "days": days,
        "bucket": buckets.unit,
        "since": buckets.starts[0],
        "buckets": buckets.public(),
    }


async def useful_trend(
    state: BenchState, days: int, shape: str | None = None, now: float | None = None
) -> dict[str, Any]:
    """Per model and shape (one shape's with `shape`), the useful rate of each bucket with its 95% interval."""
    buckets = _range(days, now)
    async with state.read() as conn:
        rows = await trend_rows.seated_since(conn, buckets.starts[0], shape)
    return {**_head("useful", days, buckets), "shape": shape, "series": series.useful_series(rows, buckets)}


async def calls_trend(
    state: BenchState, days: int, shape: str | None = None, now: float | None = None
) -> dict[str, Any]:
    """Per model, each bucket's seats, errors and empties, and its answered seats' p50 and p90 seconds."""
    buckets = _range(days, now)
    async with state.read() as conn:
        rows = await trend_rows.seated_since(conn, buckets.starts[0], shape)
    return {**_head("calls", days, buckets), "shape": shape, "series": series.call_series(rows, buckets)}


async def value_trend(state: BenchState, days: int, now: float | None = None) -> dict[str, Any]:
    """Each bucket's calls and what they would have cost at list prices, `free_usd` the part run free:
    the value of the bench's free calls over time (the cost report's figures, per bucket)."""
    buckets = _range(days, now)
    rows, prices, free = await priced_calls(state, buckets.starts[0])
    total, points = series.value_points(rows, buckets, prices, free)
    return {**_head("value", days, buckets), "total": total, "points": points}
