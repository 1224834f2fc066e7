"""`/api/panels`: the dashboard's Gateway card.

The card lists panels a page at a time (newest first, `?before=` the last one's time) without
the answers; a seat's answer comes with its panel (`/api/panels/{id}`) when it is opened. An open
card polls `/api/panels/head` every second: the newest panel ids and the newest verdict id, two
index reads, so it fetches again only when something changed (polling rather than server-sent
events: nothing to hold open, the same through any proxy, and it sees panels other processes
record in the same database).
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Query
from pydantic import Field
from starlette.responses import Response

from benchwarmers.bench.names import collection_name
from benchwarmers.bench.panels.log import prompt_text
from benchwarmers.bench.records import ListedPanel, LoggedSeat
from benchwarmers.server.deps import BenchDep, admin_router
from benchwarmers.server.params import Before, Blank, Flag, flag
from benchwarmers.server.responses import json_response

router = admin_router()

PAGE = 20
MAX_PAGE = 100
ERROR_CHARS = 300  # a failed seat's reason on its chip; the whole of it is in the panel


def seat_chip(seat: LoggedSeat) -> dict[str, Any]:
    """A seat as its chip needs it: no answer, only its length."""
    return {
        "call": seat["call"],
        "seat": seat["seat"],
        "alias": seat["alias"],
        "status": seat["status"],
        "seconds": seat["seconds"],
        "error": (seat["error"] or "")[:ERROR_CHARS],
        "error_kind": seat["error_kind"],
        "answer_chars": len(seat["answer"] or ""),
        "verdict": seat["verdict"],
    }


def panel_card(panel: ListedPanel) -> dict[str, Any]:
    """A panel as the card lists it: the prompt's opening instead of the request, no answers."""
    card = {k: v for k, v in panel.items() if k not in ("request", "seats", "decision")}
    card["prompt"] = prompt_text(panel["request"])
    card["seats"] = [seat_chip(s) for s in panel["seats"]]
    card["decision"] = seat_chip(panel["decision"]) if panel["decision"] else None
    return card


# An empty value is as if left out (None): the length bound is on the text only.
Text = Annotated[Annotated[str, Field(max_length=200)] | None, Blank]


@router.get("/api/panels")
async def get_panels(
    bench: BenchDep,
    limit: Annotated[int, Query(ge=1, le=MAX_PAGE, description="Panels on the page, newest first.")] = PAGE,
    before: Before = None,
    after: Annotated[
        Annotated[float, Field(allow_inf_nan=False)] | None,
        Blank,
        Query(description="Only the panels just newer than this time (epoch seconds): the next newer page."),
    ] = None,
    owed: Annotated[Flag, flag("Only panels with seats awaiting a verdict.")] = False,
    collection: Annotated[Text, Query(description="Only this collection's panels (NAME or bench/NAME).")] = None,
    model: Annotated[Text, Query(description="Only panels where this model alias sat.")] = None,
    status: Annotated[Text, Query(description="Only panels with a seat of this status (ok, error, empty, …).")] = None,
    caller: Annotated[Text, Query(description="Only panels asked by this caller (a key's name, local, admin).")] = None,
    q: Annotated[Text, Query(description="Only panels whose prompt has this text.")] = None,
) -> Response:
    filters: dict[str, Any] = {
        "collection": collection_name(collection) if collection else None,
        "alias": model,
        "status": status,
        "asked_by": caller,
        "text": q,
    }
    found = await bench.log.panels(limit=limit + 1, before=before, after=after, owed=owed, **filters)
    owed_count = await bench.log.owed_count()
    # With `after` the extra panel read is the newest: the page is the ones nearest that time.
    page = found[-limit:] if after is not None else found[:limit]
    more = len(found) > limit and after is None
    return json_response(
        {
            "object": "list",
            "data": [panel_card(p) for p in page],
            "owed": owed_count,
            "count": await bench.log.count(owed=owed, **filters),
            "running": await bench.log.running() if before is None and after is None else [],
            "next": page[-1]["created"] if more and page else None,
        }
    )


@router.get("/api/panels/head")
async def get_head(bench: BenchDep) -> Response:
    return json_response(await bench.log.head(PAGE))


@router.get("/api/panels/{panel_id}")
async def get_panel(panel_id: str, bench: BenchDep) -> Response:
    return json_response(await bench.log.panel(panel_id))
