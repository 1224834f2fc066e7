"""The charts' arithmetic over time (bench/evidence/series.py and bench/suite/report.run_trend), pure: rows in,
one point per bucket out, against figures worked out here by hand."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest

from benchwarmers.bench.evidence.series import bucket_label, buckets_for, call_series, useful_series, value_points
from benchwarmers.bench.evidence.stats import wilson
from benchwarmers.bench.suite.report import run_trend
from benchwarmers.catalog.prices import UNKNOWN, ListPrice


def local(day: str, hour: int = 0, minute: int = 0) -> float:
    return dt.datetime.fromisoformat(f"{day}T{hour:02d}:{minute:02d}:00").timestamp()


NOW = local("2026-03-10", 15, 30)


def test_a_range_is_its_calendar_days_today_included_and_two_days_or_less_go_by_the_hour():
    week = buckets_for(7, NOW)
    assert week.unit == "day"
    assert [b["label"] for b in week.public()] == [f"2026-03-{d:02d}" for d in range(4, 11)]
    assert week.starts[0] == local("2026-03-04")
    assert week.index(local("2026-03-04")) == 0
    assert week.index(local("2026-03-09", 23, 59)) == 5
    assert week.index(NOW) == 6
    assert week.index(local("2026-03-03", 23, 59)) is None  # before the range

    today = buckets_for(1, NOW)
    assert today.unit == "hour"
    assert [bucket_label(s, "hour") for s in today.starts] == [f"2026-03-10 {h:02d}:00" for h in range(16)]
    assert today.index(local("2026-03-10", 14, 59)) == 14
    assert len(buckets_for(2, NOW).starts) == 24 + 16
    with pytest.raises(ValueError, match="days must be from 1 to 366"):
        buckets_for(0, NOW)


def seat(day: str, alias: str, useful: bool | None, status: str = "ok", seconds: float = 1.0, shape: str = "review"):
    return {
        "at": local(day, 12),
        "alias": alias,
        "shape": shape,
        "status": status,
        "seconds": seconds,
        "useful": useful,
    }


def test_the_useful_rate_of_each_day_comes_with_its_wilson_interval_and_empty_days_are_gaps():
    rows = [
        *(seat("2026-03-08", "a", useful) for useful in (True, True, False)),
        seat("2026-03-08", "a", None),  # not judged: no verdict to count
        seat("2026-03-10", "a", True),
        seat("2026-03-10", "b", False, shape="code"),
        seat("2026-03-01", "a", True),  # before the range
    ]
    [a, b] = useful_series(rows, buckets_for(3, NOW))
    low, high = wilson(2, 3)
    assert (a["alias"], a["shape"]) == ("a", "review")
    assert a["points"] == [
        {"useful": 2, "verdicts": 3, "rate": 0.6667, "low": round(low, 4), "high": round(high, 4)},
        {"useful": 0, "verdicts": 0, "rate": None, "low": None, "high": None},
        {"useful": 1, "verdicts": 1, "rate": 1.0, "low": round(wilson(1, 1)[0], 4), "high": 1.0},
    ]
    assert a["total"]["useful"] == 3 and a["total"]["verdicts"] == 4
    assert (b["alias"], b["shape"], [p["rate"] for p in b["points"]]) == ("b", "code", [None, None, 0.0])


def test_errors_empties_and_the_median_and_p90_seconds_of_each_day():
    rows = [
        *(seat("2026-03-09", "a", None, seconds=s) for s in (1.0, 2.0, 3.0, 4.0, 10.0)),
        seat("2026-03-09", "a", None, status="error", seconds=30.0),  # a failure's seconds are no answer's
        seat("2026-03-09", "a", None, status="empty", seconds=0.5),
        seat("2026-03-10", "a", None, status="error"),
    ]
    [a] = call_series(rows, buckets_for(3, NOW))
    assert a["points"][0] == {"seats": 0, "errors": 0, "empties": 0, "error_rate": None, "empty_rate": None,
                              "p50": None, "p90": None}  # fmt: skip
    assert a["points"][1] == {"seats": 7, "errors": 1, "empties": 1, "error_rate": 0.1429, "empty_rate": 0.1429,
                              "p50": 3.0, "p90": 10.0}  # fmt: skip
    assert a["points"][2]["error_rate"] == 1.0 and a["points"][2]["p50"] is None
    assert (a["total"]["seats"], a["total"]["errors"], a["total"]["p50"]) == (8, 2, 3.0)


def test_the_value_of_free_calls_per_day_is_the_cost_report_s_tally():
    price = ListPrice("maker", "models.dev x", "x", prompt=Decimal(1), completion=Decimal(2))
    prices = {"free": price, "paid": price, "odd": UNKNOWN}
    usage = {"prompt_tokens": 1000, "completion_tokens": 500}
    rows = [
        {"at": local("2026-03-09", 9), "alias": "free", "status": "ok", "usage": usage},
        {"at": local("2026-03-09", 10), "alias": "paid", "status": "ok", "usage": usage},
        {"at": local("2026-03-10", 9), "alias": "odd", "status": "ok", "usage": usage},
        {"at": local("2026-03-10", 9), "alias": "free", "status": "ok", "usage": None},
    ]
    total, points = value_points(rows, buckets_for(2, NOW), prices, {"free": True, "paid": False})
    assert len(points) == 40  # by the hour
    assert points[9]["free_usd"] == 0.002 and points[10]["cost_usd"] == 0.002 and points[10]["free_usd"] == 0.0
    assert points[24 + 9] == {"calls": 2, "prompt_tokens": 1000, "completion_tokens": 500, "cost_usd": 0.0,
                              "free_usd": 0.0, "unpriced_tokens": 1500, "unreported_calls": 1}  # fmt: skip
    assert (total["calls"], total["cost_usd"], total["free_usd"]) == (4, 0.004, 0.002)


def test_each_models_hit_and_pair_correct_rates_per_run_with_a_gap_where_a_run_did_not_ask_it():
    figures = {"hits": 1, "found": 2, "hit_rate": 0.5, "hit_interval": [0.095, 0.905], "correct": 1, "pairs": 1,
               "pair_correct_rate": 1.0, "pair_interval": [0.207, 1.0], "tokens": 5}  # fmt: skip
    runs = [
        ({"id": "r1", "target": "bench/x", "created_at": 1.0, "finished_at": 2.0}, [{"alias": "a", **figures}]),
        ({"id": "r2", "target": "bench/x", "created_at": 3.0, "finished_at": None}, [{"alias": "b", **figures}]),
    ]
    trend = run_trend(runs)
    assert [r["run"] for r in trend["runs"]] == ["r1", "r2"]
    expected = {k: v for k, v in figures.items() if k != "tokens"}
    assert trend["models"] == [{"alias": "a", "points": [expected, None]}, {"alias": "b", "points": [None, expected]}]
