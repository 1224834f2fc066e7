"""The dashboard's HTML pages and its static files.

Pages are rendered by Jinja2 with autoescape on, from the same core the API uses, each behind
`admin_for` (the login when an admin token is set). Every page carries a Content-Security-Policy
that allows scripts and styles from this server only: no inline script or style runs, so text a
model wrote can never become code on a page. Their scripts (`dashboard/static/js`) render the
Gateway card and the forms with DOM text nodes, never HTML strings.

Static files are served under `/static/<digest of the files>/...`, cached for a year: a changed
file changes the digest, and the digest is in the path rather than a query string so the
scripts' relative `import`s carry it too.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Any

from fastapi import APIRouter, FastAPI, Request
from jinja2 import Environment, FileSystemLoader
from starlette.responses import Response
from starlette.routing import Mount
from starlette.staticfiles import StaticFiles

from benchwarmers import __version__
from benchwarmers.bench.admin import alerts as bench_alerts
from benchwarmers.bench.admin.changes import list_changes
from benchwarmers.bench.admin.endpoints import KINDS
from benchwarmers.bench.admin.presets import PRESETS
from benchwarmers.bench.evidence.standings import standings
from benchwarmers.bench.upkeep import discover as bench_discover
from benchwarmers.dashboard import DEFAULT_THEME, STATIC, TEMPLATES, THEMES, asset_version, views
from benchwarmers.server.api_admin import collection_views, min_window
from benchwarmers.server.api_evidence import days_param
from benchwarmers.server.auth import access, admin_for

router = APIRouter()

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
NAV = (("/", "Collections"), ("/models", "Models"), ("/leaderboard", "Leaderboard"), ("/discover", "Discover"),
       ("/settings", "Settings"))  # fmt: skip


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
    return env


def theme_of(request: Request) -> str:
    chosen = request.cookies.get(THEME_COOKIE)
    return chosen if chosen in THEMES else DEFAULT_THEME


def render(request: Request, template: str, page: str, **context: Any) -> Response:
    settings = request.app.state.bench.settings
    body = (
        environment()
        .get_template(template)
        .render(
            page=page,
            path=request.url.path,
            theme=theme_of(request),
            # Without keys the gateway's own verdict route takes the dashboard's verdicts (caller `local`).
            verdict_url="/api/verdicts" if settings.keys_required else "/bench/verdict",
            logged_in=settings.admin_token is not None,
            **context,
        )
    )
    return Response(body, media_type="text/html; charset=utf-8", headers=PAGE_HEADERS)


# -- pages ------------------------------------------------------------------------------------------


@router.get("/")
async def collections_page(request: Request) -> Response:
    await admin_for(request)
    bench = request.app.state.bench
    snapshot = await bench.state.snapshot()
    return render(
        request,
        "collections.html",
        "collections",
        collections=await collection_views(bench),
        roster=sorted(snapshot.models),
        shapes=snapshot.shapes,
        gateway=snapshot.gateway,
    )


@router.get("/models")
async def models_page(request: Request) -> Response:
    await admin_for(request)
    bench = request.app.state.bench
    models = sorted(await bench.models.list_models(), key=lambda m: m["alias"])
    return render(
        request,
        "models.html",
        "models",
        models=models,
        evidence=views.evidence_by_model(await standings(bench.state)),
        status_line=views.status_line,
        fact=views.fact,
    )


@router.get("/leaderboard")
async def leaderboard_page(request: Request) -> Response:
    await admin_for(request)
    bench = request.app.state.bench
    days = days_param(request.query_params.get("days"))
    return render(
        request,
        "leaderboard.html",
        "leaderboard",
        boards=await standings(bench.state, days),
        shapes=(await bench.state.snapshot()).shapes,
        days=days,
        day_choices=LEADERBOARD_DAYS,
        bar=views.bar,
    )


def _page_number(raw: str | None) -> int:
    return int(raw) if raw and raw.isdecimal() and int(raw) >= 1 else 1


@router.get("/discover")
async def discover_page(request: Request) -> Response:
    await admin_for(request)
    params = request.query_params
    filters = {
        "free": params.get("free") == "1",
        "vision": params.get("vision") == "1",
        "min_context": min_window(params.get("min_context")),
        "q": (params.get("q") or "").strip(),
    }
    found = await bench_discover.discover(
        request.app.state.bench.state,
        free=filters["free"],
        vision=filters["vision"],
        min_context=filters["min_context"],
    )
    if filters["q"]:
        needle = filters["q"].lower()
        found = [f for f in found if needle in f["id"].lower() or needle in (f["name"] or "").lower()]
    pages = max(1, math.ceil(len(found) / DISCOVER_PAGE))
    number = min(_page_number(params.get("page")), pages)
    start = (number - 1) * DISCOVER_PAGE
    query = {k: ("1" if v is True else v) for k, v in filters.items() if v}
    return render(
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
async def settings_page(request: Request) -> Response:
    await admin_for(request)
    bench = request.app.state.bench
    snapshot = await bench.state.snapshot()
    changes = [views.change_line(c) for c in await list_changes(bench.state, limit=CHANGES_SHOWN)]
    return render(
        request,
        "settings.html",
        "settings",
        endpoints=await bench.endpoints.list_endpoints(),
        keys=await access(request).keys.list_keys(),
        gateway=snapshot.gateway,
        shapes=snapshot.shapes,
        decision_models=snapshot.decision_models,
        alerts=await bench_alerts.list_alerts(bench.state, include_acknowledged=False),
        changes=changes,
        presets=list(PRESETS.values()),
        kinds=KINDS,
        collections=sorted(snapshot.collections),
        roster=sorted(snapshot.models),
        keys_required=bench.settings.keys_required,
    )
