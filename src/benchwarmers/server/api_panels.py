"""`/api/panels` and `/api/verdicts`: the dashboard's Gateway card.

The card lists panels a page at a time (newest first, `?before=` the last one's time) without
the answers; a seat's answer comes with its panel (`/api/panels/{id}`) when it is opened. An open
card polls `/api/panels/head` every second: the newest panel ids and the newest verdict id, two
index reads, so it fetches again only when something changed (polling rather than server-sent
events: nothing to hold open, the same through any proxy, and it sees panels other processes
record in the same database).

Verdicts from the dashboard go to `/bench/verdict` when the bench needs no keys (the caller is
`local`, as for any loopback caller); when keys are required the dashboard has none, so it posts
to `/api/verdicts`, guarded like every admin route, and the verdict's caller is the admin.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from starlette.responses import Response

from benchwarmers.bench.caller import Caller
from benchwarmers.errors import InvalidRequest
from benchwarmers.server.auth import admin_for
from benchwarmers.server.body import parse_json_object, read_body
from benchwarmers.server.responses import json_response

router = APIRouter()

PAGE = 20
MAX_PAGE = 100
ERROR_CHARS = 300  # a failed seat's reason on its chip; the whole of it is in the panel


def _limit(raw: str | None) -> int:
    if raw is None:
        return PAGE
    if not raw.isdecimal() or not 1 <= int(raw) <= MAX_PAGE:
        raise InvalidRequest(f"limit must be a whole number from 1 to {MAX_PAGE}", param="limit")
    return int(raw)


def _before(raw: str | None) -> float | None:
    if not raw:
        return None
    try:
        return float(raw)
    except ValueError:
        raise InvalidRequest(
            "before must be a time in epoch seconds (the last panel's `created`)", param="before"
        ) from None


def seat_chip(seat: dict[str, Any]) -> dict[str, Any]:
    """A seat as its chip needs it: no answer, only its length."""
    return {
        "call": seat["call"],
        "seat": seat["seat"],
        "alias": seat["alias"],
        "status": seat["status"],
        "seconds": seat["seconds"],
        "error": (seat["error"] or "")[:ERROR_CHARS],
        "answer_chars": len(seat["answer"] or ""),
        "verdict": seat["verdict"],
    }


def panel_card(panel: dict[str, Any]) -> dict[str, Any]:
    """A panel as the card lists it: without the request and the answers."""
    card = {k: v for k, v in panel.items() if k not in ("request", "seats", "decision")}
    card["seats"] = [seat_chip(s) for s in panel["seats"]]
    card["decision"] = seat_chip(panel["decision"]) if panel["decision"] else None
    return card


@router.get("/api/panels")
async def get_panels(request: Request) -> Response:
    await admin_for(request)
    params = request.query_params
    limit = _limit(params.get("limit"))
    bench = request.app.state.bench
    found = await bench.log.panels(limit=limit + 1, before=_before(params.get("before")))
    owed = await bench.log.owed_count()
    page = found[:limit]
    more = len(found) > limit
    return json_response(
        {
            "object": "list",
            "data": [panel_card(p) for p in page],
            "owed": owed,
            "next": page[-1]["created"] if more and page else None,
        }
    )


@router.get("/api/panels/head")
async def get_head(request: Request) -> Response:
    await admin_for(request)
    return json_response(await request.app.state.bench.log.head(PAGE))


@router.get("/api/panels/{panel_id}")
async def get_panel(panel_id: str, request: Request) -> Response:
    await admin_for(request)
    return json_response(await request.app.state.bench.log.panel(panel_id))


@router.post("/api/verdicts")
async def post_verdict(request: Request) -> Response:
    actor = await admin_for(request)
    data = parse_json_object(await read_body(request, cap=1024 * 1024))
    return json_response(await request.app.state.bench.verdicts.record(data, Caller(name=actor)))
