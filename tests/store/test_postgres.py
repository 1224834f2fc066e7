"""The same code on PostgreSQL: migrations, a panel, a verdict, the call log (a throwaway cluster)."""

from __future__ import annotations

import time
from collections.abc import Iterator

import httpx2
import pytest

from tests.support.benchserver import BenchServer, add_fake_endpoint, listed


@pytest.fixture
def pg_server(pg_cluster, tmp_path, fake) -> Iterator[BenchServer]:
    url = pg_cluster.new_database()
    server = BenchServer(tmp_path / "home", database_url=url).start()
    try:
        yield server
    finally:
        server.stop()
        pg_cluster.drop(url)


def test_a_panel_and_its_verdict_on_postgres(pg_server, fake):
    add_fake_endpoint(pg_server, fake, models=[listed("llama-3.3-70b"), listed("qwen3-32b"), listed("phi-4")])
    pg_server.admin(lambda b: b.collections.add_collection({"name": "pair", "members": ["fake/llama-3.3-70b"]}))
    reply = httpx2.post(
        f"{pg_server.v1}/chat/completions",
        timeout=30,
        json={"model": "bench/pair", "messages": [{"role": "user", "content": "hi"}]},
    ).json()
    seats = reply["bench"]["seats"]
    assert [s["seat"] for s in seats] == ["member", "explorer", "explorer"]
    assert all(s["status"] == "ok" for s in seats)
    verdict = httpx2.post(f"{pg_server.url}/bench/verdict", json={"call": seats[0]["call"], "useful": True})
    assert verdict.json() == {"call": seats[0]["call"], "recorded": True, "replaced": False}
    panels = httpx2.get(f"{pg_server.url}/bench/panels?owed=1").json()["data"]
    assert [(p["id"], p["owed"]) for p in panels] == [(reply["bench"]["panel"], 2)]
    assert httpx2.get(f"{pg_server.url}/readyz").json() == {"status": "ready", "database": "ok"}
    # A second server process on the same database sees the first one's collection (config version).
    pg_server.admin(lambda b: b.collections.edit_collection("pair", {"max_explorers": 0}))
    deadline = time.monotonic() + 3
    while time.monotonic() < deadline:
        models = httpx2.get(f"{pg_server.v1}/models").json()["data"]
        if models[0]["explorers"] == 0:
            break
        time.sleep(0.2)
    assert models[0]["explorers"] == 0


def test_renames_on_postgres(pg_server, fake):
    add_fake_endpoint(pg_server, fake, models=[listed("llama-3.3-70b"), listed("qwen3-32b")])
    members = {"name": "pair", "members": ["fake/llama-3.3-70b", "fake/qwen3-32b"], "max_explorers": 0}
    pg_server.admin(lambda b: b.collections.add_collection({**members, "merger": "fake/qwen3-32b"}))
    reply = httpx2.post(
        f"{pg_server.v1}/chat/completions",
        timeout=30,
        json={"model": "bench/pair", "messages": [{"role": "user", "content": "hi"}]},
    ).json()
    httpx2.post(f"{pg_server.url}/bench/verdict", json={"call": reply["bench"]["seats"][1]["call"], "useful": True})
    moved = pg_server.admin(lambda b: b.models.rename("fake/qwen3-32b", "qwen"))
    assert (moved["collections"], moved["seats"]) == (["pair"], 1)
    renamed = pg_server.admin(lambda b: b.endpoints.rename_endpoint("fake", "local"))
    assert (renamed["aliases"], renamed["seats"], renamed["endpoint_seats"]) == (
        {"fake/llama-3.3-70b": "local/llama-3.3-70b"},
        1,
        2,
    )
    pair = pg_server.admin(lambda b: b.collections.collection("pair"))
    assert (pair["members"], pair["merger"]) == (["local/llama-3.3-70b", "qwen"], "qwen")
    [board] = httpx2.get(f"{pg_server.url}/api/leaderboard").json()["shapes"]
    assert [(m["alias"], m["seats"], m["verdicts"]) for m in board["models"]] == [
        ("qwen", 1, 1),
        ("local/llama-3.3-70b", 1, 0),
    ]


def test_retiring_the_wrong_ledger_and_the_owed_alert_on_postgres(pg_server, fake):
    from benchwarmers.bench.admin.alerts import list_alerts
    from benchwarmers.bench.upkeep.owed import check_owed
    from benchwarmers.bench.upkeep.probe import probe_due

    add_fake_endpoint(pg_server, fake, models=[listed("llama-3.3-70b"), listed("qwen3-32b")])
    pg_server.admin(lambda b: b.gateway_settings.set_gateway(failing_after=1, owed_after=1))
    members = {"members": ["fake/llama-3.3-70b", "fake/qwen3-32b"], "max_explorers": 0}
    pg_server.admin(lambda b: b.collections.add_collection({"name": "pair", **members}))
    fake.script("qwen3-32b", status=500)
    body = {"model": "bench/pair", "messages": [{"role": "user", "content": "hi"}]}
    seats = httpx2.post(f"{pg_server.v1}/chat/completions", timeout=30, json=body).json()["bench"]["seats"]
    judged = {"call": seats[0]["call"], "useful": False, "false": ["a wrong claim"]}
    assert httpx2.post(f"{pg_server.url}/bench/verdict", json=judged).status_code == 200
    wrong = httpx2.get(f"{pg_server.url}/api/models/fake/llama-3.3-70b/wrong").json()["data"]
    assert [(c["claim"], c["call"]) for c in wrong] == [("a wrong claim", seats[0]["call"])]

    again = httpx2.post(f"{pg_server.v1}/chat/completions", timeout=30, json=body).json()["bench"]["seats"]
    assert [s["status"] for s in again] == ["ok", "retired"]
    assert pg_server.admin(lambda b: check_owed(b.state)) == "raised"  # one owed: the second panel's llama
    fake.script("qwen3-32b")
    probed = pg_server.admin(lambda b: probe_due(b.state, time.time() + 601))
    assert [(p.alias, p.answered) for p in probed] == [("fake/qwen3-32b", True)]
    alerts = pg_server.admin(lambda b: list_alerts(b.state, include_acknowledged=True))
    assert [(a["kind"], a["resolved_at"] is not None) for a in alerts] == [("owed", False), ("failing", True)]
