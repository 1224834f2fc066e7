"""Every route is guarded as its place says, in every mode, or is on the short list of open ones.

This walks every route of a real app and calls each one, in each access mode:

- with an admin token, and with BENCHWARMERS_REQUIRE_KEYS alone (the dashboard's token then lives in
  the home's `dashboard-token`), called with no credentials and with a valid gateway key:
  `/api/...` and `/metrics` answer 401 (the dashboard's token is needed, and a gateway key never is
  it), `/v1/...` and `/bench/...` answer 401 without a key, and every other route is a dashboard
  page that sends the browser to /login;
- as installed (no variables), every route answers without credentials: nothing is refused for
  want of one.

A body that is not even JSON is sent to the routes that take one: the guard answers before any body
is read. A route added without a guard fails here until it is guarded or named in OPEN with why.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import httpx2
import pytest
from fastapi.routing import iter_route_contexts
from starlette.routing import Mount

from benchwarmers.server.app import create_app
from benchwarmers.settings import Settings
from tests.support.benchserver import BenchServer

TOKEN = "route-guard-admin-token-0f1e2d3c4b5a"
OPEN = {
    ("GET", "/healthz"): "says only whether the bench is up",
    ("GET", "/readyz"): "says only whether the database, Redis and the disk are usable, in words, no addresses",
    ("GET", "/login"): "the form that asks for the dashboard's token, or takes it once in the URL",
    ("POST", "/login"): "takes the dashboard's token",
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
DASHBOARD_NEEDED = {
    "error": {
        "message": "the dashboard API needs the dashboard's session, and a gateway key never opens it: open the "
        "login URL `benchwarmers dashboard-url` prints (or log in at /login), or send Authorization: Bearer <the "
        "token in BENCHWARMERS_HOME/dashboard-token>",
        "type": "authentication_error",
        "param": None,
        "code": "admin_token_required",
    }
}
KEY_NEEDED = {
    "error": {"message": KEY_MISSING, "type": "authentication_error", "param": None, "code": "missing_api_key"}
}
# Anthropic's Messages routes answer in Anthropic's error shape.
ANTHROPIC_KEY_NEEDED = {"type": "error", "error": {"type": "authentication_error", "message": KEY_MISSING}}
MODES = {"admin-token": {"admin_token": TOKEN}, "require-keys": {"require_keys": True}, "as-installed": {}}
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


@dataclass
class Guarded:
    mode: str
    server: BenchServer
    key: str  # a valid gateway key for every collection (as installed any bearer is ignored)


@pytest.fixture(scope="module", params=list(MODES))
def guarded(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Guarded]:
    mode = request.param
    server = BenchServer(tmp_path_factory.mktemp(f"guards-{mode}"), **MODES[mode]).start()
    try:
        key, _record = server.admin(lambda bench: bench.keys.create("app"))
        yield Guarded(mode, server, key)
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


def call(guarded: Guarded, method: str, path: str, credentials: str) -> httpx2.Response:
    url = f"{guarded.server.url}{concrete(path)}"
    headers = {"authorization": f"Bearer {guarded.key}"} if credentials == "gateway key" else {}
    if method in ("POST", "PUT", "PATCH"):  # not even JSON: the guard answers before the body is read
        headers["content-type"] = "application/json"
        return httpx2.request(method, url, content=b"{not json", headers=headers)
    return httpx2.request(method, url, headers=headers)


@pytest.mark.parametrize("credentials", ["none", "gateway key"])
@pytest.mark.parametrize(("method", "path"), GUARDED, ids=[f"{method} {path}" for method, path in GUARDED])
def test_a_route_refuses_a_caller_without_its_credentials(
    guarded: Guarded, method: str, path: str, credentials: str
) -> None:
    response = call(guarded, method, path, credentials)
    status = response.status_code
    if guarded.mode == "as-installed":  # open on loopback: nothing is refused for want of credentials
        assert status not in (401, 403, 303), f"{method} {path}: {status} {response.text}"
        return
    if path.startswith("/api/") or path == "/metrics":  # programs: the dashboard's token as a bearer
        needed = ADMIN_NEEDED if guarded.mode == "admin-token" else DASHBOARD_NEEDED
        assert (status, response.json()) == (401, needed)
        assert response.headers["www-authenticate"] == "Bearer"
    elif path.startswith(("/v1/", "/bench/")):
        if credentials == "gateway key":  # what a key is for: past the guard, to the route's own answer
            assert status not in (401, 303), f"{method} {path}: {status} {response.text}"
        else:  # Anthropic's Messages routes answer in Anthropic's error shape
            needed = ANTHROPIC_KEY_NEEDED if path.startswith("/v1/messages") else KEY_NEEDED
            assert (status, response.json()) == (401, needed)
            assert response.headers["www-authenticate"] == "Bearer"
    else:  # a dashboard page
        assert method == "GET", f"{method} {path}: a page that is not GET needs its place (/api) or an entry in OPEN"
        assert status == 303, f"{method} {path} is not guarded: {status}"
        assert response.headers["location"] == f"/login?next={quote(concrete(path), safe='')}"


@pytest.mark.parametrize("path", ["/healthz", "/readyz", "/login", "/openapi.json"])
def test_the_open_routes_answer_without_credentials(guarded: Guarded, path: str) -> None:
    # As installed /login sends the browser on to the dashboard, which is open.
    assert httpx2.get(f"{guarded.server.url}{path}", follow_redirects=True).status_code == 200
