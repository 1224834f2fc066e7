"""The dashboard's JSON admin API and its pages over real HTTP: what each route reads and writes,
that every change lands in the changes log under the admin's name, and the pages' headers."""

from __future__ import annotations

import re
import time

import httpx2
import pytest

from benchwarmers.bench.services import Bench
from benchwarmers.server.rendering import CSP
from benchwarmers.store import alerts as alert_rows
from tests.support.benchserver import BenchServer
from tests.support.changes import changes
from tests.support.panels import ask, collection

PAGES = ("/", "/models", "/leaderboard", "/trends", "/suite", "/discover", "/settings")
TOKEN = "admin-token-for-dashboard-api-tests-1a2b"


def test_collections_are_made_replaced_and_deleted_with_every_change_logged(bench_with_roster):
    url = f"{bench_with_roster.url}/api/collections"
    made = httpx2.post(
        url,
        json={"name": "reviewers", "members": ["fake/llama-3.3-70b", "fake/qwen3-32b"], "shape": "review",
              "tags": ["code"], "max_explorers": 1},
    )  # fmt: skip
    assert made.status_code == 201
    assert made.json() == {
        "name": "reviewers",
        "description": "",
        "tags": ["code"],
        "members": ["fake/llama-3.3-70b", "fake/qwen3-32b"],
        "shape": "review",
        "reply": "all",
        "merger": None,
        "max_explorers": 1,
        "max_calls": None,
        "auto_swap": False,
        "require_tags": [],
        "exclude_tags": [],
        "daily_panels": None,
        "daily_tokens": None,
        "stand_ins": False,
        "warnings": [],
    }
    listed = httpx2.get(url).json()["data"]
    assert [(c["name"], c["explorers"], c["together"]) for c in listed] == [
        ("reviewers", 1, {"context_window": 32_000, "capabilities": ["text"]})
    ]
    # The form sends every field: what it leaves empty is cleared, not kept.
    replaced = httpx2.put(
        f"{url}/reviewers", json={"members": ["fake/kimi-k2"], "shape": None, "max_explorers": None, "reply": "merged"}
    )
    assert replaced.status_code == 200
    assert (replaced.json()["shape"], replaced.json()["max_explorers"], replaced.json()["tags"]) == (None, None, [])
    assert replaced.json()["reply"] == "merged"
    assert httpx2.put(f"{url}/reviewers", json={"name": "other", "members": ["fake/kimi-k2"]}).status_code == 400
    assert httpx2.delete(f"{url}/reviewers").json() == {"name": "reviewers", "deleted": True}
    assert httpx2.get(url).json()["data"] == []
    assert changes(bench_with_roster, "collection") == [
        ("dashboard", "create", "reviewers"),
        ("dashboard", "update", "reviewers"),
        ("dashboard", "delete", "reviewers"),
    ]


def test_the_api_takes_a_collection_as_name_or_bench_name(bench_with_roster, client):
    url = f"{bench_with_roster.url}/api/collections"
    made = httpx2.post(url, json={"name": "bench/pair", "members": ["fake/phi-4"], "max_explorers": 0})
    assert (made.status_code, made.json()["name"]) == (201, "pair")
    replaced = httpx2.put(f"{url}/pair", json={"name": "bench/pair", "members": ["fake/kimi-k2"], "max_explorers": 0})
    assert (replaced.status_code, replaced.json()["members"]) == (200, ["fake/kimi-k2"])
    panel = ask(client, "bench/pair").bench["panel"]
    for given in ("pair", "bench/pair"):
        found = httpx2.get(f"{bench_with_roster.url}/api/panels", params={"collection": given}).json()["data"]
        assert [p["id"] for p in found] == [panel], given


@pytest.mark.parametrize(
    ("body", "param", "message"),
    [
        ({"name": "Bad Name", "members": ["fake/phi-4"]}, "name", "collection name 'Bad Name' is not valid"),
        ({"name": "ok", "members": []}, "members", "a collection needs at least one member"),
        ({"name": "ok", "members": ["fake/llama-3.3"]}, "members", "Did you mean fake/llama-3.3-70b"),
        ({"name": "ok", "members": ["fake/phi-4"], "tags": ["Two Words"]}, "tags", "is not one lower-case word"),
        ({"name": "ok", "members": ["fake/phi-4"], "max_calls": 2.5}, "max_calls", "whole number from 0 to 20"),
        ({"name": "ok", "members": ["fake/phi-4"], "shape": "poetry"}, "shape", "shape 'poetry' is not known"),
        ({"name": "ok", "members": ["fake/phi-4"], "colour": "red"}, "colour", "unknown field(s): colour"),
    ],
)
def test_a_refused_collection_says_which_field_and_why(bench_with_roster, body, param, message):
    refused = httpx2.post(f"{bench_with_roster.url}/api/collections", json=body)
    assert refused.status_code == 400
    error = refused.json()["error"]
    assert (error["param"], error["type"]) == (param, "invalid_request_error")
    assert message in error["message"]


def test_the_model_popup_overrides_facts_and_the_gateway_uses_them(bench_with_roster, client):
    collection(bench_with_roster, "pair", ["llama-3.3-70b", "qwen3-32b"], max_explorers=0)
    url = f"{bench_with_roster.url}/api/models/fake/llama-3.3-70b"
    before = httpx2.get(url).json()
    assert (before["context_window"], before["vision"], before["enabled"]) == (128_000, False, True)
    assert {"fact": "context_window", "source": "listing"} in [
        {k: s[k] for k in ("fact", "source")} for s in before["sources"]
    ]
    patched = httpx2.patch(url, json={"context": 4_000, "vision": True, "family": "meta", "output": None})
    assert patched.status_code == 200
    model = patched.json()
    assert (model["context_window"], model["vision"], model["family"]) == (4_000, True, "meta")
    assert model["facts"]["context_window"] == {"value": 4_000, "source": "override"}
    assert client.models.list().data[0].model_extra["together"]["context_window"] == 4_000
    assert httpx2.patch(url, json={"enabled": False}).json()["status"] == "disabled"
    assert changes(bench_with_roster, "model") == [
        ("dashboard", "update", "fake/llama-3.3-70b"),
        ("dashboard", "update", "fake/llama-3.3-70b"),
    ]


@pytest.mark.parametrize(
    ("body", "param"),
    [
        ({"context": 0}, "context"),
        ({"context": "8k"}, "context"),
        ({"vision": "yes"}, "vision"),
        ({"family": ""}, "family"),
        ({"family": 7}, "family"),
        ({}, None),
        ({"window": 8000}, "window"),
    ],
)
def test_a_refused_override_names_the_field(bench_with_roster, body, param):
    refused = httpx2.patch(f"{bench_with_roster.url}/api/models/fake/phi-4", json=body)
    assert refused.status_code == 400
    assert refused.json()["error"]["param"] == param


def test_an_unknown_model_is_a_404_with_suggestions(bench_with_roster):
    missing = httpx2.get(f"{bench_with_roster.url}/api/models/fake/phi-5")
    assert missing.status_code == 404
    assert "Did you mean fake/phi-4" in missing.json()["error"]["message"]


def test_endpoints_are_added_refreshed_and_removed_and_keys_show_only_their_last_four(server, fake):
    url = f"{server.url}/api/endpoints"
    fake.listing("/v1/models", {"object": "list", "data": [{"id": "m1", "context_length": 8_000}]})
    made = httpx2.post(url, json={"name": "fake", "base_url": fake.base_url, "api_key": "sk-secret-abcd"})
    assert made.status_code == 201
    assert (made.json()["api_key"], made.json()["kind"], made.json()["free_tier"]) == ("…abcd", "openai", False)
    assert "sk-secret-abcd" not in httpx2.get(url).text
    assert "sk-secret-abcd" not in httpx2.get(f"{server.url}/settings").text
    refreshed = httpx2.post(f"{url}/fake/refresh").json()
    assert (refreshed["name"], refreshed["listed"], refreshed["added"]) == ("fake", 1, 1)
    preset = httpx2.post(url, json={"name": "groq", "preset": "groq"}).json()
    assert (preset["base_url"], preset["kind"], preset["api_key_env"], preset["free_tier"]) == (
        "https://api.groq.com/openai/v1",
        "groq",
        "GROQ_API_KEY",
        True,
    )
    assert httpx2.post(url, json={"name": "nourl"}).json()["error"]["param"] == "base_url"
    assert httpx2.post(url, json={"name": "x", "preset": "nope"}).json()["error"]["param"] == "preset"
    assert httpx2.delete(f"{url}/groq").status_code == 200
    assert [e["name"] for e in httpx2.get(url).json()["data"]] == ["fake"]
    assert changes(server, "endpoint") == [
        ("dashboard", "create", "fake"),
        ("dashboard", "refresh", "fake"),
        ("dashboard", "create", "groq"),
        ("dashboard", "delete", "groq"),
    ]


def test_a_listing_that_cannot_be_read_is_a_502_with_the_providers_reason(server, fake):
    fake.listing("/v1/models", {"error": {"message": "Invalid API key"}}, status=401)
    httpx2.post(f"{server.url}/api/endpoints", json={"name": "fake", "base_url": fake.base_url})
    failed = httpx2.post(f"{server.url}/api/endpoints/fake/refresh")
    assert failed.status_code == 502
    error = failed.json()["error"]
    assert (error["type"], error["code"], error["param"]) == ("upstream_error", "upstream_failed", "name")
    assert error["message"] == "refreshing fake failed: auth failed (401): Invalid API key"
    assert httpx2.post(f"{server.url}/api/endpoints/nope/refresh").status_code == 404


def test_gateway_limits_are_checked_before_they_are_stored(server):
    url = f"{server.url}/api/settings"
    assert httpx2.put(url, json={"max_explorers": 1, "seat_timeout": 30}).json()["max_explorers"] == 1
    assert httpx2.get(url).json()["seat_timeout"] == 30
    for body, param in (
        ({"max_explorers": "two"}, "max_explorers"),
        ({"max_calls": 21}, "max_calls"),
        ({"max_calls": 2.5}, "max_calls"),
        ({"seat_timeout": -1}, "seat_timeout"),
        ({"epsilon": 1.5}, "epsilon"),
        ({"max_explorers": True}, "max_explorers"),
        ({"colour": 1}, "colour"),
    ):
        refused = httpx2.put(url, json=body)
        assert (refused.status_code, refused.json()["error"]["param"]) == (400, param), body
    assert httpx2.get(url).json()["max_explorers"] == 1
    assert changes(server, "setting") == [("dashboard", "update", "gateway")]


def test_shapes_and_decision_models(bench_with_roster):
    url = f"{bench_with_roster.url}/api/shapes"
    shapes = httpx2.put(f"{url}/translation", json={"description": "Turning text into another language."}).json()
    assert shapes["translation"] == "Turning text into another language."
    assert httpx2.get(url).json()["translation"] == shapes["translation"]
    assert httpx2.put(f"{url}/Bad", json={"description": "x"}).json()["error"]["param"] == "name"
    assert httpx2.put(f"{url}/empty", json={"description": "  "}).json()["error"]["param"] == "description"
    assert httpx2.delete(f"{url}/general").status_code == 400
    assert "translation" not in httpx2.delete(f"{url}/translation").json()
    assert changes(bench_with_roster, "shape") == [
        ("dashboard", "create", "translation"),
        ("dashboard", "delete", "translation"),
    ]
    decisions = f"{bench_with_roster.url}/api/decision-models"
    assert httpx2.get(decisions).json()["data"] == []
    assert httpx2.post(decisions, json={"alias": "fake/nope"}).status_code == 404
    assert httpx2.post(decisions, json={"alias": "fake/phi-4", "kind": "oracle"}).json()["error"]["param"] == "kind"
    assert httpx2.delete(f"{decisions}/fake/phi-4").status_code == 404


def test_an_alert_is_listed_and_acknowledged_once(bench_with_roster):
    async def raise_one(bench: Bench) -> int | None:
        async with bench.state.write() as conn:
            return await alert_rows.raise_alert(
                conn, kind="went_paid", subject="fake/phi-4", message="fake/phi-4 now has a price", now=time.time()
            )

    alert_id = bench_with_roster.admin(raise_one)
    url = f"{bench_with_roster.url}/api/alerts"
    listed = httpx2.get(url).json()["data"]
    assert [(a["id"], a["label"], a["subject"]) for a in listed] == [(alert_id, "went paid", "fake/phi-4")]
    assert "fake/phi-4 now has a price" in httpx2.get(f"{bench_with_roster.url}/settings").text
    acked = httpx2.post(f"{url}/{alert_id}/ack").json()
    assert acked["acknowledged_at"] is not None
    assert httpx2.post(f"{url}/{alert_id}/ack").json()["acknowledged_at"] == acked["acknowledged_at"]
    assert httpx2.get(url).json()["data"] == []
    assert len(httpx2.get(f"{url}?all=1").json()["data"]) == 1
    assert httpx2.post(f"{url}/999/ack").status_code == 404
    assert httpx2.post(f"{url}/x/ack").status_code == 400
    assert changes(bench_with_roster, "alert") == [("dashboard", "acknowledge", "fake/phi-4")]


def test_discover_filters_and_adds_a_reachable_model(bench_with_roster):
    url = f"{bench_with_roster.url}/api/discover"
    found = httpx2.get(f"{url}?free=1&vision=1&min_context=100000&limit=50").json()["data"]
    assert found
    assert all(f["free"] and f["vision"] and f["context_window"] >= 100_000 for f in found)
    # fake's listing (read at refresh) does not carry it: not reachable through fake, whatever its kind says.
    unlisted = httpx2.post(url, json={"model": "openrouter/qwen/qwen3-coder:free"})
    assert (unlisted.status_code, unlisted.json()["error"]["code"]) == (400, "not_listed")
    # Through an OpenRouter endpoint whose listing was never read: unverified, added and probed.
    second = {"name": "or2", "base_url": bench_with_roster_fake_url(bench_with_roster), "kind": "openrouter"}
    assert httpx2.post(f"{bench_with_roster.url}/api/endpoints", json=second).status_code == 201
    added = httpx2.post(url, json={"model": "openrouter/qwen/qwen3-coder:free"})
    assert added.status_code == 201
    assert added.json()["alias"] == "or2/qwen/qwen3-coder:free"
    again = httpx2.post(url, json={"model": "openrouter/qwen/qwen3-coder:free"})
    assert again.status_code == 409
    assert httpx2.get(f"{url}?min_context=lots").json()["error"]["param"] == "min_context"
    assert changes(bench_with_roster, "model")[-1] == ("dashboard", "create", "or2/qwen/qwen3-coder:free")


def bench_with_roster_fake_url(server) -> str:
    return next(e["base_url"] for e in httpx2.get(f"{server.url}/api/endpoints").json()["data"] if e["name"] == "fake")


def test_the_gateway_card_pages_panels_without_answers_and_counts_what_is_owed(bench_with_roster, client):
    collection(bench_with_roster, "solo", ["kimi-k2"], max_explorers=0)
    url = f"{bench_with_roster.url}/api/panels"
    assert httpx2.get(f"{url}/head").json() == {"ids": [], "verdict": 0}
    ids = [ask(client, "bench/solo", f"question {i}").bench["panel"] for i in range(5)]
    head = httpx2.get(f"{url}/head").json()
    assert head == {"ids": ids[::-1], "verdict": 0}
    first = httpx2.get(f"{url}?limit=2").json()
    assert [p["id"] for p in first["data"]] == ids[::-1][:2]
    assert first["owed"] == 5
    seat = first["data"][0]["seats"][0]
    assert set(seat) == {"call", "seat", "alias", "status", "seconds", "error", "error_kind", "answer_chars", "verdict"}
    assert seat["answer_chars"] == len("answer from kimi-k2")
    assert "request" not in first["data"][0]
    second = httpx2.get(f"{url}?limit=2&before={first['next']}").json()
    third = httpx2.get(f"{url}?limit=2&before={second['next']}").json()
    assert [p["id"] for p in first["data"] + second["data"] + third["data"]] == ids[::-1]
    assert third["next"] is None
    full = httpx2.get(f"{url}/{ids[0]}").json()
    assert full["seats"][0]["answer"] == "answer from kimi-k2"
    assert full["request"]["messages"] == [{"role": "user", "content": "question 0"}]
    assert httpx2.get(f"{url}/p-nope").status_code == 404
    assert httpx2.get(f"{url}?limit=0").status_code == 400
    assert httpx2.get(f"{url}?before=yesterday").json()["error"]["param"] == "before"

    judged = httpx2.post(f"{bench_with_roster.url}/api/verdicts", json={"call": seat["call"], "useful": True})
    assert judged.json() == {"call": seat["call"], "recorded": True, "replaced": False}
    assert httpx2.get(url).json()["owed"] == 4
    assert httpx2.get(f"{url}/head").json()["verdict"] == 1

    # The log's filters, each with the count of what matches; `after` pages towards the newest.
    def found(query: str) -> tuple[list[str], int]:
        page = httpx2.get(f"{url}?{query}").json()
        return [p["id"] for p in page["data"]], page["count"]

    assert first["data"][0]["prompt"] == "question 4"
    assert found("q=QUESTION 3") == ([ids[3]], 1)
    assert found("q=50%25") == ([], 0)  # % is a character, not a wildcard
    assert found("owed=1&limit=10") == (ids[::-1][1:], 4)
    assert found("collection=solo&model=fake/kimi-k2&status=ok&caller=local&limit=2") == (ids[::-1][:2], 5)
    assert found("collection=other") == ([], 0)
    assert found("status=error") == ([], 0)
    assert found(f"after={httpx2.get(f'{url}/{ids[1]}').json()['created']}&limit=1") == ([ids[2]], 5)
    assert httpx2.get(url).json()["running"] == []
    verdict = httpx2.get(f"{url}/{first['data'][0]['id']}").json()["seats"][0]["verdict"]
    assert (verdict["useful"], verdict["caller"]) == (True, "dashboard")


@pytest.mark.parametrize("path", PAGES)
def test_every_page_carries_the_content_security_policy_and_no_inline_script(server, path):
    page = httpx2.get(f"{server.url}{path}")
    assert page.status_code == 200
    assert page.headers["content-type"] == "text/html; charset=utf-8"
    assert page.headers["content-security-policy"] == CSP
    assert "script-src 'self'" in CSP and "unsafe-inline" not in CSP
    assert (page.headers["x-frame-options"], page.headers["cache-control"]) == ("DENY", "no-store")
    scripts = re.findall(r"<script\b([^>]*)>(.*?)</script>", page.text, re.DOTALL)
    assert scripts
    for attributes, body in scripts:
        assert 'src="/static/' in attributes or ('type="application/json"' in attributes and body.strip()), attributes
    assert not re.search(r"<[^>]*\s(style|on[a-z]+)\s*=", page.text)  # no inline style or event handler


def test_assets_are_versioned_and_cached_for_a_year(server):
    page = httpx2.get(server.url).text
    assets = re.findall(r'(?:href|src)="(/static/[^"]+)"', page)
    assert {a.rsplit("/", 1)[-1] for a in assets} >= {"app.css", "dark.css", "main.js", "icon.svg"}
    for asset in assets:
        served = httpx2.get(f"{server.url}{asset}")
        assert served.status_code == 200, asset
        assert served.headers["cache-control"] == "public, max-age=31536000, immutable"
    assert httpx2.get(f"{server.url}/static/any/js/missing.js").status_code == 404
    assert httpx2.get(f"{server.url}/static/any/../../settings.py").status_code == 404


def test_the_theme_cookie_picks_the_stylesheet_and_an_unknown_one_falls_back(server):
    hardwood = httpx2.get(server.url, cookies={"bw_theme": "hardwood"}).text
    assert 'data-theme="hardwood"' in hardwood and "/themes/hardwood.css" in hardwood
    # No theme picked (or an unknown one): the system's preference, dark or light (hardwood).
    fallback = httpx2.get(server.url, cookies={"bw_theme": "../evil"}).text
    assert 'data-theme="system"' in fallback and "evil" not in fallback
    assert 'href="/static/' in fallback and 'dark.css" media="(prefers-color-scheme: dark)"' in fallback
    assert 'hardwood.css" media="not all and (prefers-color-scheme: dark)"' in fallback


def test_verdicts_post_to_the_gateway_unless_keys_are_required(tmp_path):
    open_bench = BenchServer(tmp_path / "open").start()
    keyed = BenchServer(tmp_path / "keyed", require_keys=True).start()
    try:
        assert 'data-verdict-url="/bench/verdict"' in httpx2.get(open_bench.url).text
        session = httpx2.get(f"{keyed.url}/login", params={"token": keyed.dashboard_token()}).cookies
        assert 'data-verdict-url="/api/verdicts"' in httpx2.get(keyed.url, cookies=session).text
    finally:
        open_bench.stop()
        keyed.stop()


def test_with_an_admin_token_pages_send_to_the_login_and_the_api_asks_for_it(tmp_path):
    server = BenchServer(tmp_path / "home", admin_token=TOKEN).start()
    try:
        for path in PAGES:
            page = httpx2.get(f"{server.url}{path}")
            assert page.status_code == 303
            assert page.headers["location"].startswith("/login?next=")
        for path in ("/api/collections", "/api/panels", "/api/panels/head", "/api/changes", "/api/discover"):
            assert httpx2.get(f"{server.url}{path}").status_code == 401, path
        assert httpx2.post(f"{server.url}/api/collections", json={}).status_code == 401
        login = httpx2.post(f"{server.url}/login", data={"token": TOKEN, "next": "/"})
        cookies = {"bw_session": login.cookies["bw_session"]}
        assert httpx2.get(f"{server.url}/settings", cookies=cookies).status_code == 200
        bearer = {"authorization": f"Bearer {TOKEN}"}
        made = httpx2.put(f"{server.url}/api/shapes/legal", json={"description": "Law questions."}, headers=bearer)
        assert made.status_code == 200
        assert changes_as(server, bearer) == [("admin", "create", "legal")]
    finally:
        server.stop()


def changes_as(server: BenchServer, headers: dict[str, str]) -> list[tuple[str, str, str]]:
    rows = httpx2.get(f"{server.url}/api/changes?subject=shape", headers=headers).json()["data"]
    return [(c["actor"], c["action"], c["name"]) for c in rows]


def test_a_page_from_another_site_cannot_change_the_bench(server):
    refused = httpx2.post(
        f"{server.url}/api/collections",
        json={"name": "x", "members": []},
        headers={"origin": "https://evil.example", "sec-fetch-site": "cross-site"},
    )
    assert refused.status_code == 403
    assert refused.json()["error"]["code"] == "cross_site_request"


def test_a_panel_whose_seats_still_run_is_listed_as_running(bench_with_roster, client, fake):
    from concurrent.futures import ThreadPoolExecutor

    fake.script("kimi-k2", hang=True)  # never answers: the seat runs until its timeout
    assert httpx2.put(f"{bench_with_roster.url}/api/settings", json={"seat_timeout": 1}).status_code == 200
    collection(bench_with_roster, "slow", ["kimi-k2"], max_explorers=0)
    url = f"{bench_with_roster.url}/api/panels"
    with ThreadPoolExecutor(1) as apart:
        asking = apart.submit(ask, client, "bench/slow", "Still thinking?")
        running: list = []
        while not running and not asking.done():
            running = httpx2.get(url).json()["running"]
        reply = asking.result().bench
    # The reservation holds no request yet (it is written, redacted, with the seats): no prompt to show.
    assert [(r["id"], r["collection"], r["caller"], r["prompt"]) for r in running] == [
        (reply["panel"], "slow", "local", "")
    ]
    after = httpx2.get(url).json()
    assert after["running"] == [] and after["data"][0]["id"] == reply["panel"]
    assert after["data"][0]["seats"][0]["status"] == "error"
