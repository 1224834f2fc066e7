"""Who may call: every mode × every kind of key × every kind of route, with exact statuses and bodies.

Modes (GATEWAY.md "Who may call"): as installed (no variables), BENCHWARMERS_REQUIRE_KEYS=1, and
BENCHWARMERS_ADMIN_TOKEN. Keys: none, malformed, unknown, revoked, valid, out of scope (a key for
another collection), and the dashboard's token sent as a bearer (the admin token; with
BENCHWARMERS_REQUIRE_KEYS alone the home's `dashboard-token`). Routes: GET /v1/models,
GET /v1/models/{id}, POST /v1/chat/completions, POST /v1/responses, POST /bench/verdict, GET /api/keys.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2
import pytest

from tests.fakes.upstream import FakeUpstream
from tests.support.benchserver import BenchServer, add_fake_endpoint, listed

ADMIN_TOKEN = "matrix-admin-token-4c1f9a7e2d6b8035"
UNKNOWN_KEY = "bwk_" + "u" * 39 + "Zz42"
MODES = ("local", "keys", "admin")
STATES = ("none", "malformed", "unknown", "revoked", "valid", "out_of_scope", "admin_token")
ROUTES = ("models", "retrieve", "chat", "responses", "verdict", "api")
ALL_MODELS = [
    "bench/alpha",
    "bench/alpha:merged",
    "bench/alpha:pick",
    "bench/beta",
    "bench/beta:merged",
    "bench/beta:pick",
]


def error(status: int, message: str, code: str, type_: str = "authentication_error", param: str | None = None):
    return status, {"error": {"message": message, "type": type_, "param": param, "code": code}}


MISSING = error(
    401,
    "no gateway key: send Authorization: Bearer bwk_... (or x-api-key: bwk_..., as Anthropic's clients do)",
    "missing_api_key",
)
MALFORMED = error(
    401,
    "malformed gateway key: the bearer is not a gateway key (bwk_ and 43 letters, digits, '-' or '_'); "
    "make one with `benchwarmers key create NAME` or on the dashboard's Settings",
    "malformed_api_key",
)
UNKNOWN = error(
    401,
    "unknown gateway key ending Zz42: it was never made here or has been replaced; "
    "make one with `benchwarmers key create NAME` or on the dashboard's Settings",
    "invalid_api_key",
)
ADMIN_NEEDED = error(
    401,
    "the dashboard API needs the admin token: log in at /login, or send "
    "Authorization: Bearer <BENCHWARMERS_ADMIN_TOKEN>",
    "admin_token_required",
)
DASHBOARD_NEEDED = error(
    401,
    "the dashboard API needs the dashboard's session, and a gateway key never opens it: open the login URL "
    "`benchwarmers dashboard-url` prints (or log in at /login), or send Authorization: Bearer <the token in "
    "BENCHWARMERS_HOME/dashboard-token>",
    "admin_token_required",
)
OUT_OF_SCOPE_CHAT = error(
    403,
    "this gateway key may not call bench/alpha; it may call: bench/beta",
    "collection_not_allowed",
    "permission_error",
    "model",
)
NOT_LISTED = error(
    404,
    "the model 'bench/alpha' does not exist or you do not have access to it; GET /v1/models lists the "
    "collections this caller may use (bench/NAME, and bench/NAME:all, :merged, :pick)",
    "model_not_found",
    "invalid_request_error",
    "model",
)
NOT_YOUR_CALL = error(
    403, "this gateway key may judge only the calls it made", "not_your_call", "permission_error", "call"
)


def revoked(last4: str) -> tuple[int, dict[str, Any]]:
    return error(401, f"gateway key 'old' (ending {last4}) was revoked; ask for a new key", "revoked_api_key")


@dataclass
class World:
    mode: str
    server: BenchServer
    fake: FakeUpstream
    headers: dict[str, dict[str, str]] = field(default_factory=dict)
    revoked_last4: str = ""
    call: str = ""  # a seat made by the valid key ("local" when keys are not required)


def _setup(server: BenchServer, fake: FakeUpstream, mode: str) -> World:
    fake.script("m-alpha", latency=0.01)
    fake.script("m-beta", latency=0.01)
    add_fake_endpoint(server, fake, models=[listed("m-alpha"), listed("m-beta")])
    for name in ("alpha", "beta"):
        data = {"name": name, "members": [f"fake/m-{name}"], "description": f"{name} work", "tags": ["t"]}
        server.admin(lambda bench, data=data: bench.collections.add_collection({**data, "max_explorers": 0}))

    async def make_keys(bench: Any) -> dict[str, str]:
        keys = bench.keys
        made = {
            "valid": (await keys.create("app"))[0],
            "out_of_scope": (await keys.create("other", ["beta"]))[0],
            "revoked": (await keys.create("old"))[0],
        }
        await keys.revoke("old")
        return made

    keys = server.admin(make_keys)
    world = World(mode=mode, server=server, fake=fake, revoked_last4=keys["revoked"][-4:])
    world.headers = {
        "none": {},
        "malformed": {"authorization": "Bearer sk-proj-not-a-gateway-key-1234567890"},
        "unknown": {"authorization": f"Bearer {UNKNOWN_KEY}"},
        # The dashboard's token: the admin token, or with keys required alone the token file's.
        "admin_token": {"authorization": f"Bearer {server.dashboard_token() or ADMIN_TOKEN}"},
        **{state: {"authorization": f"Bearer {key}"} for state, key in keys.items()},
    }
    reply = httpx2.post(
        f"{server.v1}/chat/completions",
        json={"model": "bench/alpha", "messages": [{"role": "user", "content": "first"}]},
        headers=world.headers["valid"],
        timeout=30,
    )
    assert reply.status_code == 200, reply.text
    world.call = reply.json()["bench"]["seats"][0]["call"]
    first = {"call": world.call, "useful": False, "note": "first verdict"}
    assert httpx2.post(f"{server.url}/bench/verdict", json=first, headers=world.headers["valid"]).status_code == 200
    return world


@pytest.fixture(scope="module", params=MODES)
def world(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    mode = request.param
    env: dict[str, Any] = {"keys": {"require_keys": True}, "admin": {"admin_token": ADMIN_TOKEN}}.get(mode, {})
    with FakeUpstream() as fake:
        server = BenchServer(Path(tmp_path_factory.mktemp(f"access-{mode}")), **env).start()
        try:
            yield _setup(server, fake, mode)
        finally:
            server.stop()


def expected(world: World, state: str, route: str) -> tuple[int, Any]:
    """What each cell must answer. `None` as a body means: a 200 checked by `check_success`."""
    if world.mode == "local" or (state in ("valid", "out_of_scope") and route != "api"):
        refusal = None
    else:
        refusal = {
            "none": MISSING,
            "malformed": MALFORMED,
            "admin_token": MALFORMED,  # the admin token is not a gateway key
            "unknown": UNKNOWN,
            "revoked": revoked(world.revoked_last4),
        }.get(state)
    if route == "api":
        if world.mode == "local":
            return 200, None  # as installed the dashboard's API is open on loopback
        if state == "admin_token":
            return 200, None
        return ADMIN_NEEDED if world.mode == "admin" else DASHBOARD_NEEDED  # a gateway key never opens it
    if refusal is not None:
        return refusal
    if world.mode != "local" and state == "out_of_scope":
        if route in ("chat", "responses"):
            return OUT_OF_SCOPE_CHAT
        if route == "retrieve":
            return NOT_LISTED
        if route == "verdict":
            return NOT_YOUR_CALL
    return 200, None


def send(world: World, state: str, route: str) -> httpx2.Response:
    headers = world.headers[state]
    if route == "models":
        return httpx2.get(f"{world.server.v1}/models", headers=headers)
    if route == "retrieve":
        return httpx2.get(f"{world.server.v1}/models/bench/alpha", headers=headers)
    if route == "responses":
        body = {"model": "bench/alpha", "input": f"from {state}"}
        return httpx2.post(f"{world.server.v1}/responses", json=body, headers=headers, timeout=30)
    if route == "chat":
        body = {"model": "bench/alpha", "messages": [{"role": "user", "content": f"from {state}"}]}
        return httpx2.post(f"{world.server.v1}/chat/completions", json=body, headers=headers, timeout=30)
    if route == "verdict":
        body = {"call": world.call, "useful": True, "note": f"judged with {state}"}
        return httpx2.post(f"{world.server.url}/bench/verdict", json=body, headers=headers)
    return httpx2.get(f"{world.server.url}/api/keys", headers=headers)


def check_success(world: World, state: str, route: str, response: httpx2.Response) -> None:
    body = response.json()
    keyed = world.mode != "local"
    if route == "models":
        listed_ids = [m["id"] for m in body["data"]]
        scoped = keyed and state == "out_of_scope"
        assert listed_ids == (["bench/beta", "bench/beta:merged", "bench/beta:pick"] if scoped else ALL_MODELS)
    elif route == "retrieve":
        assert (body["id"], body["reply"]) == ("bench/alpha", "all")
    elif route in ("chat", "responses"):
        panel = body["bench"]["panel"]
        [seat] = body["bench"]["seats"]
        assert (seat["alias"], seat["status"]) == ("fake/m-alpha", "ok")
        detail = httpx2.get(f"{world.server.url}/bench/panels/{panel}", headers=world.headers[state]).json()
        assert detail["caller"] == ("app" if keyed else "local")
    elif route == "verdict":
        assert body == {"call": world.call, "recorded": True, "replaced": True}
    else:
        assert [k["name"] for k in body["data"]] == ["app", "other"]
        assert all(
            set(k)
            == {
                "name",
                "last4",
                "collections",
                "rpm",
                "daily_panels",
                "daily_tokens",
                "created_at",
                "last_used_at",
                "revoked_at",
            }
            for k in body["data"]
        )


@pytest.mark.parametrize("route", ROUTES)
@pytest.mark.parametrize("state", STATES)
def test_who_may_call(world: World, state: str, route: str) -> None:
    status, body = expected(world, state, route)
    response = send(world, state, route)
    assert response.status_code == status, response.text
    if body is None:
        check_success(world, state, route, response)
        return
    assert response.json() == body
    if status == 401:
        assert response.headers["www-authenticate"] == "Bearer"


@pytest.mark.parametrize("path", ["/healthz", "/readyz"])
def test_health_is_open_in_every_mode(world: World, path: str) -> None:
    response = httpx2.get(f"{world.server.url}{path}")
    assert response.status_code == 200
    assert response.json()["status"] in ("ok", "ready")


def test_the_bearer_is_ignored_without_keys_and_names_the_caller_with_them(world: World) -> None:
    panels = httpx2.get(f"{world.server.url}/bench/panels", headers=world.headers["valid"]).json()["data"]
    callers = {p["caller"] for p in panels}
    assert callers == ({"local"} if world.mode == "local" else {"app"})
    if world.mode != "local":
        # A key sees only its own panels; the other key has made none.
        others = httpx2.get(f"{world.server.url}/bench/panels", headers=world.headers["out_of_scope"])
        assert others.json() == {"object": "list", "data": []}
