"""`/api/leaderboard`, `/api/reports` and `/api/advice`: the evidence for the dashboard (admin only)."""

from __future__ import annotations

from typing import Annotated

from fastapi import Query
from starlette.responses import Response

from benchwarmers.bench.bounds import REPORT_DAYS
from benchwarmers.server.deps import BenchDep, admin_router
from benchwarmers.server.params import Blank, Days
from benchwarmers.server.responses import json_response

router = admin_router()


@router.get("/api/leaderboard")
async def get_leaderboard(
    bench: BenchDep,
    shape: Annotated[str | None, Blank, Query(description="Only this shape's board.")] = None,
    days: Days = None,
    human_only: Annotated[bool, Query(description="Count only verdicts people gave (not the suite's).")] = False,
) -> Response:
    boards = await bench.evidence.leaderboard(shape=shape, days=days, human_only=human_only)
    return json_response(
        {"object": "leaderboard", "days": days, "human_only": human_only, "shapes": [b.public() for b in boards]}
    )


@router.get("/api/reports")
async def get_reports(bench: BenchDep, days: Days = None) -> Response:
    return json_response({"object": "reports", **await bench.evidence.honesty_report(days or REPORT_DAYS)})


@router.get("/api/advice")
async def get_advice(bench: BenchDep) -> Response:
    """Per collection and shape: an explorer that beats a member (with P), members that keep
    failing, shapes with too little evidence (bench/evidence/advice.py)."""
    return json_response({"object": "advice", **await bench.evidence.advice_report()})
