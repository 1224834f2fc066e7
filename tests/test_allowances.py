"""Daily allowances as providers count them, end to end: a fake provider that allows 50 requests a
day from 00:00 UTC (and answers 429 beyond, as real free tiers do) says so only in its limits fact,
not in headers; the bench spends exactly the day's 50 calls over a simulated day (the pacer's and
the fake's clocks injected), lists the rest as `paced` until the reset, and `check` shows what is left.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx2
import pytest
from typer.testing import CliRunner

from benchwarmers.cli.app import app
from tests.benchserver import BenchServer, add_fake_endpoint, listed
from tests.fakes.upstream import FakeUpstream
from tests.test_gateway_panels import collection

# The model's limits fact, in the vocabulary catalog/pace.py reads (seam35.md), as the user's override
# here: the free-tier source (I1) writes the same mapping at its own precedence.
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
    server = BenchServer(home).start()
    try:
        add_fake_endpoint(server, fake_upstream, models=[listed("daily")])
        collection(server, "daily", ["daily"], max_explorers=0)
        shown = server.admin(lambda bench: bench.models.set_model("fake/daily", limits=DAILY_50))
        assert shown["limits"] == DAILY_50
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

        # `check` (its own bench, counting today's seats from the store) shows nothing is left till midnight.
        monkeypatch.setenv("BENCHWARMERS_HOME", str(home))
        monkeypatch.setenv("COLUMNS", "250")
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
