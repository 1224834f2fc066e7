"""Retiring and recovering: after `failing_after` failed seats in a row a model leaves the explorer
pool (a failing alert says so), a retired member is shown as `retired` without being asked, a probe
on a backoff brings it back when it answers, and `benchwarmers model restore` brings it back now."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import httpx2
import orjson
import pytest
from typer.testing import CliRunner

from benchwarmers.bench.admin import alerts as bench_alerts
from benchwarmers.bench.evidence.retirement import FIRST_PROBE, MAX_PROBE_GAP, probe_delay
from benchwarmers.bench.services import Bench
from benchwarmers.bench.upkeep.probe import PROBE_PROMPT, Probed, probe_due
from benchwarmers.bench.upkeep.watch import Watch
from benchwarmers.cli.app import app
from benchwarmers.store.changes import list_changes
from tests.support.alerts import explorers, open_alerts
from tests.support.benchserver import BenchServer
from tests.support.gateway_fixtures import LLAMA, QWEN
from tests.support.panels import ask, collection

ALIAS = f"fake/{QWEN}"


def model(server: BenchServer, alias: str = ALIAS) -> dict[str, Any]:
    return server.admin(lambda bench: bench.models.model(alias))


def model_changes(server: BenchServer, alias: str = ALIAS) -> list[tuple[str, str, Any]]:
    """(actor, action, after) of the model's changes, oldest first."""

    async def read(bench):
        async with bench.state.read() as conn:
            return await list_changes(conn, subject="model")

    return [(c["actor"], c["action"], c["after"]) for c in reversed(server.admin(read)) if c["name"] == alias]


def qwen_calls(fake: Any) -> int:
    return sum(1 for r in fake.chat_requests if r.json["model"] == QWEN)


def fail_three_times(server: BenchServer, fake: Any, client: Any) -> None:
    """QWEN fails as the `solo` panel's explorer until it is retired (failing_after 3)."""
    server.admin(lambda bench: bench.gateway_settings.set_gateway(failing_after=3))
    fake.script(QWEN, status=500)
    for _ in range(3):
        assert explorers(client) == [ALIAS]


def probe(server: BenchServer, at: float) -> list[Probed]:
    return server.admin(lambda bench: probe_due(bench.state, at))


def test_the_probe_backs_off_from_ten_minutes_to_a_day():
    assert [probe_delay(n) for n in range(9)] == [600, 1200, 2400, 4800, 9600, 19_200, 38_400, 76_800, MAX_PROBE_GAP]
    assert probe_delay(50) == MAX_PROBE_GAP


LLAMA_CPP_SCHEMA_500 = orjson.dumps(
    {
        "error": {
            "message": "1 validation error:\n  {'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), "
            "'msg': \"Input should be 'text' or 'json_object'\", 'input': 'json_schema'}",
            "type": "internal_server_error",
            "param": None,
            "code": None,
        }
    }
)
MISTRAL_422 = orjson.dumps(
    {
        "object": "error",
        "message": {"detail": [{"type": "extra_forbidden", "loc": ["body", "safe_mode"], "msg": "Extra inputs"}]},
        "type": "invalid_request_error",
        "param": None,
        "code": None,
    }
)


@pytest.mark.parametrize(("status", "body"), [(500, LLAMA_CPP_SCHEMA_500), (422, MISTRAL_422)], ids=["500", "422"])
def test_refusals_the_request_caused_never_retire_the_model(pair, fake_upstream, client, status, body):
    pair.admin(lambda bench: bench.gateway_settings.set_gateway(failing_after=3))
    collection(pair, "q", [QWEN], max_explorers=0)
    fake_upstream.script(QWEN, status=status, body=body)
    for _ in range(6):
        assert ask(client, "bench/q").bench["seats"][0]["status"] == "error"
    assert (model(pair)["status"], open_alerts(pair)) == ("ok", [])
    # Nor do they end a streak the model's own failures started: three of those still retire it.
    fake_upstream.script(QWEN, status=500)
    ask(client, "bench/q")
    fake_upstream.script(QWEN, status=status, body=body)
    ask(client, "bench/q")
    fake_upstream.script(QWEN, status=500)
    ask(client, "bench/q")
    assert model(pair)["status"] == "ok"
    ask(client, "bench/q")
    assert model(pair)["status"] == "retired"


def test_a_failing_model_leaves_the_explorer_pool_after_n_failures_and_returns_after_the_probe_succeeds(
    pair, fake_upstream, client
):
    fail_three_times(pair, fake_upstream, client)
    retired = model(pair)
    assert retired["status"] == "retired"
    assert retired["next_probe_at"] == pytest.approx(retired["retired_at"] + FIRST_PROBE)
    [alert] = open_alerts(pair)
    assert alert == (
        "failing",
        ALIAS,
        f"{ALIAS} failed its last 3 seats in a row and is retired: explorers skip it and collections show it as "
        "retired without asking it, until a probe (every 10 minutes at first, then less often) gets an answer or "
        f"you run `benchwarmers model restore {ALIAS}`; last error: upstream error (500): The server had an "
        "error while processing your request. Sorry about that!",
    )
    calls_before = qwen_calls(fake_upstream)
    assert explorers(client) == []  # out of the pool: no other free model of another family is left
    assert qwen_calls(fake_upstream) == calls_before

    # Not due yet: nothing is called.
    assert probe(pair, retired["next_probe_at"] - 1) == []
    # Due, still failing: twice as long to the next one, logged.
    first = retired["next_probe_at"]
    assert probe(pair, first) == [
        Probed(
            ALIAS,
            answered=False,
            error="upstream error (500): The server had an error while processing your request. Sorry about that!",
            next_probe_at=first + 1200,
        )
    ]
    probe_request = fake_upstream.chat_requests[-1]
    assert probe_request.json == {
        "model": QWEN,
        "messages": [{"role": "user", "content": PROBE_PROMPT}],
        "max_tokens": 1,
        "stream": False,
    }
    assert (model(pair)["status"], model(pair)["next_probe_at"]) == ("retired", first + 1200)
    assert explorers(client) == []

    # It answers: back in the pool, the alert resolved, the change logged.
    fake_upstream.script(QWEN)
    assert probe(pair, first + 1200) == [Probed(ALIAS, answered=True)]
    back = model(pair)
    assert (back["status"], back["retired_at"], back["next_probe_at"]) == ("ok", None, None)
    assert open_alerts(pair) == []
    [resolved] = pair.admin(lambda bench: bench_alerts.list_alerts(bench.state, include_acknowledged=True))
    assert (resolved["kind"], resolved["acknowledged_at"], resolved["resolved_at"]) == ("failing", None, first + 1200)
    assert [(actor, action) for actor, action, _ in model_changes(pair)] == [
        ("bench", "retire"),
        ("probe", "probe"),
        ("probe", "restore"),
    ]
    assert model_changes(pair)[-1][2] == {"by": "probe", "resolved_alerts": [resolved["id"]]}
    assert explorers(client) == [ALIAS]
    assert probe(pair, first + 10 * MAX_PROBE_GAP) == []  # nothing retired, nothing probed


def test_a_retired_member_is_shown_as_retired_not_asked_and_restored_by_the_user(
    pair, fake_upstream, client, monkeypatch
):
    collection(pair, "q", [QWEN], max_explorers=0)
    pair.admin(lambda bench: bench.gateway_settings.set_gateway(failing_after=3))
    fake_upstream.script(QWEN, status=500)
    for _ in range(3):
        assert [s["status"] for s in ask(client, "bench/q").bench["seats"]] == ["error"]
    calls_before = qwen_calls(fake_upstream)
    fake_upstream.script(QWEN)  # it would answer now, but a retired member is not asked

    reply = ask(client, "bench/q")
    retired = model(pair)
    note = (
        "retired: not asked, it failed its last 3 seats in a row; next probe "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime(retired['next_probe_at']))}; "
        f"`benchwarmers model restore {ALIAS}` brings it back now"
    )
    panel = reply.bench["panel"]
    assert reply.bench["seats"] == [
        {"call": f"{panel}.member1", "seat": "member", "alias": ALIAS, "status": "retired", "seconds": 0.0,
         "answer": "", "tool_calls": [], "error": note, "frees_at": None, "truncated_at": None, "truncated": None}
    ]  # fmt: skip
    assert (
        f"## member · {ALIAS} · retired · 0.0s\ncall `{panel}.member1`\n\n_{note}_\n"
        in reply.choices[0].message.content
    )
    assert '{"call":"<call id>"' in reply.bench["verdict"]  # the hint never names a seat that was not asked
    assert qwen_calls(fake_upstream) == calls_before

    # Recorded, owed nothing, and not a seat to judge.
    logged = httpx2.get(f"{pair.url}/bench/panels/{panel}").json()
    assert ([(s["status"], s["error"]) for s in logged["seats"]], logged["owed"]) == ([("retired", note)], 0)
    refused = httpx2.post(f"{pair.url}/bench/verdict", json={"call": f"{panel}.member1", "useful": False})
    assert (refused.status_code, refused.json()["error"]["code"]) == (400, "seat_not_called")
    assert refused.json()["error"]["message"] == (
        f"call '{panel}.member1' was not called: {ALIAS} was retired for failing, so there is no answer to judge"
    )

    monkeypatch.setenv("BENCHWARMERS_HOME", str(pair.settings.home))
    monkeypatch.setenv("COLUMNS", "250")
    runner = CliRunner()
    listed = {m["alias"]: m for m in orjson.loads(runner.invoke(app, ["model", "list", "--json"]).output)}
    assert listed[ALIAS]["status"] == "retired"
    restored = runner.invoke(app, ["model", "restore", ALIAS])
    assert (restored.exit_code, restored.output) == (
        0,
        f"{ALIAS} restored: members ask it again and it may sit explorer seats\n",
    )
    again = runner.invoke(app, ["model", "restore", ALIAS])
    assert (again.exit_code, again.output) == (0, f"{ALIAS} is not retired (ok); nothing changed\n")
    assert open_alerts(pair) == []
    assert [(actor, action, after) for actor, action, after in model_changes(pair)][-1][:2] == ("cli", "restore")

    [seat] = ask(client, "bench/q").bench["seats"]
    assert (seat["status"], seat["answer"]) == ("ok", f"answer from {QWEN}")


def test_restore_on_the_api_and_a_model_not_on_the_roster(pair, fake_upstream, client):
    fail_three_times(pair, fake_upstream, client)
    response = httpx2.post(f"{pair.url}/api/models/{ALIAS}/restore")
    assert (response.status_code, response.json()["status"]) == (200, "ok")
    assert open_alerts(pair) == []
    missing = httpx2.post(f"{pair.url}/api/models/fake/qwen3-23b/restore")
    assert (missing.status_code, missing.json()["error"]["message"]) == (
        404,
        f"no model 'fake/qwen3-23b' on the roster. Did you mean {ALIAS}, fake/{LLAMA}?",
    )


async def until(condition: Any, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "the watch did not get there"
        await asyncio.sleep(0.01)


def test_the_watch_probes_each_minute_on_the_backoff(pair, fake_upstream, client):
    fail_three_times(pair, fake_upstream, client)
    retired_at = model(pair)["retired_at"]
    probed_at: list[int] = []  # minutes after retirement

    async def drive(bench) -> None:
        minute = 0
        watch = Watch(bench.state, clock=lambda: retired_at + 60 * minute)
        while (await bench.models.model(ALIAS))["status"] == "retired":
            minute += 1
            calls = qwen_calls(fake_upstream)
            await watch.run_once()
            if qwen_calls(fake_upstream) > calls:
                probed_at.append(minute)
                fake_upstream.script(QWEN)  # the first probe fails; the second gets an answer
            assert minute < 60

    pair.admin(drive)
    assert probed_at == [10, 30]
    assert explorers(client) == [ALIAS]


async def test_the_watch_runs_a_round_a_minute_until_stopped_and_the_server_runs_one(server):
    naps: list[float] = []
    resume = asyncio.Event()

    async def sleep(seconds: float) -> None:
        naps.append(seconds)
        if len(naps) == 3:
            await resume.wait()
        await asyncio.sleep(0)

    assert not server._server.config.app.state.watch._task.done()  # the server's own, on the real clock
    async with Bench(server.settings, actor="test") as bench:
        watch = Watch(bench.state, sleep=sleep).start()
        await until(lambda: len(naps) == 3)
        await watch.stop()
    assert (naps, watch.rounds, watch.failures) == ([60, 60, 60], 3, 0)


def test_a_retired_merger_is_passed_over(pair, fake_upstream, client):
    collection(pair, "m", [LLAMA, QWEN], reply="merged", merger=ALIAS, max_explorers=0)
    pair.admin(lambda bench: bench.gateway_settings.set_gateway(failing_after=1))
    fake_upstream.script(QWEN, status=500)
    ask(client, "bench/m")  # its seat fails and retires it
    fake_upstream.script(QWEN)
    reply = ask(client, "bench/m").bench
    assert [s["status"] for s in reply["seats"]] == ["ok", "retired"]
    assert (reply["merger"]["alias"], reply["merger"]["chosen_as"]) == (f"fake/{LLAMA}", "the first member that fits")
