"""Every route is guarded as its place says, or is on the short list of open ones.

This walks every route of a real app in admin-token mode and calls each with no credentials:
`/api/...` and `/metrics` answer 401 (the admin token is needed), `/v1/...` and `/bench/...` 401 (a gateway key
is needed), and every other route is a dashboard page that sends the browser to /login. A body
that is not even JSON is sent to the routes that take one: the guard answers before any body is
read. A route added without a guard fails here until it is guarded or named in OPEN with why.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import httpx2
import pytest
from fastapi.routing import iter_route_contexts
from starlette.routing import Mount

from benchwarmers.server.app import create_app
from benchwarmers.settings import Settings
from tests.benchserver import BenchServer

TOKEN = "route-guard-admin-token-0f1e2d3c4b5a"
OPEN = {
    ("GET", "/healthz"): "says only whether the bench is up",
    ("GET", "/readyz"): "says only whether the database, Redis and the disk are usable, in words, no addresses",
    ("GET", "/login"): "the form that asks for the admin token",
    ("POST", "/login"): "takes the admin token",
    ("POST", "/logout"): "ends a session; refuses cross-site requests itself",
    ("GET", "/openapi.json"): "describes the routes and holds no data",
    ("GET", "/static/{version}"): "the dashboard's scripts, styles and icon",
}
ADMIN_NEEDED = {
    "error": {
        "message": "the dashboard API needs the admin token: log in at /login, or send "
        "Authorization: Bearer <BENCHWARMERS_ADMIN_TOKEN>",
        "type": "authentication_error",
        "param": None,
        "code": "admin_token_required",
    }
}
KEY_MISSING = "no gateway key: send Authorization: Bearer bwk_... (or x-api-key: bwk_..., as Anthropic's clients do)"
KEY_NEEDED = {
    "error": {"message": KEY_MISSING, "type": "authentication_error", "param": None, "code": "missing_api_key"}
}
# Anthropic's Messages routes answer in Anthropic's error shape.
ANTHROPIC_KEY_NEEDED = {"type": "error", "error": {"type": "authentication_error", "message": KEY_MISSING}}
_PARAMETER = re.compile(r"\{(\w+)(:path)?\}")


def routes() -> list[tuple[str, str]]:
    """(method, path) of every route the app serves, its included routers' routes too."""
    app = create_app(Settings(home=Path("unused"), admin_token=TOKEN))  # routes only: never started
    found: list[tuple[str, str]] = []
    for context in iter_route_contexts(app.routes):
        route = context.original_route
        if isinstance(route, Mount):
            found.append(("GET", route.path))
            continue
        methods = context.methods or set()
        found += [(method, context.path_format or "") for method in sorted(methods - {"HEAD", "OPTIONS"})]
    return found


ROUTES = routes()


@pytest.fixture(scope="module")
def admin_bench(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BenchServer]:
    server = BenchServer(tmp_path_factory.mktemp("guards"), admin_token=TOKEN).start()
    try:
        yield server
    finally:
        server.stop()


def concrete(path: str) -> str:
    """A path with its parameters filled (`{alias:path}` with a slash in it)."""
    return _PARAMETER.sub(lambda m: "fake/some-model" if m.group(2) else "x", path)


def test_the_walk_sees_every_kind_of_route() -> None:
    paths = {path for _, path in ROUTES}
    assert {"/v1/chat/completions", "/bench/verdict", "/api/keys", "/api/collections/{name}", "/settings"} <= paths
    assert set(OPEN) <= set(ROUTES), "an open route named in OPEN no longer exists"


GUARDED = [route for route in ROUTES if route not in OPEN]


@pytest.mark.parametrize(("method", "path"), GUARDED, ids=[f"{method} {path}" for method, path in GUARDED])
def test_a_route_refuses_a_caller_without_credentials(admin_bench: BenchServer, method: str, path: str) -> None:
    url = f"{admin_bench.url}{concrete(path)}"
    if method in ("POST", "PUT", "PATCH"):  # not even JSON: the guard answers before the body is read
        response = httpx2.request(method, url, content=b"{not json", headers={"content-type": "application/json"})
    else:
        response = httpx2.request(method, url)
    if path.startswith("/api/") or path == "/metrics":  # programs: the token as a bearer
        assert (response.status_code, response.json()) == (401, ADMIN_NEEDED)
        assert response.headers["www-authenticate"] == "Bearer"
    elif path.startswith("/v1/messages"):
        assert (response.status_code, response.json()) == (401, ANTHROPIC_KEY_NEEDED)
        assert response.headers["www-authenticate"] == "Bearer"
    elif path.startswith(("/v1/", "/bench/")):
        assert (response.status_code, response.json()) == (401, KEY_NEEDED)
        assert response.headers["www-authenticate"] == "Bearer"
    else:  # a dashboard page
        assert method == "GET", f"{method} {path}: a page that is not GET needs its place (/api) or an entry in OPEN"
        assert response.status_code == 303, f"{method} {path} is not guarded: {response.status_code}"
        assert response.headers["location"] == f"/login?next={quote(concrete(path), safe='')}"


@pytest.mark.parametrize("path", ["/healthz", "/readyz", "/login", "/openapi.json"])
def test_the_open_routes_answer_without_credentials(admin_bench: BenchServer, path: str) -> None:
    assert httpx2.get(f"{admin_bench.url}{path}").status_code == 200
