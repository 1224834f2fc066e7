"""`/api/leaderboard` and `/api/reports`: the evidence for the dashboard (admin only)."""

from __future__ import annotations

import math

from fastapi import APIRouter, Request
from starlette.responses import Response

from benchwarmers.bench.evidence.board import leaderboard
from benchwarmers.bench.evidence.reports import REPORT_DAYS, honesty_report
from benchwarmers.errors import InvalidRequest
from benchwarmers.server.auth import admin_for
from benchwarmers.server.responses import json_response

router = APIRouter()


def days_param(raw: str | None) -> float | None:
    """The `?days=` window of evidence views (the API's and the pages'); None for all time."""
    if not raw:
        return None
    try:
        days = float(raw)
    except ValueError:
        days = math.nan
    if not math.isfinite(days) or days <= 0:
        raise InvalidRequest("days must be a positive number", param="days")
    return days


@router.get("/api/leaderboard")
async def get_leaderboard(request: Request) -> Response:
    await admin_for(request)
    params = request.query_params
    days = days_param(params.get("days"))
    boards = await leaderboard(request.app.state.bench.state, shape=params.get("shape") or None, days=days)
    return json_response({"object": "leaderboard", "days": days, "shapes": [b.public() for b in boards]})


@router.get("/api/reports")
async def get_reports(request: Request) -> Response:
    await admin_for(request)
    days = days_param(request.query_params.get("days")) or REPORT_DAYS
    return json_response({"object": "reports", **await honesty_report(request.app.state.bench.state, days)})
