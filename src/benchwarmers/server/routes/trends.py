"""`/api/trends/...`: the figures the dashboard's charts draw over time, and the suite's per run (admin only).

Each is bucketed by the server's local day, or by the hour for two days or less (bench/evidence/series.py).
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Query
from pydantic import Field
from starlette.responses import Response

from benchwarmers.bench.bounds import DEFAULT_TREND_DAYS, MAX_TREND_RUNS, TREND_RUNS
from benchwarmers.server.deps import BenchDep, admin_router
from benchwarmers.server.params import Blank, TrendDays
from benchwarmers.server.responses import json_response

router = admin_router()

Shape = Annotated[
    Annotated[str, Field(max_length=32)] | None,  # the bound is on the string: a blank value is None
    Blank,
    Query(description="Only this shape's seats; every shape when left out."),
]


@router.get("/api/trends/useful")
async def get_useful_trend(bench: BenchDep, days: TrendDays = DEFAULT_TREND_DAYS, shape: Shape = None) -> Response:
    """Per model and shape: the useful rate of each bucket's judged seats with its 95% Wilson interval."""
    return json_response(await bench.evidence.useful_trend(days, shape))


@router.get("/api/trends/calls")
async def get_calls_trend(bench: BenchDep, days: TrendDays = DEFAULT_TREND_DAYS, shape: Shape = None) -> Response:
    """Per model: each bucket's seats, errors and empties, and the answered seats' p50 and p90 seconds."""
    return json_response(await bench.evidence.calls_trend(days, shape))


@router.get("/api/trends/value")
async def get_value_trend(bench: BenchDep, days: TrendDays = DEFAULT_TREND_DAYS) -> Response:
    """Each bucket's calls and what they would have cost at list prices; `free_usd` is the part run free."""
    return json_response(await bench.evidence.value_trend(days))


@router.get("/api/trends/suite")
async def get_suite_trend(
    bench: BenchDep,
    runs: Annotated[int, Query(ge=1, le=MAX_TREND_RUNS, description="The newest this many suite runs.")] = TREND_RUNS,
) -> Response:
    """Each model's hit rate and pair-correct rate in each of the newest runs (oldest first), with intervals."""
    return json_response({"object": "trends.suite", **await bench.suite.trend(runs)})
