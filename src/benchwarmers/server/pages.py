"""The dashboard's HTML pages and its static files.

Pages are rendered by Jinja2 with autoescape on, from the same core the API uses, all behind
the router's `admin_for` (the login whenever gateway keys are required). Every page carries a
Content-Security-Policy that allows scripts and styles from this server only: no inline script or style runs, so text a
model wrote can never become code on a page. Their scripts (`dashboard/static/js`) render the
Gateway card and the forms with DOM text nodes, never HTML strings.

Static files are served under `/static/<digest of the files>/...`, cached for a year: a changed
file changes the digest, and the digest is in the path rather than a query string so the
scripts' relative `import`s carry it too.
"""

from __future__ import annotations

import math
import re
from functools import lru_cache
from typing import Annotated, Any

from fastapi import FastAPI, Query, Request
from jinja2 import Environment, FileSystemLoader
from pydantic import Field
from starlette.responses import Response
from starlette.routing import Mount
from starlette.staticfiles import StaticFiles

from benchwarmers import __version__
from benchwarmers.bench.admin import alerts as bench_alerts
from benchwarmers.bench.admin.allowances import model_allowances
from benchwarmers.bench.admin.changes import list_changes
from benchwarmers.bench.admin.endpoints import KINDS
from benchwarmers.bench.bounds import DEFAULT_TREND_DAYS
from benchwarmers.bench.evidence import cost as bench_cost
from benchwarmers.bench.evidence import series
from benchwarmers.bench.evidence.advice import advice
from benchwarmers.bench.evidence.standings import standings
from benchwarmers.bench.notify import apprise_send
from benchwarmers.bench.presets import PRESETS, for_provider
from benchwarmers.bench.upkeep import discover as bench_discover
from benchwarmers.dashboard import STATIC, TEMPLATES, THEMES, asset_version, change_views, views
from benchwarmers.server.api_admin import collection_views
from benchwarmers.server.deps import BenchDep, pages_router
from benchwarmers.server.params import Blank, Days, Flag, MinWindow, TrendDays, flag

router = pages_router()

THEME_COOKIE = "bw_theme"
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; object-src 'none'; "
    "base-uri 'none'; frame-ancestors 'none'; form-action 'self'"
)
PAGE_HEADERS = {
    "content-security-policy": CSP,
    "x-frame-options": "DENY",
    "x-content-type-options": "nosniff",
    "referrer-policy": "same-origin",
    "cache-control": "no-store",
}
DISCOVER_PAGE = 50
CHANGES_SHOWN = 100
LEADERBOARD_DAYS = (7, 30, 90)
NAV = (("/", "Collections"), ("/playground", "Playground"), ("/models", "Models"), ("/leaderboard", "Leaderboard"),
       ("/trends", "Trends"), ("/suite", "Suite"), ("/discover", "Discover"), ("/settings", "Settings"))  # fmt: skip
TREND_DAYS = (1, 2, 7, 30, 90, 365)
# A request for a page (not the API, the gateway or a file): its errors are answered as a page too.
NOT_PAGES = ("/api/", "/v1/", "/bench/", "/static/", "/mcp", "/healthz", "/readyz", "/openapi", "/metrics")


class Assets(StaticFiles):
    """The package's static files, cached for a year (their URL changes when they do)."""

    def file_response(self, *args: Any, **kwargs: Any) -> Response:
        response = super().file_response(*args, **kwargs)
        response.headers["cache-control"] = "public, max-age=31536000, immutable"
        response.headers["x-content-type-options"] = "nosniff"
        return response


def install(app: FastAPI) -> None:
    """The pages and `/static/<digest>/...` on `app`."""
    app.include_router(router)
    app.router.routes.append(Mount("/static/{version}", app=Assets(directory=STATIC), name="static"))


def asset(path: str) -> str:
    return f"/static/{asset_version()}/{path}"


@lru_cache(maxsize=1)
def environment() -> Environment:
    env = Environment(loader=FileSystemLoader(TEMPLATES), autoescape=True, trim_blocks=True, lstrip_blocks=True)
    env.globals.update(asset=asset, version=__version__, nav=NAV, themes=THEMES)
    env.filters.update(when=views.when, iso=views.iso, tokens=views.tokens, yes_no=views.yes_no, percent=views.percent)
    env.filters.update(usd=bench_cost.usd, count="{:,}".format, utc=change_views.utc)
    env.globals.update(price_text=views.price_text, per_million=bench_cost.per_million, seconds=views.seconds)
    return env


def theme_of(request: Request) -> str | None:
    """The theme the user picked, or None: then the page follows the system's light or dark preference."""
    chosen = request.cookies.get(THEME_COOKIE)
    return chosen if chosen in THEMES else None


async def render(request: Request, template: str, page: str, **context: Any) -> Response:
    bench = request.app.state.bench
    settings = bench.settings
    body = (
        environment()
        .get_template(template)
        .render(
            page=page,
            path=request.url.path,
            theme=theme_of(request),
            # Without keys the gateway's own verdict route takes the dashboard's verdicts (caller `local`).
            verdict_url="/api/verdicts" if settings.keys_required else "/bench/verdict",
            keys_required=settings.keys_required,
            logged_in=settings.keys_required,  # the dashboard's token is needed then: a session to end
            open_alerts=len(await bench_alerts.list_alerts(bench.state, include_acknowledged=False)),
            **context,
        )
    )
    return Response(body, media_type="text/html; charset=utf-8", headers=PAGE_HEADERS)


def wants_page(request: Request) -> bool:
    """A browser asking for a page: its errors are answered as a themed page, not JSON."""
    return (
        request.method == "GET"
        and "text/html" in request.headers.get("accept", "")
        and not request.url.path.startswith(NOT_PAGES)
    )


def plain_page(request: Request, title: str, status: int = 200, headers: dict[str, str] | None = None,
               **context: Any) -> Response:  # fmt: skip
    """A page without the navigation (the login, an error), in the user's theme."""
    body = (
        environment()
        .get_template("plain.html")
        .render(title=title, theme=theme_of(request), path=request.url.path, **context)
    )
    return Response(
        body, status_code=status, media_type="text/html; charset=utf-8", headers={**PAGE_HEADERS, **(headers or {})}
    )


def error_page(request: Request, status: int, message: str) -> Response:
    heading = {400: "That address is not quite right", 401: "Log in first", 403: "Not allowed",
               404: "Nothing here"}.get(status, "Something went wrong")  # fmt: skip
    return plain_page(request, f"{status}", status=status, heading=heading, message=message, error=True)


# -- pages ------------------------------------------------------------------------------------------


def public_base(request: Request) -> str:
    """The gateway's base URL as callers use it: the configured public URL, else this request's origin."""
    configured = request.app.state.bench.settings.public_url
    return f"{(configured or str(request.base_url)).rstrip('/')}/v1"


@router.get("/")
async def collections_page(request: Request, bench: BenchDep) -> Response:
    snapshot = await bench.state.snapshot()
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
    snapshot = await bench.state.snapshot()
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
    boards = await standings(bench.state)
    alerts = await bench_alerts.list_alerts(bench.state, include_acknowledged=False)
    return await render(
        request,
        "models.html",
        "models",
        models=models,
        health={m["alias"]: views.health(m, boards, alerts) for m in models},
        allowances=await model_allowances(bench.state),  # what is left today, per model (allowance_note.html)
        evidence=views.evidence_by_model(boards),
        prices={alias: price.public() for alias, price in (await bench_cost.price_list(bench.state)).items()},
        status_line=views.status_line,
        fact=views.fact,
    )


@router.get("/leaderboard")
async def leaderboard_page(request: Request, bench: BenchDep, days: Days = None) -> Response:
    return await render(
        request,
        "leaderboard.html",
        "leaderboard",
        boards=await standings(bench.state, days),
        shapes=(await bench.state.snapshot()).shapes,
        days=days,
        day_choices=LEADERBOARD_DAYS,
        bar=views.bar,
        cost=await bench_cost.cost_report(bench.state, days=None if days is None else math.ceil(days)),
        advice=await advice(bench.state),
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
    found = await bench_discover.discover(bench.state, free=free, vision=vision, min_context=min_context)
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
    snapshot = await bench.state.snapshot()
    changes = [change_views.change_line(c) for c in await list_changes(bench.state, limit=CHANGES_SHOWN)]
    return await render(
        request,
        "settings.html",
        "settings",
        endpoints=await bench.endpoints.list_endpoints(),
        keys=await bench.keys.list_keys(),
        budgets=await bench.state.budgets.today(),
        reset_hour=snapshot.gateway["budget_reset_hour"],
        gateway_fields=views.gateway_fields(snapshot.gateway),
        shapes=snapshot.shapes,
        decision_models=snapshot.decision_models,
        alerts=await bench_alerts.list_alerts(bench.state, include_acknowledged=False),
        notify_targets=await bench.notify.list_targets(),
        notify_ready=apprise_send.installed(),
        changes=changes,
        presets=list(PRESETS.values()),
        adding=adding_provider(provider),
        kinds=KINDS,
        collections=sorted(snapshot.collections),
        roster=sorted(snapshot.models),
    )
