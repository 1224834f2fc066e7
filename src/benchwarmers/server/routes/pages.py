"""The dashboard's HTML pages, all behind the router's `admin_for` (the login whenever gateway keys are
required), rendered by server/rendering.py.

The Suite page: the runs and a run's per-model table are rendered here; a task opened (`?task=`) is drawn
by the page's script from `/api/suite/runs/{run}` (the seats' answers, as safe markdown) and
`/api/suite/tasks/{task}` (the code shown, with its real line numbers and the key's lines marked).
"""

from __future__ import annotations

import math
import re
from typing import Annotated, Any

from fastapi import Query, Request
from pydantic import Field
from starlette.responses import Response

from benchwarmers.bench.bounds import DEFAULT_TREND_DAYS, KINDS
from benchwarmers.bench.evidence import series
from benchwarmers.bench.notify import apprise_send
from benchwarmers.bench.presets import PRESETS, for_provider
from benchwarmers.dashboard import change_views, suite_views, views
from benchwarmers.errors import NotFound
from benchwarmers.server.collection_views import collection_views
from benchwarmers.server.deps import BenchDep, pages_router
from benchwarmers.server.params import Blank, Days, Flag, MinWindow, TrendDays, flag
from benchwarmers.server.rendering import render
from benchwarmers.server.schemas import error_responses

router = pages_router()

DISCOVER_PAGE = 50
CHANGES_SHOWN = 100
LEADERBOARD_DAYS = (7, 30, 90)
TREND_DAYS = (1, 2, 7, 30, 90, 365)


def public_base(request: Request) -> str:
    """The gateway's base URL as callers use it: the configured public URL, else this request's origin."""
    configured = request.app.state.bench.settings.public_url
    return f"{(configured or str(request.base_url)).rstrip('/')}/v1"


@router.get("/")
async def collections_page(request: Request, bench: BenchDep) -> Response:
    snapshot = await bench.snapshot()
    collections = await collection_views(bench)
    return await render(
        request,
        "collections.html",
        "collections",
        setup=await setup_steps(bench, collections),
        base_url=public_base(request),
        collections=collections,
        roster=sorted(snapshot.models),
        shapes=snapshot.shapes,
        gateway=snapshot.gateway,
    )


@router.get("/panels/{panel_id}")
async def panel_page(request: Request, bench: BenchDep, panel_id: str) -> Response:
    panel = await bench.log.panel(panel_id)  # a 404 page when there is none
    return await render(request, "panel.html", "panel", panel_id=panel["id"], collection=panel["collection"])


@router.get("/playground")
async def playground_page(request: Request, bench: BenchDep) -> Response:
    return await render(
        request,
        "playground.html",
        "playground",
        collections=await collection_views(bench),
        base_url=public_base(request),
    )


def adding_provider(provider: str | None) -> dict[str, Any] | None:
    """The endpoint form's prefill when Discover's "Add this provider" led here: its preset if one serves it."""
    if not provider:
        return None
    preset = for_provider(provider)
    name = re.sub(r"[^a-z0-9-]+", "-", provider.lower()).strip("-")[:32] or "provider"
    return {"provider": provider, "name": preset.name if preset else name, "preset": preset.name if preset else ""}


async def setup_steps(bench: Any, collections: list[dict[str, Any]]) -> list[dict[str, Any]] | None:
    """The first-run checklist while a step is left (None once a panel was asked): an endpoint, its
    models listed, a collection, a first request."""
    snapshot = await bench.snapshot()
    if (await bench.log.panels(limit=1)) and collections:
        return None
    refreshed = any(e.get("refreshed_at") for e in await bench.endpoints.list_endpoints())
    return [
        {"id": "endpoint", "done": bool(snapshot.endpoints)},
        {"id": "refresh", "done": bool(snapshot.models) and refreshed},
        {"id": "collection", "done": bool(collections)},
        {"id": "request", "done": False},
    ]


@router.get("/models")
async def models_page(request: Request, bench: BenchDep) -> Response:
    models = sorted(await bench.models.list_models(), key=lambda m: m["alias"])
    boards = await bench.evidence.standings()
    alerts = await bench.alerts.list_alerts(include_acknowledged=False)
    return await render(
        request,
        "models.html",
        "models",
        models=models,
        health={m["alias"]: views.health(m, boards, alerts) for m in models},
        allowances=await bench.allowances.by_model(),  # what is left today, per model (allowance_note.html)
        evidence=views.evidence_by_model(boards),
        prices={alias: price.public() for alias, price in (await bench.evidence.price_list()).items()},
        status_line=views.status_line,
        fact=views.fact,
    )


@router.get("/leaderboard")
async def leaderboard_page(request: Request, bench: BenchDep, days: Days = None) -> Response:
    return await render(
        request,
        "leaderboard.html",
        "leaderboard",
        boards=await bench.evidence.standings(days),
        shapes=(await bench.snapshot()).shapes,
        days=days,
        day_choices=LEADERBOARD_DAYS,
        bar=views.bar,
        cost=await bench.evidence.cost_report(days=None if days is None else math.ceil(days)),
        advice=await bench.evidence.advice(),
    )


@router.get("/trends")
async def trends_page(request: Request, days: TrendDays = DEFAULT_TREND_DAYS) -> Response:
    """The charts over time; the page's script fetches their figures from /api/trends/..."""
    return await render(
        request, "trends.html", "trends", days=days, day_choices=TREND_DAYS, hourly_up_to=series.HOURLY_UP_TO
    )


@router.get("/discover")
async def discover_page(
    request: Request,
    bench: BenchDep,
    free: Annotated[Flag, flag("Only models that cost nothing.")] = False,
    vision: Annotated[Flag, flag("Only models that take images.")] = False,
    min_context: MinWindow = None,
    q: Annotated[str | None, Blank, Query(description="Only models whose id or name has this text.")] = None,
    page: Annotated[int, Query(ge=1, description=f"Which page of {DISCOVER_PAGE} models.")] = 1,
) -> Response:
    text = (q or "").strip()
    filters = {"free": free, "vision": vision, "min_context": min_context, "q": text}
    found = await bench.discovery.discover(free=free, vision=vision, min_context=min_context)
    if text:
        needle = text.lower()
        found = [f for f in found if needle in f["id"].lower() or needle in (f["name"] or "").lower()]
    pages = max(1, math.ceil(len(found) / DISCOVER_PAGE))
    number = min(page, pages)
    start = (number - 1) * DISCOVER_PAGE
    query = {k: ("1" if v is True else v) for k, v in filters.items() if v}
    return await render(
        request,
        "discover.html",
        "discover",
        found=found[start : start + DISCOVER_PAGE],
        total=len(found),
        first=start + 1,
        filters=filters,
        query=query,
        number=number,
        pages=pages,
    )


@router.get("/settings")
async def settings_page(
    request: Request,
    bench: BenchDep,
    provider: Annotated[
        Annotated[str, Field(max_length=100)] | None,
        Blank,
        Query(description="Prefill the endpoint form for this models.dev provider."),
    ] = None,
) -> Response:
    snapshot = await bench.snapshot()
    changes = [change_views.change_line(c) for c in await bench.changes.list_changes(limit=CHANGES_SHOWN)]
    return await render(
        request,
        "settings.html",
        "settings",
        endpoints=await bench.endpoints.list_endpoints(),
        keys=await bench.keys.list_keys(),
        budgets=await bench.budgets.today(),
        reset_hour=snapshot.gateway.budget_reset_hour,
        gateway_fields=views.gateway_fields(snapshot.gateway),
        shapes=snapshot.shapes,
        decision_models=snapshot.decision_models,
        alerts=await bench.alerts.list_alerts(include_acknowledged=False),
        notify_targets=await bench.notify.list_targets(),
        notify_ready=apprise_send.installed(),
        changes=changes,
        presets=list(PRESETS.values()),
        adding=adding_provider(provider),
        kinds=KINDS,
        collections=sorted(snapshot.collections),
        roster=sorted(snapshot.models),
    )


# The bounds sit on the string, not the Query: an empty value (Blank) is None, which has no length.
RunShown = Annotated[
    Annotated[str, Field(max_length=40)] | None, Blank, Query(description="The run shown; the newest when left out.")
]
TaskOpened = Annotated[
    Annotated[str, Field(max_length=80)] | None, Blank, Query(description="Open this task's seats beside its code.")
]


@router.get("/suite", responses=error_responses(404))
async def suite_page(
    request: Request,
    bench: BenchDep,
    run: RunShown = None,
    task: TaskOpened = None,
) -> Response:
    runs = await bench.suite.list()
    report: dict[str, Any] | None = None
    if run or runs:
        report = await bench.suite.report(run)
    opened = None
    if task and report is not None:
        opened = next((t for t in report["tasks"] if t["task"] == task), None)
        if opened is None:
            raise NotFound(f"run {report['run']} has no results for task {task!r}; pick one of its tasks")
    return await render(
        request,
        "suite.html",
        "suite",
        runs=runs,
        report=report,
        opened=opened,
        task_line=suite_views.task_line,
        run_state=suite_views.run_state,
        span=suite_views.span,
    )
