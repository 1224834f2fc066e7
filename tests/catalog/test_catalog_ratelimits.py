"""Rate limits and cooldowns learned from real seats: the limits providers announce in their headers
(Groq, Cerebras, OpenRouter, Mistral forms) become the model's known limits, written only when they
change; repeated 429s extend the cooldown (a model cooling down is not called, so only a 429 after
its cooldown ends does); a model in cooldown shows as such."""

from __future__ import annotations

import re
import time
from typing import Any

import pytest
from typer.testing import CliRunner

from benchwarmers.bench.panels.learning import cooldown_seconds
from benchwarmers.cli.app import app
from benchwarmers.store import roster
from benchwarmers.store.changes import list_changes, record_change
from tests.support.benchserver import BenchServer, add_fake_endpoint, listed
from tests.support.panels import ask, collection

HEADERS = {
    "groq": {
        "x-ratelimit-limit-requests": "1000",
        "x-ratelimit-limit-tokens": "12000",
        "x-ratelimit-remaining-requests": "999",
        "x-ratelimit-remaining-tokens": "11850",
        "x-ratelimit-reset-requests": "1m26.4s",
        "x-ratelimit-reset-tokens": "7.66s",
    },
    "cerebras": {
        "x-ratelimit-limit-requests-day": "14400",
        "x-ratelimit-limit-tokens-minute": "60000",
        "x-ratelimit-remaining-requests-day": "14399",
        "x-ratelimit-remaining-tokens-minute": "59000",
        "x-ratelimit-reset-requests-day": "33011.38",  # counted to the real midnight in `four`
        "x-ratelimit-reset-tokens-minute": "11.38",
    },
    "openrouter": {"X-RateLimit-Limit": "20", "X-RateLimit-Remaining": "19", "X-RateLimit-Reset": "1764547200000"},
    "mistral": {
        "x-ratelimit-limit-req-minute": "60",
        "x-ratelimit-remaining-req-minute": "59",
        "x-ratelimit-limit-tokens-minute": "500000",
        "x-ratelimit-remaining-tokens-minute": "499000",
        "x-ratelimit-tokens-query-cost": "32",
    },
}
KNOWN = {
    "groq": {"requests": 1000, "tokens": 12000},
    "cerebras": {"requests-day": 14400, "tokens-minute": 60000, "resets-day": "00:00"},
    "openrouter": {"requests": 20},
    "mistral": {"req-minute": 60, "tokens-minute": 500000},
}


def half_left(headers: dict[str, str], name: str) -> str:
    """A `remaining` header as half its window's limit; any other header as it is."""
    if "remaining" not in name.lower():
        return headers[name]
    return str(int(headers[name.replace("remaining", "limit").replace("Remaining", "Limit")]) // 2)


def changes(server: BenchServer, action: str) -> list[dict[str, Any]]:
    async def read(bench):
        async with bench.state.read() as conn:
            return await list_changes(conn, limit=1000, subject="model")

    return [c for c in reversed(server.admin(read)) if c["action"] == action]


def limits(server: BenchServer, model: str) -> dict[str, Any] | None:
    return server.admin(lambda bench: bench.models.model(f"fake/{model}"))["facts"].get("rate_limits")


@pytest.fixture
def four(server: BenchServer, fake_upstream: Any) -> BenchServer:
    # Cerebras' daily window resets at 00:00 UTC, its header counting the seconds to it, so the bench
    # learns the reset hour (a fixed count would name a whole hour at one moment of every hour).
    to_midnight = 86400 - time.time() % 86400
    scripted = {**HEADERS, "cerebras": {**HEADERS["cerebras"], "x-ratelimit-reset-requests-day": f"{to_midnight:.2f}"}}
    for provider, headers in scripted.items():
        fake_upstream.script(f"{provider}-model", headers=headers)
    add_fake_endpoint(server, fake_upstream, models=[listed(f"{p}-model") for p in HEADERS])
    collection(server, "four", [f"{p}-model" for p in HEADERS], max_explorers=0)
    return server


def test_rate_limit_headers_become_known_limits(four, fake_upstream, client):
    assert [s["status"] for s in ask(client, "bench/four").bench["seats"]] == ["ok"] * 4
    for provider, known in KNOWN.items():
        assert limits(four, f"{provider}-model") == {"value": known, "source": "headers"}
    assert len(changes(four, "limits")) == 4

    # What remains changes on every call; the limits do not, so nothing is written again. (What
    # remains is believed by pacing: with half of each window left, no call here waits.)
    for provider, headers in HEADERS.items():
        fake_upstream.script(f"{provider}-model", headers={k: half_left(headers, k) for k in headers})
    ask(client, "bench/four")
    assert len(changes(four, "limits")) == 4

    # A changed limit is written; a response naming only some windows keeps the others.
    fake_upstream.script("groq-model", headers={"x-ratelimit-limit-tokens": "6000"})
    ask(client, "bench/four")
    assert limits(four, "groq-model") == {"value": {"requests": 1000, "tokens": 6000}, "source": "headers"}
    last = changes(four, "limits")[-1]
    assert (last["name"], last["before"], last["after"]) == (
        "fake/groq-model",
        {"rate_limits": {"requests": 1000, "tokens": 12000}},
        {"rate_limits": {"requests": 1000, "tokens": 6000}},
    )


def test_limits_announced_on_a_429_are_learned_too(server, fake_upstream, client):
    fake_upstream.script("groq-model", status=429, headers={**HEADERS["groq"], "retry-after": "5"})
    add_fake_endpoint(server, fake_upstream, models=[listed("groq-model")])
    collection(server, "g", ["groq-model"], max_explorers=0)
    ask(client, "bench/g")
    assert limits(server, "groq-model") == {"value": KNOWN["groq"], "source": "headers"}


def end_cooldown(server: BenchServer, alias: str) -> None:
    """Let `alias`'s cooldown run out (as time would), telling running servers as a change does."""

    async def end(bench):
        model = (await bench.state.snapshot()).models[alias]
        async with bench.state.write() as conn:
            await roster.update_model(conn, model.pk, cooldown_until=time.time() - 1)
            await record_change(conn, actor="test", subject="model", name=alias, action="cooled")

    server.admin(end)


def test_repeated_429s_extend_the_cooldown_and_an_answer_ends_the_streak(server, fake_upstream, client, monkeypatch):
    fake_upstream.script("busy", status=429, headers={"retry-after": "10"})
    add_fake_endpoint(server, fake_upstream, models=[listed("busy")])
    collection(server, "b", ["busy"], max_explorers=0)
    assert ask(client, "bench/b").bench["seats"][0]["status"] == "error"
    # While it cools down it is not called (no 429 to extend the cooldown); each 429 after one doubles it.
    assert ask(client, "bench/b").bench["seats"][0]["status"] == "cooling"
    assert len(fake_upstream.chat_requests) == 1
    for _ in range(2):
        end_cooldown(server, "fake/busy")
        assert ask(client, "bench/b").bench["seats"][0]["status"] == "error"
    assert len(fake_upstream.chat_requests) == 3
    cooldowns = changes(server, "cooldown")
    assert [c["after"]["streak"] for c in cooldowns] == [1, 2, 3]
    assert [c["after"]["until"] - c["at"] for c in cooldowns] == [
        pytest.approx(10, abs=1),
        pytest.approx(20, abs=1),
        pytest.approx(40, abs=1),
    ]
    assert server.admin(lambda bench: bench.models.model("fake/busy"))["status"] == "cooldown"

    monkeypatch.setenv("BENCHWARMERS_HOME", str(server.settings.home))
    monkeypatch.setenv("COLUMNS", "200")
    until = r"cooldown until (\d\d:\d\d:\d\d|\d{4}-\d\d-\d\d \d\d:\d\d)"  # a date past midnight
    shown = CliRunner().invoke(app, ["model", "list"])
    assert re.search(rf"fake/busy .*│ {until}", shown.output), shown.output
    detail = CliRunner().invoke(app, ["model", "show", "fake/busy"])
    assert re.match(rf"fake/busy  \({until}\)\n", detail.output), detail.output

    fake_upstream.script("busy")
    end_cooldown(server, "fake/busy")
    assert ask(client, "bench/b").bench["seats"][0]["status"] == "ok"
    fake_upstream.script("busy", status=429, headers={"retry-after": "10"})
    ask(client, "bench/b")
    restart = changes(server, "cooldown")[-1]
    assert restart["after"]["streak"] == 1
    assert restart["after"]["until"] - restart["at"] == pytest.approx(10, abs=1)


def test_the_cooldown_is_the_providers_wait_doubled_for_each_429_in_a_row_and_a_day_at_most():
    assert [cooldown_seconds(10, streak) for streak in (1, 2, 3, 4)] == [10, 20, 40, 80]
    assert cooldown_seconds(None, 1) == cooldown_seconds(0, 1) == 60  # no wait given: a minute
    assert cooldown_seconds(None, 3) == 240
    assert cooldown_seconds(3600, 6) == 24 * 3600  # 32 hours, capped at a day
    assert cooldown_seconds(1, 50) == 1024  # the doubling stops after ten
