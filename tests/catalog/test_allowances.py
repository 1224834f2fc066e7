"""Daily allowances as providers count them, end to end: a fake provider that allows 50 requests a
day from 00:00 UTC (and answers 429 beyond, as real free tiers do) says so only in its free-tier
entry (a free-tier file of the user's, BENCHWARMERS_FREE_TIERS_FILE), not in headers; the bench
spends exactly the day's 50 calls over a simulated day (the pacer's and the fake's clocks
injected), lists the rest as `paced` until the reset, and `check` shows what is left.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx2
import pytest
from typer.testing import CliRunner

from benchwarmers.bench.pacing import Pacer, Refusal, Scope, Slot
from benchwarmers.bench.panels.learning import merged_limits
from benchwarmers.catalog.pace import (
    DAY,
    MONTH,
    Limit,
    check_windows,
    known_limits,
    parse_window,
    updated_windows,
    windows_of,
)
from benchwarmers.cli.app import app
from benchwarmers.upstream.ratelimits import daily_reset
from tests.fakes.upstream import FakeUpstream
from tests.support.benchserver import BenchServer, add_fake_endpoint, listed
from tests.support.free_tiers import host_of, user_file
from tests.support.panels import collection

# The model's limits as its free-tier entry gives them, in the vocabulary catalog/pace.py reads.
DAILY_50 = {"requests-day": 50, "resets-day": "00:00"}


class Clock:
    """A wall clock the test moves: the bench's pacer and the fake provider read it."""

    def __init__(self, at: datetime) -> None:
        self.at = at

    def __call__(self) -> float:
        return self.at.timestamp()


def panel(server: BenchServer, i: int) -> dict[str, Any]:
    body = {"model": "bench/daily", "messages": [{"role": "user", "content": f"panel {i}"}], "max_tokens": 20}
    response = httpx2.post(f"{server.v1}/chat/completions", json=body, timeout=60)
    assert response.status_code == 200, response.text
    [seat] = response.json()["bench"]["seats"]
    return seat


def iso(moment: float) -> str:
    return datetime.fromtimestamp(moment, UTC).isoformat()


def test_fifty_requests_a_day_from_midnight_utc_are_spent_exactly_and_the_rest_wait_for_the_reset(
    tmp_path: Path, fake_upstream: FakeUpstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The simulated day is today (UTC), so `check`, a separate process on the real clock, counts the
    # same day's seats from the call log.
    today = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    tomorrow = today + timedelta(days=1)
    clock = Clock(today)
    fake_upstream.script("daily", latency=0.0)
    fake_upstream.limit(model="daily", requests=50, resets=0)  # no headers: the fact alone says it
    fake_upstream.clock = clock
    home = tmp_path / "home"
    tiers = user_file(tmp_path / "tiers.json", host_of(fake_upstream))  # its free-tier entry: 50 a day from 00:00
    monkeypatch.setenv("BENCHWARMERS_FREE_TIERS_FILE", str(tiers))
    server = BenchServer(home, free_tiers_file=tiers).start()
    try:
        add_fake_endpoint(server, fake_upstream, models=[listed("daily")])
        collection(server, "daily", ["daily"], max_explorers=0)
        shown = httpx2.get(f"{server.url}/api/models/fake/daily").json()
        assert (shown["limits"], shown["facts"]["rate_limits"]["source"]) == (DAILY_50, "free_tier")  # before a call
        assert fake_upstream.chat_requests == []
        server.bench.state.pacer.clock = clock

        seats = []
        for i in range(60):  # one panel every 23 minutes, 00:10 to 22:47 UTC
            clock.at = today + timedelta(minutes=10 + 23 * i)
            seats.append(panel(server, i))
        assert [s["status"] for s in seats] == ["ok"] * 50 + ["paced"] * 10
        assert {iso(s["frees_at"]) for s in seats[50:]} == {tomorrow.isoformat()}
        assert seats[50]["error"].startswith("paced: model fake/daily's 50 requests a day are used up; frees up in ")
        assert len(fake_upstream.chat_requests) == 50
        assert fake_upstream.refused == 0

        # What is left today, where the user looks: /metrics and the Models page (this server's count)...
        metrics = httpx2.get(f"{server.url}/metrics").text
        assert 'benchwarmers_allowance_remaining{scope="model fake/daily",window="requests-day"} 0.0' in metrics
        page = httpx2.get(f"{server.url}/models").text
        assert 'data-allowance="requests-day"' in page and "requests-day: 0 of 50 left, resets at 00:00 UTC" in page

        # ...and `model show` and `check` (each its own bench, counting today's seats from the store).
        monkeypatch.setenv("BENCHWARMERS_HOME", str(home))
        monkeypatch.setenv("COLUMNS", "250")
        shown_cli = CliRunner().invoke(app, ["model", "show", "fake/daily"])
        left = f"requests-day: 0 of 50 left, resets at 00:00 UTC ({tomorrow.isoformat()})"
        assert f"allowance (model fake/daily): {left}" in shown_cli.output, shown_cli.output
        result = CliRunner().invoke(app, ["check", "fake/daily"])
        assert (
            f"allowance of fake/daily: requests-day: 0 of 50 left, resets at 00:00 UTC ({tomorrow.isoformat()})"
            in result.output
        ), result.output
        assert "paced" in result.output
        assert len(fake_upstream.chat_requests) == 50  # the check's own call was paced too

        # At the reset the day starts over, for the bench and the provider alike.
        clock.at = tomorrow
        assert panel(server, 60)["status"] == "ok"
        assert (len(fake_upstream.chat_requests), fake_upstream.refused) == (51, 0)
    finally:
        server.stop()


def test_the_vocabulary_of_allowances_and_their_resets() -> None:
    assert parse_window("requests-month") == ("requests", MONTH)
    assert parse_window("tokens-month") == ("tokens", MONTH)
    # The provider's reset, then the user's: the last layer naming a reset wins, for every window of its period.
    announced = {"requests-day": 1000, "tokens-day": 500_000, "resets-day": "07:00"}
    override = {"requests-day": 50, "resets-day": "00:00", "requests-month": 900, "resets-month": "1"}
    assert known_limits(announced, override) == (
        Limit("requests", DAY, 50, 0),
        Limit("requests", MONTH, 900, 1),
        Limit("tokens", DAY, 500_000, 0),
    )
    assert known_limits({"requests-day": 14400}) == (Limit("requests", DAY, 14400),)  # unknown: a moving day
    assert known_limits({"requests-day": 10, "resets-day": "25:00"}) == (Limit("requests", DAY, 10),)
    assert Limit("requests", DAY, 50, 0).reset_text() == "resets at 00:00 UTC"
    assert Limit("requests", DAY, 50, 6 * 3600 + 1800).reset_text() == "resets at 06:30 UTC"
    assert Limit("tokens", MONTH, 10, 15).reset_text() == "resets on day 15 at 00:00 UTC"
    assert Limit("requests", DAY, 50).reset_text() == "a moving 24 hours"
    assert Limit("requests", MONTH, 50).reset_text() == "a moving 30 days"
    assert Limit("requests", MONTH, 1000).describe() == "1,000 requests a month"
    assert windows_of(known_limits(override)) == override | {"requests-day": 50}


def test_resets_the_user_gives_are_checked_and_an_empty_one_removes_it() -> None:
    assert check_windows({"requests-day": 50, "resets-day": "00:00", "resets-month": 1}) == {
        "requests-day": 50,
        "resets-day": "00:00",
        "resets-month": "1",
    }
    with pytest.raises(ValueError, match=r"resets-day must be a UTC time of day as HH:MM \(00:00\)"):
        check_windows({"resets-day": "midnight"})
    with pytest.raises(ValueError, match="resets-month must be a day of the month, 1 to 31"):
        check_windows({"resets-month": "32"})
    stored = updated_windows(None, check_windows({"requests-day": 50, "resets-day": "00:00"}))
    assert stored == {"requests-day": 50, "resets-day": "00:00"}
    assert updated_windows(stored, check_windows({"resets-day": ""})) == {"requests-day": 50}


def at(text: str) -> float:
    return datetime.fromisoformat(text).timestamp()


def test_fixed_windows_run_from_the_last_reset_to_the_next() -> None:
    daily = Limit("requests", DAY, 50, 6 * 3600 + 1800)  # 06:30 UTC
    assert daily.bounds(at("2026-12-02T10:00:00+00:00")) == (
        at("2026-12-02T06:30:00+00:00"),
        at("2026-12-03T06:30:00+00:00"),
    )
    assert daily.bounds(at("2026-12-02T06:29:59+00:00")) == (
        at("2026-12-01T06:30:00+00:00"),
        at("2026-12-02T06:30:00+00:00"),
    )
    # The 31st of a month that has none is its last day; before the reset, the window began last month.
    monthly = Limit("requests", MONTH, 1000, 31)
    assert monthly.bounds(at("2026-02-15T00:00:00+00:00")) == (
        at("2026-01-31T00:00:00+00:00"),
        at("2026-02-28T00:00:00+00:00"),
    )
    assert monthly.bounds(at("2026-12-31T00:00:00+00:00")) == (
        at("2026-12-31T00:00:00+00:00"),
        at("2027-01-31T00:00:00+00:00"),
    )
    assert Limit("requests", DAY, 50).bounds(0.0) is None  # a moving window has none


async def test_a_fixed_day_refuses_until_its_reset_and_counts_a_call_made_just_before_it_in_the_next() -> None:
    clock = Clock(datetime.fromisoformat("2026-12-02T23:00:00+00:00"))
    pacer = Pacer(clock=clock)
    scope = Scope("model", "fake/d", (Limit("requests", DAY, 2, 0),))
    assert isinstance(await pacer.take([scope], 0), Slot)
    clock.at = datetime.fromisoformat("2026-12-02T23:59:59.500+00:00")  # within the guard: it may land tomorrow
    assert isinstance(await pacer.take([scope], 0), Slot)
    refused = await pacer.take([scope], 0)
    assert refused == Refusal("model fake/d's 2 requests a day are used up", at("2026-12-03T00:00:00+00:00"))
    clock.at = datetime.fromisoformat("2026-12-03T00:00:00+00:00")
    assert isinstance(await pacer.take([scope], 0), Slot)  # tomorrow: the one from just before counts
    assert isinstance(await pacer.take([scope], 0), Refusal)
    [left] = await pacer.allowances([scope])
    assert left.describe() == "requests-day: 0 of 2 left, resets at 00:00 UTC (2026-12-04T00:00:00+00:00)"


async def test_a_pacer_starts_a_fixed_window_from_what_the_store_says_was_spent_since_its_reset() -> None:
    asked: list[tuple[str, str, float]] = []

    async def seed(scope: Scope, limit: Limit, since: float) -> int:
        asked.append((scope.name, limit.window, since))
        return 120 if limit.kind == "tokens" else 48

    clock = Clock(datetime.fromisoformat("2026-12-02T15:00:00+00:00"))
    pacer = Pacer(clock=clock, seed=seed)
    scope = Scope("model", "fake/d", (Limit("requests", DAY, 50, 0), Limit("tokens", DAY, 1000, 0)))
    assert [a.used for a in await pacer.allowances([scope])] == [48, 120]
    assert isinstance(await pacer.take([scope], 100), Slot)
    assert isinstance(await pacer.take([scope], 100), Slot)
    assert isinstance(await pacer.take([scope], 100), Refusal)  # 48 + 2 requests: the day's 50
    midnight = at("2026-12-02T00:00:00+00:00")
    assert asked == [("fake/d", "requests-day", midnight), ("fake/d", "tokens-day", midnight)]  # once each


def test_a_restarted_server_counts_todays_calls_from_the_log(
    tmp_path: Path, fake_upstream: FakeUpstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_upstream.script("daily", latency=0.0)
    home = tmp_path / "home"
    monkeypatch.setenv("BENCHWARMERS_HOME", str(home))
    first = BenchServer(home).start()
    try:
        add_fake_endpoint(first, fake_upstream, models=[listed("daily")])
        collection(first, "daily", ["daily"], max_explorers=0)
        wrong = CliRunner().invoke(app, ["model", "set", "fake/daily", "--limit", "resets-day=midnight"])
        assert (wrong.exit_code, wrong.output) == (
            1,
            "error: resets-day must be a UTC time of day as HH:MM (00:00), or empty to remove it (got 'midnight')\n",
        )
        given = CliRunner().invoke(app, ["model", "set", "fake/daily", "--rpd", "50", "--limit", "resets-day=00:00"])
        assert given.exit_code == 0 and "paced by: requests-day 50, resets-day 00:00" in given.output, given.output
        assert [panel(first, i)["status"] for i in range(3)] == ["ok"] * 3
    finally:
        first.stop()
    second = BenchServer(home).start()
    try:
        metrics = httpx2.get(f"{second.url}/metrics").text
        assert 'benchwarmers_allowance_remaining{scope="model fake/daily",window="requests-day"} 47.0' in metrics
    finally:
        second.stop()


def test_a_daily_reset_is_learned_from_a_reset_header_that_names_a_whole_hour() -> None:
    now = at("2026-12-02T14:49:48.617+00:00")
    # Cerebras: `requests-day` resets in seconds, here at 00:00 UTC tomorrow.
    cerebras = {
        "x-ratelimit-limit-requests-day": "14400",
        "x-ratelimit-remaining-requests-day": "14399",
        "x-ratelimit-reset-requests-day": "33011.383",
    }
    assert daily_reset(cerebras, now) == "00:00"
    assert merged_limits({}, cerebras, now) == {"requests-day": 14400, "resets-day": "00:00"}
    # A reset that is not on the hour is a moving window's oldest call leaving it: not a fixed hour.
    assert daily_reset({**cerebras, "x-ratelimit-reset-requests-day": "3000"}, now) is None
    assert daily_reset({"x-ratelimit-reset-requests": "20s"}, now) is None  # not a day window


async def test_with_redis_every_process_and_a_restarted_one_draw_on_one_day(redis_url: str) -> None:
    clock = Clock(datetime.fromisoformat("2026-12-02T12:00:00+00:00"))
    scope = Scope("model", "fake/shared", (Limit("requests", DAY, 3, 0),))
    first, second = Pacer(redis_url, clock=clock), Pacer(redis_url, clock=clock)
    assert [isinstance(await p.take([scope], 0), Slot) for p in (first, second, first)] == [True] * 3
    restarted = Pacer(redis_url, clock=clock)  # a new process: the shared store still holds the day
    refused = await restarted.take([scope], 0)
    assert refused == Refusal("model fake/shared's 3 requests a day are used up", at("2026-12-03T00:00:00+00:00"))
    assert [a.left for a in await restarted.allowances([scope])] == [0]
