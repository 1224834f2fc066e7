"""Ledgers and alerts: what each model got wrong (`benchwarmers model wrong`, `GET
/api/models/{alias}/wrong`), the verdicts-owed alert (by count and by age), and `endpoint remove`
refusing while collections seat the endpoint's models."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import httpx2
import orjson
import pytest

from benchwarmers.bench.admin import alerts as bench_alerts
from benchwarmers.bench.upkeep.owed import check_owed
from benchwarmers.bench.upkeep.watch import Watch
from benchwarmers.store.changes import list_changes
from tests.support.benchserver import BenchServer
from tests.support.gateway_fixtures import LLAMA, QWEN
from tests.support.panels import ask, collection

DAY = 86_400.0


def verdict(server: BenchServer, call: str, useful: bool, false: list[str] | None = None, **extra: Any) -> None:
    body = {"call": call, "useful": useful, "false": false or [], **extra}
    response = httpx2.post(f"{server.url}/bench/verdict", json=body)
    assert response.status_code == 200, response.text


@pytest.fixture
def cli_home(pair: BenchServer) -> Path:
    return pair.settings.home


@pytest.fixture
def cli(cli: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv("COLUMNS", "250")
    return cli


# -- what each model got wrong ---------------------------------------------------------------------


def test_the_wrong_ledger_lists_false_claims_newest_first_with_the_call(pair, client, cli):
    collection(pair, "duo", [LLAMA, QWEN], max_explorers=0)
    first = ask(client, "bench/duo").bench["seats"]
    second = ask(client, "bench/duo").bench["seats"]
    llama = f"fake/{LLAMA}"
    verdict(pair, first[0]["call"], False, ["mean([]) is 0", "len() is O(n)"], note="two wrong")
    verdict(pair, first[1]["call"], False, ["a claim of qwen"])
    verdict(pair, second[0]["call"], True, [])  # no false claim: not in the ledger
    verdict(pair, second[0]["call"], False, ["xs[i] is never None"])  # replaces it: the current verdict counts
    replaced = ask(client, "bench/duo").bench["seats"][0]["call"]
    verdict(pair, replaced, False, ["an old claim"])
    verdict(pair, replaced, True, [])  # the replaced verdict's claim is history, not the ledger

    response = httpx2.get(f"{pair.url}/api/models/{llama}/wrong")
    assert response.status_code == 200
    body = response.json()
    assert (body["object"], body["alias"]) == ("list", llama)
    assert [(c["claim"], c["call"], c["seat"], c["shape"], c["judge"]) for c in body["data"]] == [
        ("xs[i] is never None", second[0]["call"], "member", "general", "local"),
        ("mean([]) is 0", first[0]["call"], "member", "general", "local"),
        ("len() is O(n)", first[0]["call"], "member", "general", "local"),
    ]
    assert body["data"][1]["note"] == "two wrong"
    assert body["data"][1]["panel"] == first[0]["call"].split(".")[0]
    assert body["data"][0]["at"] > body["data"][1]["at"]
    limited = httpx2.get(f"{pair.url}/api/models/{llama}/wrong", params={"limit": 2}).json()["data"]
    assert [c["claim"] for c in limited] == ["xs[i] is never None", "mean([]) is 0"]
    bad = httpx2.get(f"{pair.url}/api/models/{llama}/wrong", params={"limit": 0})
    assert (bad.status_code, bad.json()["error"]["param"]) == (400, "limit")
    missing = httpx2.get(f"{pair.url}/api/models/zzz/unknown/wrong")
    assert (missing.status_code, missing.json()["error"]["message"]) == (
        404,
        "no model 'zzz/unknown' on the roster or in the log.",
    )

    code, out = cli("model", "wrong", llama, "--json")
    assert (code, orjson.loads(out)) == (0, body["data"])
    code, out = cli("model", "wrong", llama)
    assert code == 0
    rows = [[cell.strip() for cell in line.split("│")[1:-1]] for line in out.splitlines() if line.startswith("│")]
    assert [row[1:] for row in rows] == [
        ["xs[i] is never None", second[0]["call"], "general", "local"],  # brackets shown as written
        ["mean([]) is 0", first[0]["call"], "general", "local"],
        ["len() is O(n)", first[0]["call"], "general", "local"],
    ]
    assert cli("model", "wrong", f"fake/{QWEN}", "--limit", "1", "--json")[1].count('"claim"') == 1
    assert cli("model", "wrong", "fake/llama-3.3-70c") == (
        1,
        f"error: no model 'fake/llama-3.3-70c' on the roster or in the log. Did you mean {llama}?\n",
    )


def test_a_model_without_false_claims_has_an_empty_ledger(pair, cli):
    assert cli("model", "wrong", f"fake/{QWEN}") == (0, f"no verdict has marked a claim of fake/{QWEN} false\n")
    assert httpx2.get(f"{pair.url}/api/models/fake/{QWEN}/wrong").json()["data"] == []


# -- verdicts owed ---------------------------------------------------------------------------------


def owed_alerts(server: BenchServer) -> list[dict[str, Any]]:
    found = server.admin(lambda bench: bench_alerts.list_alerts(bench.state, include_acknowledged=True))
    return [a for a in found if a["kind"] == "owed"]


def check(server: BenchServer, now: float | None = None) -> str | None:
    return server.admin(lambda bench: check_owed(bench.state, now))


def test_the_owed_alert_rises_with_the_count_and_is_resolved_when_verdicts_catch_up(pair, client):
    pair.admin(lambda bench: bench.gateway_settings.set_gateway(owed_after=3, owed_days=0))
    collection(pair, "duo", [LLAMA, QWEN], max_explorers=0)
    first = ask(client, "bench/duo").bench["seats"]
    assert check(pair) is None  # two owed
    ask(client, "bench/duo")
    assert check(pair) == "raised"  # four owed
    [alert] = owed_alerts(pair)
    assert (alert["label"], alert["subject"], alert["message"]) == (
        "verdicts owed",
        "verdicts",
        "4 seats await a verdict (3 or more). Verdicts are the evidence that ranks models and picks explorers: "
        "GET /bench/panels?owed=1 lists the panels waiting (the dashboard marks their seats), and "
        "POST /bench/verdict judges each seat.",
    )
    assert check(pair) is None  # raised once
    pair.admin(lambda bench: bench_alerts.acknowledge(bench.state, alert["id"]))
    assert check(pair) is None  # acknowledged: quiet while the verdicts are still owed
    assert len(owed_alerts(pair)) == 1

    for seat in first:
        verdict(pair, seat["call"], True)
    assert check(pair) == "resolved"  # two owed
    [resolved] = owed_alerts(pair)
    assert resolved["resolved_at"] is not None

    async def logged(bench):
        async with bench.state.read() as conn:
            return await list_changes(conn, subject="alert")

    resolve = next(c for c in pair.admin(logged) if c["action"] == "resolve")
    assert (resolve["actor"], resolve["name"], resolve["after"]) == (
        "bench",
        "verdicts",
        {"kind": "owed", "ids": [alert["id"]], "owed": 2},
    )
    ask(client, "bench/duo")
    assert check(pair) == "raised"  # behind again: a new alert
    assert [a["id"] for a in owed_alerts(pair)] == [alert["id"] + 1, alert["id"]]


def test_the_owed_alert_rises_when_the_oldest_waits_too_long(pair, client):
    pair.admin(lambda bench: bench.gateway_settings.set_gateway(owed_after=0, owed_days=7))
    made = time.time()
    ask(client, "bench/solo")
    assert check(pair) is None
    assert check(pair, made + 7 * DAY - 60) is None
    panel_at = httpx2.get(f"{pair.url}/bench/panels").json()["data"][0]["created"]
    assert check(pair, panel_at + 7 * DAY + 1) == "raised"
    since = time.strftime("%Y-%m-%d", time.gmtime(panel_at))
    assert owed_alerts(pair)[0]["message"].startswith(
        f"The oldest has waited since {since} (more than 7 days). Verdicts are the evidence"
    )
    assert check(pair, panel_at + 30 * DAY) is None


def test_the_watch_checks_the_owed_verdicts_on_its_first_round(pair, client):
    pair.admin(lambda bench: bench.gateway_settings.set_gateway(owed_after=1))
    ask(client, "bench/solo")

    async def one_round(bench) -> None:
        await Watch(bench.state).run_once()

    pair.admin(one_round)
    assert [a["message"][:36] for a in owed_alerts(pair)] == ["2 seats await a verdict (1 or more)."]


# -- endpoint remove -------------------------------------------------------------------------------


def test_endpoint_remove_is_refused_while_collections_seat_its_models(pair, cli, client):
    collection(pair, "duo", [LLAMA, QWEN], merger=f"fake/{QWEN}")
    [member, _explorer] = ask(client, "bench/solo").bench["seats"]
    verdict(pair, member["call"], False, ["a wrong claim"])
    refusal = (
        f"endpoint fake has models that collections still seat: bench/duo (fake/{LLAMA}, fake/{QWEN}, fake/{QWEN} as "
        f"merger); bench/solo (fake/{LLAMA}). Edit those collections first, or remove it anyway with --force "
        "(API: ?force=true); their seats then show as not on the roster"
    )
    assert cli("endpoint", "remove", "fake") == (1, f"error: {refusal}\n")
    response = httpx2.delete(f"{pair.url}/api/endpoints/fake")
    assert (response.status_code, response.json()["error"]) == (
        409,
        {"message": refusal, "type": "invalid_request_error", "param": "name", "code": "endpoint_in_use"},
    )
    assert len(pair.admin(lambda bench: bench.models.list_models())) == 2

    assert cli("endpoint", "remove", "fake", "--force") == (0, "removed endpoint fake\n")
    assert pair.admin(lambda bench: bench.models.list_models()) == []
    # Off the roster, its ledger stays while its seats are in the log.
    assert [c["claim"] for c in orjson.loads(cli("model", "wrong", f"fake/{LLAMA}", "--json")[1])] == ["a wrong claim"]

    async def logged(bench):
        async with bench.state.read() as conn:
            return await list_changes(conn, subject="endpoint")

    removal = next(c for c in pair.admin(logged) if c["action"] == "delete")
    assert removal["after"] == {
        "forced": [f"bench/duo (fake/{LLAMA}, fake/{QWEN}, fake/{QWEN} as merger)", f"bench/solo (fake/{LLAMA})"]
    }


def test_an_endpoint_no_collection_seats_is_removed_at_once_and_the_api_takes_force(pair, fake_upstream):
    pair.admin(lambda bench: bench.endpoints.add_endpoint("spare", fake_upstream.base_url, "openrouter"))
    assert httpx2.delete(f"{pair.url}/api/endpoints/spare").json() == {"name": "spare", "deleted": True}
    forced = httpx2.delete(f"{pair.url}/api/endpoints/fake", params={"force": "true"})
    assert forced.json() == {"name": "fake", "deleted": True}
    # The collection still names the model: the refusal says so.
    body = {"model": "bench/solo", "messages": [{"role": "user", "content": "hi"}]}
    refused = httpx2.post(f"{pair.v1}/chat/completions", json=body)
    assert (refused.status_code, refused.json()["error"]["code"]) == (400, "empty_panel")
    assert f"fake/{LLAMA}: not on the roster any more" in refused.json()["error"]["message"]
