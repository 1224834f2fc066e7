"""Alerts end to end: went paid (one alert per transition, out of the explorer pool until
acknowledged), retiring (gone or deprecated: explorers skip it, members still call it), failing
(N failed seats in a row retire the model, once per streak: tests/bench/evidence/test_retiring.py), and the
`benchwarmers alerts` command."""

from __future__ import annotations

from typing import Any

import orjson
from typer.testing import CliRunner

from benchwarmers.bench.admin import alerts as bench_alerts
from benchwarmers.cli.app import app
from benchwarmers.store.changes import list_changes
from tests.support.alerts import explorers, open_alerts
from tests.support.benchserver import BenchServer, add_fake_endpoint, listed
from tests.support.gateway_fixtures import LLAMA, QWEN
from tests.support.panels import ask, collection


def serve(fake: Any, *entries: dict[str, Any]) -> None:
    fake.listing("/v1/models", {"object": "list", "data": list(entries)})


def refresh(server: BenchServer) -> dict[str, Any]:
    return server.admin(lambda bench: bench.endpoints.refresh_endpoint("fake"))


def status(server: BenchServer, alias: str) -> str:
    return server.admin(lambda bench: bench.models.model(alias))["status"]


def test_went_paid_raises_one_alert_and_keeps_it_out_of_explorers_until_acknowledged(pair, fake_upstream, client):
    assert explorers(client) == [f"fake/{QWEN}"]

    serve(fake_upstream, listed(LLAMA), listed(QWEN, free=False))
    assert refresh(pair)["went_paid"] == 1
    paid = (
        "went_paid",
        f"fake/{QWEN}",
        f"fake/{QWEN} was free and now has a price; it leaves the explorer pool until you acknowledge this alert",
    )
    assert open_alerts(pair) == [paid]
    assert refresh(pair)["went_paid"] == 0  # the next refresh sees no new transition
    assert open_alerts(pair) == [paid]
    assert status(pair, f"fake/{QWEN}") == "went paid"
    assert explorers(client) == []

    # Free again, but the alert is still open: it stays out until the user has seen it.
    serve(fake_upstream, listed(LLAMA), listed(QWEN))
    assert refresh(pair)["went_paid"] == 0
    assert explorers(client) == []

    alert_id = pair.admin(lambda bench: bench_alerts.list_alerts(bench.state))[0]["id"]
    acknowledged = pair.admin(lambda bench: bench_alerts.acknowledge(bench.state, alert_id))
    assert acknowledged["acknowledged_at"] is not None
    assert open_alerts(pair) == []
    assert explorers(client) == [f"fake/{QWEN}"]  # the running server reloaded its snapshot

    async def logged(bench):
        async with bench.state.read() as conn:
            return await list_changes(conn, subject="alert")

    (change,) = pair.admin(logged)
    assert (change["actor"], change["name"], change["action"]) == ("test", f"fake/{QWEN}", "acknowledge")
    assert change["after"]["kind"] == "went_paid"


def test_a_free_tier_endpoint_never_goes_paid(server, fake_upstream):
    add_fake_endpoint(server, fake_upstream, models=[listed(QWEN)], free_tier=True)
    serve(fake_upstream, listed(QWEN, free=False))
    assert refresh(server)["went_paid"] == 0
    assert open_alerts(server) == []


def test_a_vanished_model_is_retiring_explorers_skip_it_and_members_still_call_it(pair, fake_upstream, client):
    collection(pair, "q", [QWEN], max_explorers=0)
    serve(fake_upstream, listed(LLAMA))
    assert refresh(pair) == {"listed": 1, "added": 0, "gone": 1, "went_paid": 0, "retiring": 1, "possibly_changed": 0}
    assert open_alerts(pair) == [
        (
            "retiring",
            f"fake/{QWEN}",
            f"fake/{QWEN} is gone from fake's listing; explorers skip it, and collections that name it still call it",
        )
    ]
    assert refresh(pair)["retiring"] == 0
    assert len(open_alerts(pair)) == 1
    assert status(pair, f"fake/{QWEN}") == "gone"
    assert explorers(client) == []
    (seat,) = ask(client, "bench/q").bench["seats"]
    assert (seat["seat"], seat["alias"], seat["status"]) == ("member", f"fake/{QWEN}", "ok")


def test_a_newly_deprecated_model_is_retiring(pair, fake_upstream, client):
    deprecated = {**listed(QWEN), "expiration_date": "2026-12-31"}
    serve(fake_upstream, listed(LLAMA), deprecated)
    assert refresh(pair)["retiring"] == 1
    assert open_alerts(pair) == [
        (
            "retiring",
            f"fake/{QWEN}",
            f"fake/{QWEN} is deprecated (2026-12-31); explorers skip it, and collections that name it still call it",
        )
    ]
    assert refresh(pair)["retiring"] == 0
    assert status(pair, f"fake/{QWEN}") == "retiring"
    assert explorers(client) == []


def test_a_model_failing_five_seats_in_a_row_raises_one_alert_per_streak(pair, fake_upstream, client):
    fake_upstream.script(QWEN, status=500)
    collection(pair, "q", [QWEN], max_explorers=0)
    for _ in range(4):
        ask(client, "bench/q")
    assert open_alerts(pair) == []
    ask(client, "bench/q")
    (alert,) = open_alerts(pair)
    assert alert[:2] == ("failing", f"fake/{QWEN}")
    assert alert[2].startswith(f"fake/{QWEN} failed its last 5 seats in a row and is retired: ")
    assert alert[2].endswith("; last error: upstream error (500): The server had an error while processing your "
                             "request. Sorry about that!")  # fmt: skip
    fake_upstream.script(QWEN)
    assert ask(client, "bench/q").bench["seats"][0]["status"] == "retired"  # not asked, however it would answer
    assert len(open_alerts(pair)) == 1

    # Acknowledging says "seen": the model stays retired until a probe or the user brings it back.
    alert_id = pair.admin(lambda bench: bench_alerts.list_alerts(bench.state))[0]["id"]
    pair.admin(lambda bench: bench_alerts.acknowledge(bench.state, alert_id))
    assert ask(client, "bench/q").bench["seats"][0]["status"] == "retired"
    pair.admin(lambda bench: bench.models.restore(f"fake/{QWEN}"))
    assert ask(client, "bench/q").bench["seats"][0]["status"] == "ok"
    fake_upstream.script(QWEN, status=500)
    for _ in range(4):
        ask(client, "bench/q")
    assert open_alerts(pair) == []  # a new streak counts from zero
    ask(client, "bench/q")
    assert [a[:2] for a in open_alerts(pair)] == [("failing", f"fake/{QWEN}")]


def test_the_alerts_command_lists_and_acknowledges(pair, fake_upstream, monkeypatch):
    serve(fake_upstream, listed(LLAMA), listed(QWEN, free=False))
    refresh(pair)
    monkeypatch.setenv("BENCHWARMERS_HOME", str(pair.settings.home))
    monkeypatch.setenv("COLUMNS", "250")
    runner = CliRunner()

    listed_json = orjson.loads(runner.invoke(app, ["alerts", "--json"]).output)
    assert [(a["id"], a["kind"], a["label"], a["subject"], a["acknowledged_at"]) for a in listed_json] == [
        (1, "went_paid", "went paid", f"fake/{QWEN}", None)
    ]
    table = runner.invoke(app, ["alerts"])
    assert table.exit_code == 0
    assert "went paid" in table.output and f"fake/{QWEN}" in table.output and "open" in table.output

    acked = runner.invoke(app, ["alerts", "--ack", "1"])
    assert (acked.exit_code, acked.output) == (
        0,
        f"acknowledged alert 1 (went paid: fake/{QWEN})\n"
        f"fake/{QWEN} may sit explorer seats again while it is free (`benchwarmers model set fake/{QWEN} --free` "
        "if you accept its price)\n",
    )
    assert runner.invoke(app, ["alerts"]).output == "no open alerts\n"
    assert len(orjson.loads(runner.invoke(app, ["alerts", "--all", "--json"]).output)) == 1
    missing = runner.invoke(app, ["alerts", "--ack", "7"])
    assert (missing.exit_code, missing.output) == (1, "error: no alert 7. There are no open alerts.\n")
