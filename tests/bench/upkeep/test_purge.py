"""Retention: `benchwarmers purge` and the server's daily run forget old prompts and answers, from
the database file and not only from queries, and leave the leaderboard as it was."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import httpx2
import pytest
from openai import OpenAI
from sqlalchemy import select
from typer.testing import CliRunner

from benchwarmers.bench.evidence.board import leaderboard
from benchwarmers.bench.services import Bench
from benchwarmers.cli.app import app as cli
from benchwarmers.errors import InvalidRequest
from benchwarmers.store import calls
from benchwarmers.store.changes import list_changes
from benchwarmers.store.schema import alerts, models, panels, seats, verdicts
from tests.support.benchserver import BenchServer, add_fake_endpoint, listed
from tests.support.panels import ask, collection

OLD_PROMPT = "CANARY-old-prompt-4b1d"
OLD_ANSWER = "CANARY-old-answer-9c2e"
OLD_ERROR = "CANARY-old-error-77aa"
OLD_CLAIM = "CANARY-old-claim-e5f0"
NEW_PROMPT = "CANARY-new-prompt-31c8"
DAY = 86_400.0


def judged_panel(server: BenchServer, client: OpenAI, prompt: str, useful: bool, claim: str = OLD_CLAIM) -> str:
    reply = ask(client, "bench/pair", prompt)
    for seat in reply.bench["seats"]:
        if seat["status"] == "ok":
            body = {"call": seat["call"], "useful": useful, "note": f"{claim} note", "real": [claim, "b"]}
            response = httpx2.post(f"{server.url}/bench/verdict", json={**body, "false": [claim]})
            assert response.status_code == 200
    return str(reply.bench["panel"])


def backdate(server: BenchServer, panel_ids: list[str], seconds: float) -> None:
    async def write(bench: Bench) -> None:
        async with bench.state.write() as conn:
            older = {"created_at": panels.c.created_at - seconds}
            await conn.execute(panels.update().where(panels.c.id.in_(panel_ids)).values(older))
            older = {"created_at": seats.c.created_at - seconds}
            await conn.execute(seats.update().where(seats.c.panel_id.in_(panel_ids)).values(older))
            await conn.execute(alerts.update().values(created_at=alerts.c.created_at - seconds))

    server.admin(write)


@pytest.fixture
def aged(bench_with_roster: BenchServer, fake, client) -> tuple[BenchServer, list[str], str]:
    """Three judged panels from three days ago (one seat answers, one fails: a "failing" alert quotes
    its error), and one from now."""
    bench_with_roster.admin(lambda bench: bench.gateway_settings.set_gateway(failing_after=3))
    fake.script("llama-3.3-70b", reply=f"{OLD_ANSWER}: the loop is off by one")
    # A 500: the model's own failure (a 400 is the request's doing and retires nobody).
    fake.script("qwen3-32b", status=500, body={"error": {"message": f"cannot parse {OLD_ERROR}", "type": "x"}})
    collection(bench_with_roster, "pair", ["llama-3.3-70b", "qwen3-32b"], max_explorers=0)
    old = [judged_panel(bench_with_roster, client, f"{OLD_PROMPT} #{n}", useful=n != 1) for n in range(3)]
    backdate(bench_with_roster, old, 3 * DAY)
    fake.script("llama-3.3-70b", reply="a recent answer")
    fake.script("qwen3-32b", reply="recovered")  # retired after three failures: not asked, its last error the old one
    new = judged_panel(bench_with_roster, client, NEW_PROMPT, useful=True, claim="a recent claim")
    return bench_with_roster, old, new


def database_bytes(server: BenchServer) -> bytes:
    home = server.settings.home
    return b"".join(p.read_bytes() for p in (home / "bench.db", home / "bench.db-wal") if p.exists())


def boards(server: BenchServer) -> list[dict[str, Any]]:
    """The leaderboard computed afresh by a Bench of its own (the server's may be cached)."""

    async def compute(bench: Bench) -> list[dict[str, Any]]:
        return [board.public() for board in await leaderboard(bench.state)]

    return server.admin(compute)


def rows(server: BenchServer, panel_id: str) -> dict[str, Any]:
    async def read(bench: Bench) -> dict[str, Any]:
        async with bench.state.read() as conn:
            panel = (await conn.execute(select(panels).where(panels.c.id == panel_id))).one()._asdict()
            seat_rows = await conn.execute(select(seats).where(seats.c.panel_id == panel_id).order_by(seats.c.position))
            judged = select(verdicts).join(seats, seats.c.call == verdicts.c.call).where(seats.c.panel_id == panel_id)
            return {
                "panel": panel,
                "seats": [r._asdict() for r in seat_rows],
                "verdicts": [r._asdict() for r in await conn.execute(judged.order_by(verdicts.c.id))],
            }

    return server.admin(read)


def purge(server: BenchServer, *args: str, stdin: str | None = None) -> Any:
    return CliRunner().invoke(cli, ["purge", *args], input=stdin, env={"BENCHWARMERS_HOME": str(server.settings.home)})


def test_purge_removes_old_prompts_and_answers_from_the_database_file_and_keeps_the_leaderboard(aged, monkeypatch):
    server, old, new = aged
    monkeypatch.setattr(calls, "PURGE_BATCH", 2)  # three old panels: two transactions
    stored = database_bytes(server)
    for canary in (OLD_PROMPT, OLD_ANSWER, OLD_ERROR, OLD_CLAIM, NEW_PROMPT):
        assert canary.encode() in stored  # so that their absence below means something
    board_before = httpx2.get(f"{server.url}/api/leaderboard").json()
    fresh_before = boards(server)
    before = rows(server, old[0])

    result = purge(server, "--days", "1", "--yes")

    assert result.exit_code == 0, result.output
    lines = [line.split() for line in result.output.splitlines()]
    assert ["│", "panels", "│", "3", "│"] in lines
    assert ["│", "seats", "│", "6", "│"] in lines
    assert ["│", "verdicts", "│", "3", "│"] in lines
    stored = database_bytes(server)
    for canary in (OLD_PROMPT, OLD_ANSWER, OLD_ERROR, OLD_CLAIM):
        assert canary.encode() not in stored
    assert NEW_PROMPT.encode() in stored
    assert httpx2.get(f"{server.url}/api/leaderboard").json() == board_before
    assert boards(server) == fresh_before

    after = rows(server, old[0])
    purged_at = after["panel"]["request"]["purged_at"]
    assert after["panel"] == {
        **before["panel"],
        "request": {"purged_at": purged_at},
        "request_hash": "",
        "idempotency_key": None,
        "note": None,
        "response": None,
    }
    assert after["seats"] == [{**seat, "answer": "", "error": ""} for seat in before["seats"]]
    assert [s["error_kind"] for s in after["seats"]] == [None, "upstream_error"]
    assert after["verdicts"] == [
        {**v, "note": "", "real": ["[purged]", "[purged]"], "false": ["[purged]"]} for v in before["verdicts"]
    ]
    assert rows(server, new)["panel"]["request"]["messages"] == [{"role": "user", "content": NEW_PROMPT}]

    async def error_texts(bench: Bench) -> list[Any]:
        async with bench.state.read() as conn:
            kept = await conn.execute(
                select(models.c.alias, models.c.last_error).where(models.c.last_error.is_not(None))
            )
            quoted = await conn.execute(select(alerts.c.kind, alerts.c.subject, alerts.c.message))
            return [*kept.all(), *quoted.all()]

    retired = (
        "fake/qwen3-32b failed its last 3 seats in a row and is retired: explorers skip it and collections show it "
        "as retired without asking it, until a probe (every 10 minutes at first, then less often) gets an answer or "
        "you run `benchwarmers model restore fake/qwen3-32b`; last error: [purged]"
    )
    assert server.admin(error_texts) == [("failing", "fake/qwen3-32b", retired)]

    async def newest_change(bench: Bench) -> dict[str, Any]:
        async with bench.state.read() as conn:
            return (await list_changes(conn, limit=1))[0]

    change = server.admin(newest_change)
    assert (change["actor"], change["subject"], change["name"], change["action"]) == ("cli", "data", "calls", "purge")
    assert {k: change["after"][k] for k in ("panels", "seats", "verdicts")} == {"panels": 3, "seats": 6, "verdicts": 3}

    again = purge(server, "--days", "1", "--yes")
    assert again.exit_code == 0
    assert again.output.startswith("nothing to purge: no panel from before ")


def test_purge_asks_first(aged):
    server, old, _new = aged
    refused = purge(server, "--before", time.strftime("%Y-%m-%d"), stdin="n\n")
    assert refused.exit_code == 1
    assert refused.stderr.startswith("Purge the prompts and answers of 3 panels from before ")
    # The prompt's last space goes to stdout (click's readline workaround), the answer is not echoed here.
    assert refused.stderr.endswith("(6 seats, 3 verdicts)? [y/N]:error: nothing purged (answer y, or pass --yes)\n")
    assert rows(server, old[0])["panel"]["request_hash"] != ""
    accepted = purge(server, "--before", time.strftime("%Y-%m-%d"), stdin="y\n")
    assert accepted.exit_code == 0
    assert rows(server, old[0])["panel"]["request_hash"] == ""


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "say which panels to purge: --before YYYY-MM-DD or --days N (one of them)"),
        (
            ["--days", "3", "--before", "2026-01-01"],
            "say which panels to purge: --before YYYY-MM-DD or --days N (one of them)",
        ),
        (["--days", "0"], "--days must be 1 or more (the panels older than that many days are purged)"),
        (
            ["--before", "last week"],
            "--before 'last week' is not a date such as 2026-01-31 (or a time, 2026-01-31T18:00)",
        ),
    ],
)
def test_purge_says_what_it_needs(server, args, message):
    result = purge(server, *args, "--yes")
    assert (result.exit_code, result.stderr) == (1, f"error: {message}\n")


def test_the_server_applies_retention_days_when_it_starts(aged, tmp_path):
    server, old, new = aged
    server.admin(lambda bench: bench.gateway_settings.set_gateway(retention_days=2))
    server.stop()
    restarted = BenchServer(server.settings.home)
    restarted.settings = server.settings
    restarted.start()
    try:
        deadline = time.monotonic() + 20
        while rows(restarted, old[0])["panel"]["request_hash"] != "":
            assert time.monotonic() < deadline, "the retention run did not purge the old panels"
            time.sleep(0.05)
        assert all(rows(restarted, panel)["panel"]["request_hash"] == "" for panel in old)
        assert rows(restarted, new)["panel"]["request_hash"] != ""
        stored = database_bytes(restarted)
        assert OLD_PROMPT.encode() not in stored
        assert NEW_PROMPT.encode() in stored
    finally:
        restarted.stop()


def test_retention_days_is_a_whole_number_of_days(server):
    for value, message in [
        (-1, "retention_days must be a whole number from 0 to 36500 (got -1)"),
        (1.5, "retention_days must be a whole number from 0 to 36500 (got 1.5)"),
    ]:
        with pytest.raises(InvalidRequest) as refused:
            server.admin(lambda bench, v=value: bench.gateway_settings.set_gateway(retention_days=v))
        assert refused.value.message == message
    result = CliRunner().invoke(
        cli, ["gateway", "set", "--retention-days", "30"], env={"BENCHWARMERS_HOME": str(server.settings.home)}
    )
    assert result.exit_code == 0
    assert "retention_days 30" in result.output
    assert server.admin(lambda bench: bench.state.snapshot()).gateway.retention_days == 30


def test_purge_on_postgresql(pg_cluster, tmp_path: Path, fake):
    server = BenchServer(tmp_path / "home", database_url=pg_cluster.new_database()).start()
    try:
        add_fake_endpoint(server, fake, models=[listed("llama-3.3-70b"), listed("qwen3-32b")])
        fake.script("llama-3.3-70b", reply=OLD_ANSWER)
        collection(server, "pair", ["llama-3.3-70b", "qwen3-32b"], max_explorers=0)
        client = OpenAI(base_url=server.v1, api_key="local", max_retries=0, timeout=30)
        old = judged_panel(server, client, OLD_PROMPT, useful=True)
        backdate(server, [old], 3 * DAY)
        board_before = boards(server)

        async def purge_old(bench: Bench) -> tuple[dict[str, int], bool]:
            counts = await calls.purge_before(bench.state.write, time.time() - DAY, time.time())
            assert bench.state.engine is not None
            return counts, await calls.reclaim_space(bench.state.engine)

        assert server.admin(purge_old) == ({"panels": 1, "seats": 2, "verdicts": 2}, True)
        after = rows(server, old)
        assert [(s["answer"], s["error"]) for s in after["seats"]] == [("", ""), ("", "")]
        assert after["panel"]["request_hash"] == ""
        assert boards(server) == board_before
    finally:
        server.stop()
