"""Verdicts, the call log and the export: every seat and verdict is in the database after the reply."""

from __future__ import annotations

import httpx2
import orjson
from typer.testing import CliRunner

from benchwarmers.bench.services import Bench
from benchwarmers.cli.app import app
from benchwarmers.store import calls
from tests.support.panels import ask, collection


def verdict(server, body):
    return httpx2.post(f"{server.url}/bench/verdict", json=body)


def history(server, call):
    async def read(bench: Bench):
        async with bench.state.read() as conn:
            return await calls.verdict_history(conn, call)

    return server.admin(read)


def test_seats_are_recorded_before_the_reply(bench_with_roster, client):
    collection(bench_with_roster, "pair", ["llama-3.3-70b", "qwen3-32b"])
    reply = ask(client, "bench/pair", "what is 2+2?").bench

    async def read(bench: Bench):
        async with bench.state.read() as conn:
            return await calls.list_panels(conn, panel_id=reply["panel"])

    [panel] = bench_with_roster.admin(read)
    assert panel["collection"] == "pair"
    assert panel["caller"] == "local"
    assert panel["shape"] == "general"
    assert panel["request"]["messages"] == [{"role": "user", "content": "what is 2+2?"}]
    assert [(s["call"], s["status"], s["answer"]) for s in panel["seats"]] == [
        (s["call"], s["status"], s["answer"]) for s in reply["seats"]
    ]
    assert panel["owed"] == 4
    assert all(s["endpoint"] == "fake" and s["usage"]["total_tokens"] > 0 for s in panel["seats"])


def test_verdicts_are_idempotent_and_replacements_keep_history(bench_with_roster, client):
    collection(bench_with_roster, "pair", ["llama-3.3-70b", "qwen3-32b"], max_explorers=0)
    seats = ask(client, "bench/pair").bench["seats"]
    call = seats[0]["call"]
    body = {"call": call, "useful": True, "note": "found the bug", "real": ["off by one"], "false": []}
    first = verdict(bench_with_roster, body)
    assert first.status_code == 200
    assert first.json() == {"call": call, "recorded": True, "replaced": False}
    assert verdict(bench_with_roster, body).json() == {"call": call, "recorded": False, "replaced": False}
    assert len(history(bench_with_roster, call)) == 1
    changed = verdict(bench_with_roster, {**body, "useful": False, "false": ["invented API"]})
    assert changed.json() == {"call": call, "recorded": True, "replaced": True}
    rows = history(bench_with_roster, call)
    assert [(r["useful"], r["current"], r["false"]) for r in rows] == [
        (True, False, []),
        (False, True, ["invented API"]),
    ]
    panels = httpx2.get(f"{bench_with_roster.url}/bench/panels").json()["data"]
    assert panels[0]["seats"][0]["verdict"]["useful"] is False
    assert panels[0]["owed"] == 1
    owed = httpx2.get(f"{bench_with_roster.url}/bench/panels?owed=1").json()["data"]
    assert [p["id"] for p in owed] == [panels[0]["id"]]
    verdict(bench_with_roster, {"call": seats[1]["call"], "useful": True})
    assert httpx2.get(f"{bench_with_roster.url}/bench/panels?owed=1").json()["data"] == []
    one = httpx2.get(f"{bench_with_roster.url}/bench/panels/{panels[0]['id']}")
    assert one.status_code == 200
    assert one.json()["owed"] == 0


def test_verdict_refusals(bench_with_roster):
    unknown = verdict(bench_with_roster, {"call": "p20260101-000000-0000.member1", "useful": True})
    assert unknown.status_code == 404
    assert unknown.json() == {
        "error": {
            "message": "no call 'p20260101-000000-0000.member1': use a call id from a panel's bench.seats",
            "type": "invalid_request_error",
            "param": "call",
            "code": "call_not_found",
        }
    }
    malformed = verdict(bench_with_roster, {"call": "x", "useful": "yes"})
    assert malformed.status_code == 400
    assert malformed.json()["error"]["message"] == "useful must be true or false"
    claims = verdict(bench_with_roster, {"call": "x", "useful": True, "real": "one"})
    assert claims.json()["error"]["message"] == "real must be a list of strings"
    missing_panel = httpx2.get(f"{bench_with_roster.url}/bench/panels/p-none")
    assert missing_panel.status_code == 404


def test_a_failed_seat_takes_no_verdict_and_an_empty_one_is_not_owed(bench_with_roster, client, fake):
    fake.script("phi-4", status=500)
    fake.script("gemma-3-27b", empty=True)
    collection(bench_with_roster, "three", ["llama-3.3-70b", "phi-4", "gemma-3-27b"], max_explorers=0)
    seats = {s["alias"]: s for s in ask(client, "bench/three").bench["seats"]}
    assert [s["status"] for s in seats.values()] == ["ok", "error", "empty"]
    failed = seats["fake/phi-4"]["call"]
    refused = verdict(bench_with_roster, {"call": failed, "useful": False})
    assert refused.status_code == 400
    assert refused.json() == {
        "error": {
            "message": f"call {failed!r} has status 'error': fake/phi-4 failed (upstream_error), so there is no "
            "answer to judge; failed seats need no verdict",
            "type": "invalid_request_error",
            "param": "call",
            "code": "seat_failed",
        }
    }
    assert history(bench_with_roster, failed) == []
    # The empty answer is not owed, but it may still be judged (not useful).
    [panel] = httpx2.get(f"{bench_with_roster.url}/bench/panels").json()["data"]
    assert panel["owed"] == 1
    empty = verdict(bench_with_roster, {"call": seats["fake/gemma-3-27b"]["call"], "useful": False})
    assert empty.json()["recorded"] is True
    verdict(bench_with_roster, {"call": seats["fake/llama-3.3-70b"]["call"], "useful": True})
    assert httpx2.get(f"{bench_with_roster.url}/bench/panels?owed=1").json()["data"] == []


def test_cli_verdict_and_export(bench_with_roster, client, monkeypatch):
    collection(bench_with_roster, "pair", ["llama-3.3-70b", "qwen3-32b"], max_explorers=0)
    seats = ask(client, "bench/pair", "export me").bench["seats"]
    monkeypatch.setenv("BENCHWARMERS_HOME", str(bench_with_roster.settings.home))
    runner = CliRunner()
    result = runner.invoke(app, ["verdict", seats[0]["call"], "--useful", "--note", "good", "--real", "a claim"])
    assert result.exit_code == 0, result.output
    assert result.output == f"{seats[0]['call']}: verdict recorded (useful)\n"
    again = runner.invoke(app, ["verdict", seats[0]["call"], "--useful", "--note", "good", "--real", "a claim"])
    assert again.output == f"{seats[0]['call']}: the same verdict is already recorded; nothing written\n"
    none = runner.invoke(app, ["verdict", "nope.member1", "--useful"])
    assert none.exit_code == 1
    assert "error: no call 'nope.member1'" in none.output

    exported = runner.invoke(app, ["export", "calls"])
    assert exported.exit_code == 0
    lines = [orjson.loads(line) for line in exported.output.splitlines()]
    assert [line["call"] for line in lines] == [s["call"] for s in seats]
    assert lines[0]["answer"] == "answer from llama-3.3-70b"
    assert lines[0]["request"]["messages"][0]["content"] == "export me"
    verdicts = runner.invoke(app, ["export", "verdicts"])
    [line] = [orjson.loads(x) for x in verdicts.output.splitlines()]
    assert (line["call"], line["useful"], line["note"], line["real"], line["alias"], line["source"]) == (
        seats[0]["call"],
        True,
        "good",
        ["a claim"],
        "fake/llama-3.3-70b",
        "human",
    )
