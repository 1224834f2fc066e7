"""The dashboard's figures over time, pure: rows in, one point per bucket out.

A range is the last `days` calendar days (the server's local days, as the cost report counts them,
today included), in buckets of a day, or of an hour when the range is two days or less. Every bucket
of the range gets a point, empty ones too (rates None there), so a chart shows a gap, not a line
drawn across days without seats.

The useful rate of a bucket is over the seats seated in it that have a current verdict, with the
95% Wilson interval (stats.wilson, as the leaderboard's); errors and empties are over the seats;
p50 is the median and p90 the nearest-rank 90th percentile of the answered seats' seconds, as on the
leaderboard. Seats are placed by when they were seated (the model's answer then), not when judged.
"""

from __future__ import annotations

import bisect
import datetime as dt
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from benchwarmers.bench.bounds import MAX_TREND_DAYS
from benchwarmers.bench.evidence.cost import Tally
from benchwarmers.bench.evidence.stats import nearest_rank, wilson
from benchwarmers.catalog.prices import ListPrice

HOURLY_UP_TO = 2  # days: a range this short is drawn by the hour


@dataclass(frozen=True)
class Buckets:
    """The range's buckets: `unit` (day | hour) and each bucket's start (epoch seconds), oldest first."""

    unit: str
    starts: tuple[float, ...]

    def index(self, ts: float) -> int | None:
        """The bucket `ts` falls in (the last that starts at or before it); None before the first."""
        at = bisect.bisect_right(self.starts, ts) - 1
        return at if at >= 0 else None

    def public(self) -> list[dict[str, Any]]:
        return [{"start": start, "label": bucket_label(start, self.unit)} for start in self.starts]


def bucket_start(ts: float, unit: str) -> float:
    """The start of the local day or hour that `ts` is in."""
    moment = dt.datetime.fromtimestamp(ts)
    if unit == "day":
        return dt.datetime.combine(moment.date(), dt.time.min).timestamp()
    return moment.replace(minute=0, second=0, microsecond=0).timestamp()


def bucket_label(start: float, unit: str) -> str:
    """`2026-05-01` for a day, `2026-05-01 14:00` for an hour (local time)."""
    return dt.datetime.fromtimestamp(start).strftime("%Y-%m-%d" if unit == "day" else "%Y-%m-%d %H:00")


def buckets_for(days: int, now: float) -> Buckets:
    """The buckets of the last `days` local calendar days up to `now` (the current bucket last)."""
    if not 1 <= days <= MAX_TREND_DAYS:
        raise ValueError(f"days must be from 1 to {MAX_TREND_DAYS}, got {days}")
    unit = "hour" if days <= HOURLY_UP_TO else "day"
    today = dt.datetime.fromtimestamp(now).date()
    first = today - dt.timedelta(days=days - 1)
    if unit == "day":
        starts = [dt.datetime.combine(first + dt.timedelta(days=n), dt.time.min).timestamp() for n in range(days)]
        return Buckets(unit, tuple(starts))
    # Hours step in local wall time: a day that changes the clock has 23 or 25 of them.
    hour = dt.datetime.combine(first, dt.time.min)
    last = bucket_start(now, "hour")
    found: list[float] = []
    while (start := hour.timestamp()) <= last:
        if not found or start > found[-1]:
            found.append(start)
        hour += dt.timedelta(hours=1)
    return Buckets(unit, tuple(found))


def _rate(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


def useful_point(useful: int, verdicts: int) -> dict[str, Any]:
    """A bucket's useful rate with its 95% Wilson interval; rate and interval None without verdicts."""
    if not verdicts:
        return {"useful": 0, "verdicts": 0, "rate": None, "low": None, "high": None}
    low, high = wilson(useful, verdicts)
    return {
        "useful": useful,
        "verdicts": verdicts,
        "rate": _rate(useful, verdicts),
        "low": round(low, 4),
        "high": round(high, 4),
    }


def useful_series(rows: Iterable[Mapping[str, Any]], buckets: Buckets) -> list[dict[str, Any]]:
    """One series per (model, shape) that has a verdict in the range, model then shape order: its
    totals over the range and one point per bucket."""
    counts: dict[tuple[str, str], list[list[int]]] = {}
    for row in rows:
        if row["useful"] is None:
            continue
        at = buckets.index(row["at"])
        if at is None:
            continue
        cells = counts.setdefault((row["alias"], row["shape"]), [[0, 0] for _ in buckets.starts])
        cells[at][0] += bool(row["useful"])
        cells[at][1] += 1
    series = []
    for (alias, shape), cells in sorted(counts.items()):
        useful, verdicts = sum(c[0] for c in cells), sum(c[1] for c in cells)
        series.append(
            {
                "alias": alias,
                "shape": shape,
                "total": useful_point(useful, verdicts),
                "points": [useful_point(good, n) for good, n in cells],
            }
        )
    return series


def call_point(statuses: Sequence[str], ok_seconds: Sequence[float]) -> dict[str, Any]:
    """A bucket's seats: how many failed or came back empty (and their rates), and the answered
    seats' median and p90 seconds (None without one)."""
    seats, errors, empties = len(statuses), statuses.count("error"), statuses.count("empty")
    return {
        "seats": seats,
        "errors": errors,
        "empties": empties,
        "error_rate": _rate(errors, seats),
        "empty_rate": _rate(empties, seats),
        "p50": round(statistics.median(ok_seconds), 3) if ok_seconds else None,
        "p90": round(p90, 3) if (p90 := nearest_rank(ok_seconds, 0.9)) is not None else None,
    }


def call_series(rows: Iterable[Mapping[str, Any]], buckets: Buckets) -> list[dict[str, Any]]:
    """One series per model seated in the range (its shapes together), alias order: totals and one
    point per bucket."""
    seated: dict[str, list[tuple[list[str], list[float]]]] = {}
    for row in rows:
        at = buckets.index(row["at"])
        if at is None:
            continue
        cells = seated.setdefault(row["alias"], [([], []) for _ in buckets.starts])
        statuses, seconds = cells[at]
        statuses.append(row["status"])
        if row["status"] == "ok" and row["seconds"] is not None:
            seconds.append(row["seconds"])
    series = []
    for alias, cells in sorted(seated.items()):
        every_status = [s for statuses, _ in cells for s in statuses]
        every_second = [s for _, seconds in cells for s in seconds]
        series.append(
            {
                "alias": alias,
                "total": call_point(every_status, every_second),
                "points": [call_point(statuses, seconds) for statuses, seconds in cells],
            }
        )
    return series


def value_points(
    rows: Iterable[Mapping[str, Any]], buckets: Buckets, prices: Mapping[str, ListPrice], free: Mapping[str, bool]
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(total, one point per bucket) of the calls' tokens and what they would have cost at list prices
    (cost.Tally: `free_usd` is the part run on models the bench counts free today)."""
    total = Tally()
    tallies = [Tally() for _ in buckets.starts]
    for row in rows:
        at = buckets.index(row["at"])
        if at is None:
            continue
        price, is_free = prices[row["alias"]], free.get(row["alias"], False)
        total.add(row, price, is_free)
        tallies[at].add(row, price, is_free)
    return total.public(), [tally.public() for tally in tallies]
