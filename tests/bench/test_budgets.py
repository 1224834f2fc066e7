"""Daily budgets per gateway key, per collection and for the suite: refused with 429 before any model
is called, Retry-After at the reset, counted from the store (several servers share one count), reset
at the day's reset hour (clock injected), set from the CLI and the API, shown in /api and /metrics."""

from __future__ import annotations

import math
import re
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import httpx2
import pytest
from sqlalchemy import func, select
from typer.testing import CliRunner

from benchwarmers.bench.budget_rules import day_start, next_reset
from benchwarmers.bench.budgets import Budgets
from benchwarmers.bench.caller import Caller
from benchwarmers.bench.services import Bench
from benchwarmers.cli.app import app
from benchwarmers.errors import BudgetExhausted
from benchwarmers.settings import Settings
from benchwarmers.store import calls
from benchwarmers.store.schema import panels
from tests.support.benchserver import BenchServer, add_fake_endpoint, listed
from tests.support.panels import collection


class Clock:
    """The wall clock the budgets reckon days by, held still (or moved) by the test."""

    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def server(tmp_path: Path, fake) -> Iterator[BenchServer]:
    server = BenchServer(tmp_path / "home", require_keys=True).start()
    try:
        add_fake_endpoint(server, fake, models=[listed("phi-4"), listed("qwen3-32b")])
        collection(server, "solo", ["phi-4"], max_explorers=0)
        yield server
    finally:
        server.stop()


def _ask(server: BenchServer, key: str, text: str, model: str = "bench/solo") -> httpx2.Response:
    body = {"model": model, "messages": [{"role": "user", "content": text}]}
    return httpx2.post(f"{server.v1}/chat/completions", json=body, headers={"authorization": f"Bearer {key}"})


def _hold_clock(server: BenchServer) -> Clock:
    clock = Clock(time.time())
    server.bench.state.budgets.clock = clock
    return clock


def _refusal(message: str) -> dict[str, object]:
    return {"error": {"message": message, "type": "rate_limit_error", "param": None, "code": "budget_exhausted"}}


def _reset_text(now: float) -> tuple[str, int]:
    resets = next_reset(now)
    return datetime.fromtimestamp(resets, UTC).strftime("%Y-%m-%d %H:%M UTC"), math.ceil(resets - now)


def _panels_by(server: BenchServer, caller: str) -> int:
    async def count(bench: Bench) -> int:
        async with bench.state.read() as conn:
            query = select(func.count()).select_from(panels).where(panels.c.caller == caller)
            return int((await conn.execute(query)).scalar_one())

    return server.admin(count)


def test_a_key_with_ten_panels_a_day_gets_its_eleventh_refused_before_any_call(server, fake):
    clock = _hold_clock(server)
    key, made = server.admin(lambda bench: bench.keys.create("ci", daily_panels=10))
    assert made["daily_panels"] == 10 and made["daily_tokens"] is None
    assert [_ask(server, key, f"q{i}").status_code for i in range(10)] == [200] * 10
    calls = len(fake.chat_requests)
    refused = _ask(server, key, "q11")
    at, wait = _reset_text(clock.now)
    assert refused.status_code == 429
    assert refused.json() == _refusal(
        f"the daily budget of gateway key 'ci' is spent: 10 of its 10 panels today. It resets at {at} "
        f"(in {wait} s). No model was called: retry after the reset, or raise the budget with "
        "`benchwarmers key edit ci --daily-panels N`."
    )
    assert refused.headers["retry-after"] == str(wait)
    assert refused.headers["x-should-retry"] == "false"
    assert len(fake.chat_requests) == calls  # refused before any upstream call
    # A refusal spends nothing: the store holds the ten panels, no eleventh reservation.
    assert _ask(server, key, "q12").status_code == 429
    assert _panels_by(server, "ci") == 10
    # Another key, on the same collection, has its own (absent) budget.
    other, _ = server.admin(lambda bench: bench.keys.create("other"))
    assert _ask(server, other, "hi").status_code == 200


@pytest.mark.sqlite_only
def test_the_day_resets_at_the_reset_hour(server, fake):
    clock = _hold_clock(server)
    key, _ = server.admin(lambda bench: bench.keys.create("daily", daily_panels=2))
    assert [_ask(server, key, f"q{i}").status_code for i in range(3)] == [200, 200, 429]
    calls = len(fake.chat_requests)
    # One second before the reset: still spent, and Retry-After says one second.
    clock.now = next_reset(clock.now) - 1
    early = _ask(server, key, "early")
    assert (early.status_code, early.headers["retry-after"]) == (429, "1")
    # A day later (the stored panels a day older, the clock back at now): a new day's budget.
    server.admin(_age_panels)
    clock.now = time.time()
    assert [_ask(server, key, f"new{i}").status_code for i in range(3)] == [200, 200, 429]
    assert len(fake.chat_requests) == calls + 2


async def _age_panels(bench: Bench) -> None:
    async with bench.state.write() as conn:
        await conn.execute(panels.update().values(created_at=panels.c.created_at - 86_400))


async def test_a_budget_counts_from_its_reset_with_the_clock_injected(tmp_path):
    """The store's panels before the reset hour are yesterday's; at the reset the tally starts again."""
    reset = datetime(2026, 12, 2, 6, tzinfo=UTC).timestamp()
    async with Bench(Settings(home=tmp_path / "home")) as bench:
        await bench.gateway_settings.set_gateway(budget_reset_hour=6)
        clock = Clock(reset - 60)
        budgets = Budgets(bench.state, clock)
        caller = Caller(name="app", daily_panels=2)
        spot = {"name": "solo"}
        async with bench.state.write() as conn:
            for i, at in enumerate((reset - 86_400 - 1, reset - 3_600, reset - 120)):  # one of the day before
                await calls.reserve_panels(conn, [_panel_row(f"p{i}", at, "app")])
        with pytest.raises(BudgetExhausted) as refused:
            await budgets.admit(spot, caller)
        assert refused.value.headers["Retry-After"] == "60"
        assert "2 of its 2 panels today. It resets at 2026-12-02 06:00 UTC (in 60 s)." in refused.value.message
        clock.now = reset  # the panels before it are the day before's: two more today, then refused
        for i in (3, 4):
            charged = await budgets.admit(spot, caller)
            async with bench.state.write() as conn:
                await calls.reserve_panels(conn, [_panel_row(f"p{i}", reset + i, "app")])
            budgets.reserved(charged)
        with pytest.raises(BudgetExhausted):
            await budgets.admit(spot, caller)


def _panel_row(panel_id: str, at: float, caller: str) -> dict[str, object]:
    return {
        "id": panel_id,
        "created_at": at,
        "collection": "solo",
        "reply": "all",
        "shape": "",
        "shape_by": "",
        "caller": caller,
        "request": {},
        "request_hash": panel_id,
        "skipped": [],
    }


@pytest.mark.sqlite_only
def test_the_reset_hour_setting_moves_the_day():
    at = datetime(2026, 12, 2, 5, 30, tzinfo=UTC).timestamp()
    assert day_start(at) == datetime(2026, 12, 2, tzinfo=UTC).timestamp()
    assert day_start(at, 6) == datetime(2026, 12, 1, 6, tzinfo=UTC).timestamp()
    assert next_reset(at, 6) == datetime(2026, 12, 2, 6, tzinfo=UTC).timestamp()
    assert next_reset(at, 5) == datetime(2026, 12, 3, 5, tzinfo=UTC).timestamp()


@pytest.mark.sqlite_only
def test_a_collection_budget_set_from_the_cli_refuses_every_caller(server, fake, monkeypatch):
    clock = _hold_clock(server)
    monkeypatch.setenv("BENCHWARMERS_HOME", str(server.settings.home))
    result = CliRunner().invoke(app, ["collection", "edit", "solo", "--daily-panels", "3", "--daily-tokens", "200000"])
    assert (result.exit_code, result.output) == (0, "updated bench/solo\n")
    first, _ = server.admin(lambda bench: bench.keys.create("first"))
    second, _ = server.admin(lambda bench: bench.keys.create("second"))
    assert [_ask(server, k, f"q{i}").status_code for i, k in enumerate((first, second, first))] == [200] * 3
    calls = len(fake.chat_requests)
    refused = _ask(server, second, "fourth")
    at, wait = _reset_text(clock.now)
    assert refused.status_code == 429
    assert refused.json() == _refusal(
        f"the daily budget of collection bench/solo is spent: 3 of its 3 panels today. It resets at {at} "
        f"(in {wait} s). No model was called: retry after the reset, or raise the budget with "
        "`benchwarmers collection edit solo --daily-panels N`."
    )
    assert refused.headers["retry-after"] == str(wait)
    assert len(fake.chat_requests) == calls
    # 0 removes the budget.
    result = CliRunner().invoke(app, ["collection", "edit", "solo", "--daily-panels", "0"])
    assert result.exit_code == 0
    solo = server.admin(lambda bench: bench.collections.collection("solo"))
    assert (solo["daily_panels"], solo["daily_tokens"]) == (None, 200_000)
    assert _ask(server, second, "fifth").status_code == 200


def test_a_token_budget_refuses_once_the_seats_reported_it_spent(server, fake):
    _hold_clock(server)
    fake.script("phi-4", usage={"prompt_tokens": 700, "completion_tokens": 400, "total_tokens": 1100})
    key, _ = server.admin(lambda bench: bench.keys.create("tokens", daily_tokens=2000))
    assert [_ask(server, key, f"q{i}").status_code for i in range(3)] == [200, 200, 429]
    message = _ask(server, key, "q4").json()["error"]["message"]
    assert message.startswith("the daily budget of gateway key 'tokens' is spent: 2,200 of its 2,000 tokens today.")
    assert message.endswith("`benchwarmers key edit tokens --daily-tokens N`.")


@pytest.mark.sqlite_only
def test_key_budgets_through_the_api_and_shown_on_settings_and_in_metrics(server, fake):
    clock = _hold_clock(server)
    admin = server.admin_headers()
    made = httpx2.post(f"{server.url}/api/keys", json={"name": "app", "daily_panels": 5}, headers=admin)
    assert made.status_code == 201
    key = made.json()["key"]
    edited = httpx2.patch(f"{server.url}/api/keys/app", json={"daily_tokens": 100_000}, headers=admin)
    assert edited.status_code == 200
    assert (edited.json()["daily_panels"], edited.json()["daily_tokens"]) == (5, 100_000)
    wrong = httpx2.patch(f"{server.url}/api/keys/app", json={"daily_panels": -1}, headers=admin)
    assert (wrong.status_code, wrong.json()["error"]["param"]) == (400, "daily_panels")
    assert [_ask(server, key, f"q{i}").status_code for i in range(2)] == [200, 200]
    listing = httpx2.get(f"{server.url}/api/budgets", headers=admin).json()["data"]
    [row] = listing
    spent_tokens = row["tokens"]
    assert spent_tokens > 0  # the fake's usage, as its seats reported it
    assert row == {
        "kind": "key",
        "name": "app",
        "daily_panels": 5,
        "daily_tokens": 100_000,
        "panels": 2,
        "tokens": spent_tokens,
        "resets_at": next_reset(clock.now),
    }
    session = httpx2.post(f"{server.url}/login", data={"token": server.dashboard_token(), "next": "/settings"})
    page = httpx2.get(f"{server.url}/settings", cookies={"bw_session": session.cookies["bw_session"]}).text
    row = re.search(r'<tr data-budget="key:app">(.*?)</tr>', page, re.S)
    assert row is not None
    cells = [re.sub(r"<[^>]+>", "", c).strip() for c in re.findall(r"<td[^>]*>(.*?)</td>", row.group(1), re.S)]
    assert cells[:3] == ["key app", "2 / 5", f"{spent_tokens:,} / 100,000"]
    metrics = httpx2.get(f"{server.url}/metrics", headers=admin).text
    assert 'benchwarmers_budget_limit{kind="key",name="app",unit="panels"} 5.0' in metrics
    assert 'benchwarmers_budget_spent{kind="key",name="app",unit="panels"} 2.0' in metrics
    assert f'benchwarmers_budget_spent{{kind="key",name="app",unit="tokens"}} {float(spent_tokens)}' in metrics


@pytest.mark.sqlite_only
def test_two_servers_on_one_database_share_one_budget(tmp_path, fake):
    first = BenchServer(tmp_path / "shared", require_keys=True).start()
    second = BenchServer(tmp_path / "shared", require_keys=True).start()
    try:
        add_fake_endpoint(first, fake, models=[listed("phi-4")])
        collection(first, "solo", ["phi-4"], max_explorers=0)
        key, _ = first.admin(lambda bench: bench.keys.create("shared", daily_panels=3))
        codes = [_ask(server, key, f"q{i}").status_code for i, server in enumerate((first, second) * 3)]
        # Each server re-counts from the store near the end: three panels in all, not three each.
        assert codes == [200, 200, 200, 429, 429, 429]
        assert _panels_by(first, "shared") == 3
    finally:
        first.stop()
        second.stop()


@pytest.mark.sqlite_only
def test_budgets_refuse_wrong_values(server):
    async def wrong(bench: Bench) -> str:
        try:
            await bench.keys.create("bad", daily_panels=True)  # type: ignore[arg-type]
        except Exception as exc:
            return str(exc)
        return ""

    assert server.admin(wrong) == (
        "daily_panels must be a whole number from 1 to 1,000,000,000 a day, or 0 (or null) for no budget"
    )


@pytest.mark.sqlite_only
def test_key_budgets_from_the_cli(server, monkeypatch):
    monkeypatch.setenv("BENCHWARMERS_HOME", str(server.settings.home))
    runner = CliRunner()
    made = runner.invoke(app, ["key", "create", "ci", "--daily-panels", "10"])
    assert made.exit_code == 0
    assert made.stderr == (
        "key 'ci' made (all collections, 10 panels a day). It is shown only this once: send it as "
        "Authorization: Bearer <key>.\n"
    )
    edited = runner.invoke(app, ["key", "edit", "ci", "--daily-panels", "20", "--daily-tokens", "5000"])
    assert (edited.exit_code, edited.stdout) == (0, "key 'ci': no rate limit, 20 panels a day, 5,000 tokens a day\n")
    cleared = runner.invoke(app, ["key", "edit", "ci", "--daily-panels", "0", "--rpm", "30"])
    assert (cleared.exit_code, cleared.stdout) == (0, "key 'ci': 30 requests a minute, 5,000 tokens a day\n")
    wrong = runner.invoke(app, ["key", "edit", "ci", "--daily-tokens", "-5"])
    assert (wrong.exit_code, wrong.stderr) == (
        1,
        "error: daily_tokens must be a whole number from 1 to 1,000,000,000 a day, or 0 (or null) for no budget\n",
    )
    missing = runner.invoke(app, ["key", "edit", "cj", "--daily-panels", "1"])
    assert (missing.exit_code, missing.stderr) == (1, "error: no gateway key named 'cj'. Did you mean ci?\n")
