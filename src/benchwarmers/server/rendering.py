"""The dashboard's pages as HTML, and its static files.

Pages are rendered by Jinja2 with autoescape on, from the same core the API uses. Every page carries a
Content-Security-Policy that allows scripts and styles from this server only: no inline script or style runs, so text a
model wrote can never become code on a page. Their scripts (`dashboard/static/js`) render the
Gateway card and the forms with DOM text nodes, never HTML strings.

Static files are served under `/static/<digest of the files>/...`, cached for a year: a changed
file changes the digest, and the digest is in the path rather than a query string so the
scripts' relative `import`s carry it too.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from fastapi import FastAPI, Request
from jinja2 import Environment, FileSystemLoader
from starlette.responses import Response
from starlette.routing import Mount
from starlette.staticfiles import StaticFiles

from benchwarmers import __version__
from benchwarmers.bench.evidence import cost as bench_cost
from benchwarmers.dashboard import STATIC, TEMPLATES, THEMES, asset_version, change_views, views

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
NAV = (("/", "Collections"), ("/playground", "Playground"), ("/models", "Models"), ("/leaderboard", "Leaderboard"),
       ("/trends", "Trends"), ("/suite", "Suite"), ("/discover", "Discover"), ("/settings", "Settings"))  # fmt: skip
# A request for a page (not the API, the gateway or a file): its errors are answered as a page too.
NOT_PAGES = ("/api/", "/v1/", "/bench/", "/static/", "/mcp", "/healthz", "/readyz", "/openapi", "/metrics")


class Assets(StaticFiles):
    """The package's static files, cached for a year (their URL changes when they do)."""

    def file_response(self, *args: Any, **kwargs: Any) -> Response:
        response = super().file_response(*args, **kwargs)
        response.headers["cache-control"] = "public, max-age=31536000, immutable"
        response.headers["x-content-type-options"] = "nosniff"
        return response


def mount_static(app: FastAPI) -> None:
    """`/static/<digest>/...` on `app`, after every route."""
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
            open_alerts=len(await bench.alerts.list_alerts(include_acknowledged=False)),
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
