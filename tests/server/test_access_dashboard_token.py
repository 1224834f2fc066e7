"""BENCHWARMERS_REQUIRE_KEYS without an admin token: apps hold gateway keys, and no key (nor nothing)
reaches the admin surface. The dashboard has a token of its own, `dashboard-token` in the home, that
the browser exchanges once for the session cookie (`/login?token=...`).

The attacks are the ones found from outside (issue 32, item 4): another collection edited, another
app's key revoked, the settings and a model changed, another app's prompt read, its call judged
through `/api/verdicts`. Each is tried with a scoped key, a full key and no key, then done with
the dashboard's token, and the changes log names who did it.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2
import pytest

from benchwarmers.bench.admin import dashboard_token
from benchwarmers.store.changes import list_changes
from tests.fakes.upstream import FakeUpstream
from tests.support.benchserver import BenchServer, add_fake_endpoint, listed

PROMPT = "the full app's private plan: ship on friday"
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


@dataclass
class Keyed:
    server: BenchServer
    fake: FakeUpstream
    keys: dict[str, str] = field(default_factory=dict)  # narrow (bench/alpha only), full (every collection)
    panel: str = ""  # asked by `full` on bench/beta
    call: str = ""

    def headers(self, who: str) -> dict[str, str]:
        if who == "dashboard":
            return self.server.admin_headers()
        return {"authorization": f"Bearer {self.keys[who]}"} if who in self.keys else {}


@pytest.fixture(scope="module")
def keyed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Keyed]:
    with FakeUpstream() as fake:
        for model in ("m-alpha", "m-beta", "m-gamma"):
            fake.script(model, latency=0.0)
        server = BenchServer(tmp_path_factory.mktemp("keyed"), require_keys=True).start()
        try:
            add_fake_endpoint(server, fake, models=[listed("m-alpha"), listed("m-beta"), listed("m-gamma")])
            for name in ("alpha", "beta"):
                made = {"name": name, "members": [f"fake/m-{name}"], "description": f"{name} work", "max_explorers": 0}
                server.admin(lambda bench, made=made: bench.collections.add_collection(made))

            async def make_keys(bench: Any) -> dict[str, str]:
                return {
                    "narrow": (await bench.keys.create("narrow", ["alpha"]))[0],
                    "full": (await bench.keys.create("full"))[0],
                }

            world = Keyed(server, fake, keys=server.admin(make_keys))
            body = {"model": "bench/beta", "messages": [{"role": "user", "content": PROMPT}]}
            reply = httpx2.post(f"{server.v1}/chat/completions", json=body, headers=world.headers("full"), timeout=30)
            assert reply.status_code == 200, reply.text
            world.panel, world.call = reply.json()["bench"]["panel"], reply.json()["bench"]["seats"][0]["call"]
            yield world
        finally:
            server.stop()


def test_the_token_file_is_made_on_start_private_and_whole(keyed: Keyed) -> None:
    path = keyed.server.settings.home / "dashboard-token"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    token = path.read_text()
    assert token.endswith("\n") and len(token.strip()) == 43  # 32 random bytes, URL-safe
    assert [p.name for p in path.parent.iterdir() if p.name.startswith(".dashboard-token")] == []  # nothing staged


# -- nothing but the dashboard's token reaches the admin surface ------------------------------------

WRITES = [
    ("PUT", "/api/collections/beta", {"members": ["fake/m-gamma"], "description": "taken over"}),
    ("DELETE", "/api/keys/full", None),
    ("PUT", "/api/settings", {"ping_interval": 2}),
    ("PATCH", "/api/models/fake/m-beta", {"enabled": False}),
    ("POST", "/api/collections", {"name": "mine", "members": ["fake/m-gamma"]}),
    ("POST", "/api/keys", {"name": "minted"}),
]


@pytest.mark.parametrize("who", ["none", "narrow", "full"])
@pytest.mark.parametrize(("method", "path", "body"), WRITES, ids=[f"{m} {p}" for m, p, _ in WRITES])
def test_no_api_write_succeeds_with_a_gateway_key_or_none(keyed: Keyed, who: str, method: str, path: str, body):
    response = httpx2.request(method, f"{keyed.server.url}{path}", json=body, headers=keyed.headers(who))
    assert (response.status_code, response.json()) == (401, DASHBOARD_NEEDED)
    # Nothing changed: beta still seats its member, the full key still calls, the settings are as they were.
    admin = keyed.headers("dashboard")
    beta = httpx2.get(f"{keyed.server.url}/api/collections", headers=admin).json()["data"]
    assert {c["name"]: c["members"] for c in beta} == {"alpha": ["fake/m-alpha"], "beta": ["fake/m-beta"]}
    assert httpx2.get(f"{keyed.server.v1}/models", headers=keyed.headers("full")).status_code == 200
    assert httpx2.get(f"{keyed.server.url}/api/settings", headers=admin).json()["ping_interval"] == 5
    assert httpx2.get(f"{keyed.server.url}/api/models/fake/m-beta", headers=admin).json()["enabled"] is True
    assert [k["name"] for k in httpx2.get(f"{keyed.server.url}/api/keys", headers=admin).json()["data"]] == [
        "full",
        "narrow",
    ]


@pytest.mark.parametrize("who", ["none", "narrow"])
def test_another_callers_prompt_is_not_read_nor_its_call_judged(keyed: Keyed, who: str) -> None:
    url, headers = keyed.server.url, keyed.headers(who)
    for path in (f"/api/panels/{keyed.panel}", "/api/panels", "/api/panels/head", "/api/changes"):
        response = httpx2.get(f"{url}{path}", headers=headers)
        assert (response.status_code, response.json()) == (401, DASHBOARD_NEEDED), path
        assert PROMPT not in response.text
    page = httpx2.get(f"{url}/panels/{keyed.panel}", headers=headers)
    assert (page.status_code, page.headers["location"]) == (303, f"/login?next=%2Fpanels%2F{keyed.panel}")
    verdict = {"call": keyed.call, "useful": False, "note": "judged by someone else"}
    through_api = httpx2.post(f"{url}/api/verdicts", json=verdict, headers=headers)
    assert (through_api.status_code, through_api.json()) == (401, DASHBOARD_NEEDED)
    if who == "narrow":  # the gateway's own routes: a key reads and judges only what it asked
        assert httpx2.get(f"{url}/bench/panels/{keyed.panel}", headers=headers).status_code == 404
        assert httpx2.post(f"{url}/bench/verdict", json=verdict, headers=headers).status_code == 403
    seat = httpx2.get(f"{url}/bench/panels/{keyed.panel}", headers=keyed.headers("full")).json()["seats"][0]
    assert seat["verdict"] is None


def test_the_dashboards_token_reads_and_changes_and_the_log_names_the_admin(keyed: Keyed) -> None:
    url, admin = keyed.server.url, keyed.headers("dashboard")
    panel = httpx2.get(f"{url}/api/panels/{keyed.panel}", headers=admin)
    assert panel.status_code == 200
    assert panel.json()["request"]["messages"] == [{"role": "user", "content": PROMPT}]
    body = {"name": "gamma", "members": ["fake/m-gamma"], "description": "gamma work", "max_explorers": 0}
    assert httpx2.post(f"{url}/api/collections", json=body, headers=admin).status_code == 201
    judged = httpx2.post(f"{url}/api/verdicts", json={"call": keyed.call, "useful": True}, headers=admin)
    assert judged.json() == {"call": keyed.call, "recorded": True, "replaced": False}
    removed = httpx2.delete(f"{url}/api/collections/gamma", headers=admin)
    assert removed.status_code == 200

    async def actors(bench: Any) -> list[tuple[str, str, str]]:
        async with bench.state.read() as conn:
            return [(c["actor"], c["action"], c["name"]) for c in await list_changes(conn, subject="collection")]

    # Newest first; the set-up went through the CLI's way (a Bench of its own, actor `test` here).
    assert keyed.server.admin(actors)[:2] == [("admin", "delete", "gamma"), ("admin", "create", "gamma")]
    seat = httpx2.get(f"{url}/bench/panels/{keyed.panel}", headers=keyed.headers("full")).json()["seats"][0]
    assert (seat["verdict"]["useful"], seat["verdict"]["caller"]) == (True, "admin")


# -- the login URL ------------------------------------------------------------------------------------


def test_the_login_url_is_exchanged_once_for_the_session(keyed: Keyed) -> None:
    url, token = keyed.server.url, keyed.server.dashboard_token()
    assert httpx2.get(f"{url}/settings").status_code == 303
    form = httpx2.get(f"{url}/login")
    assert "dashboard-token" in form.text and "benchwarmers dashboard-url" in form.text
    wrong = httpx2.get(f"{url}/login", params={"token": "not-the-token"})
    assert wrong.status_code == 401
    assert "That is not the dashboard token." in wrong.text
    assert "set-cookie" not in wrong.headers
    right = httpx2.get(f"{url}/login", params={"token": token, "next": "/settings#keys"})
    assert right.status_code == 303
    assert right.headers["location"] == "/settings#keys"  # on at once, to an address without the token
    assert right.headers["cache-control"] == "no-store"
    session = right.cookies["bw_session"]
    assert token not in right.headers["set-cookie"]
    cookies = {"bw_session": session}
    assert httpx2.get(f"{url}/settings", cookies=cookies).status_code == 200
    assert httpx2.get(f"{url}/api/keys", cookies=cookies).status_code == 200
    # A gateway key sent beside a session is not what opens it, and never opens it alone.
    assert httpx2.get(f"{url}/api/keys", headers=keyed.headers("full")).status_code == 401


def test_a_login_url_from_another_site_is_refused(keyed: Keyed) -> None:
    refused = httpx2.get(
        f"{keyed.server.url}/login",
        params={"token": keyed.server.dashboard_token()},
        headers={"origin": "http://evil.example"},
    )
    assert refused.status_code == 403
    assert refused.json()["error"]["code"] == "cross_site_request"
    assert "set-cookie" not in refused.headers


# -- bench.with for a scoped key ------------------------------------------------------------------------


def nominate(keyed: Keyed, who: str, nominees: list[str], model: str = "bench/alpha") -> httpx2.Response:
    body = {"model": model, "messages": [{"role": "user", "content": "hi"}], "bench": {"with": nominees}}
    return httpx2.post(f"{keyed.server.v1}/chat/completions", json=body, headers=keyed.headers(who), timeout=30)


def nominee_refused(alias: str) -> dict[str, Any]:
    return {
        "error": {
            "message": f"bench.with names {alias!r}, which is not a member of this gateway key's collections "
            "(bench/alpha): a key limited to collections may nominate only their members; leave it out of bench.with",
            "type": "permission_error",
            "param": "bench.with",
            "code": "nominee_not_allowed",
        }
    }


@pytest.mark.parametrize("alias", ["fake/m-gamma", "fake/m-beta", "fake/m-gama"])  # off the scope, another's, a typo
def test_a_scoped_key_nominates_only_its_collections_members(keyed: Keyed, alias: str) -> None:
    response = nominate(keyed, "narrow", ["fake/m-alpha", alias])
    # A typo gets no close match from the roster: the refusal names nothing beyond the key's scope.
    assert (response.status_code, response.json()) == (403, nominee_refused(alias))


def test_a_scoped_keys_own_member_may_be_nominated_and_a_full_key_any(keyed: Keyed) -> None:
    own = nominate(keyed, "narrow", ["fake/m-alpha"])
    assert own.status_code == 200, own.text
    anyone = nominate(keyed, "full", ["fake/m-gamma"])
    assert anyone.status_code == 200, anyone.text
    seats = [(s["alias"], s["seat"]) for s in anyone.json()["bench"]["seats"]]
    assert seats == [("fake/m-alpha", "member"), ("fake/m-gamma", "nominee")]


def test_with_an_admin_token_a_scoped_keys_nominees_are_limited_too(tmp_path: Path, keyed: Keyed) -> None:
    server = BenchServer(tmp_path / "home", admin_token="n" * 40).start()
    try:
        add_fake_endpoint(server, keyed.fake, models=[listed("m-alpha"), listed("m-gamma")])
        made = {"name": "alpha", "members": ["fake/m-alpha"], "description": "alpha work", "max_explorers": 0}
        server.admin(lambda bench: bench.collections.add_collection(made))
        key, _ = server.admin(lambda bench: bench.keys.create("narrow", ["alpha"]))
        body = {"model": "bench/alpha", "messages": [{"role": "user", "content": "hi"}]}
        body["bench"] = {"with": ["fake/m-gamma"]}
        bearer = {"authorization": f"Bearer {key}"}
        refused = httpx2.post(f"{server.v1}/chat/completions", json=body, headers=bearer)
        assert (refused.status_code, refused.json()) == (403, nominee_refused("fake/m-gamma"))
        assert not (server.settings.home / "dashboard-token").exists()
    finally:
        server.stop()


# -- the token file: shared by every process, replaced on demand ------------------------------------------


def test_processes_starting_together_agree_on_one_token(tmp_path: Path) -> None:
    path = tmp_path / "home" / "dashboard-token"
    with ThreadPoolExecutor(8) as pool:
        tokens = set(pool.map(lambda _: dashboard_token.read_or_make(path), range(32)))
    assert tokens == {path.read_text().strip()}
    assert sorted(p.name for p in path.parent.iterdir()) == ["dashboard-token"]


def test_a_token_is_kept_across_restarts_and_a_rotation_ends_every_session(tmp_path: Path) -> None:
    home = tmp_path / "home"
    server = BenchServer(home, require_keys=True).start()
    try:
        first = server.dashboard_token()
        session = httpx2.get(f"{server.url}/login", params={"token": first}).cookies["bw_session"]
    finally:
        server.stop()
    server = BenchServer(home, require_keys=True).start()  # a restart (or another worker) reads the same file
    try:
        assert server.dashboard_token() == first
        assert httpx2.get(f"{server.url}/api/keys", cookies={"bw_session": session}).status_code == 200
        rotated = dashboard_token.rotate(home / "dashboard-token")  # `benchwarmers dashboard-url --rotate`
        assert rotated != first
        assert stat.S_IMODE(os.stat(home / "dashboard-token").st_mode) == 0o600
        # The running server takes the new token on its next request; sessions of the old one end.
        assert httpx2.get(f"{server.url}/api/keys", cookies={"bw_session": session}).status_code == 401
        assert httpx2.get(f"{server.url}/api/keys", headers={"authorization": f"Bearer {first}"}).status_code == 401
        assert httpx2.get(f"{server.url}/api/keys", headers={"authorization": f"Bearer {rotated}"}).status_code == 200
    finally:
        server.stop()


def test_a_file_that_holds_no_token_is_refused_saying_what_to_do(tmp_path: Path) -> None:
    path = tmp_path / "dashboard-token"
    path.write_text("short\n")
    with pytest.raises(Exception) as refused:
        dashboard_token.read_or_make(path)
    assert str(refused.value) == (
        f"{path} does not hold a dashboard token (one line of at least 32 characters): "
        "delete it and run `benchwarmers dashboard-url`, which makes a new one"
    )
