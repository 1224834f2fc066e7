"""Pacing end to end: a fake provider that enforces its limits (429 beyond) and the bench keeping
under them, alone and as two servers sharing one Redis; cooling and paced seats are not called,
are recorded as such, and say when they free up.

Windows are compressed: the fake's "20 requests a minute" is 20 every 3 seconds (or every second)
here, and the bench is told the same (`requests-3s`), so 200 panels take half a minute, not ten.
Where time or the provider's count matters, the bench is `benchwarmers serve` in its own process:
sharing an interpreter with the fake and the callers would make it late by the test's doing.
"""

from __future__ import annotations

import asyncio
import re
import time
from typing import Any

import httpx2

from benchwarmers.bench.evidence.board import leaderboard
from benchwarmers.bench.evidence.standings import standings
from benchwarmers.bench.services import Bench
from benchwarmers.store import counts
from tests.fakes.upstream import FakeUpstream
from tests.support.benchserver import BenchServer, ServeProcess, add_fake_endpoint, listed
from tests.support.panels import ask, collection

MAX_TOKENS = 195  # with a 16-character prompt: 199 tokens as the fake counts, 200 as the bench estimates


def body(i: int, model: str = "bench/solo") -> dict[str, Any]:
    return {
        "model": model,
        "messages": [{"role": "user", "content": f"panel {i:03d} of 200"}],
        "max_tokens": MAX_TOKENS,
    }


def post(server: BenchServer, data: dict[str, Any]) -> dict[str, Any]:
    response = httpx2.post(f"{server.v1}/chat/completions", json=data, timeout=120)
    assert response.status_code == 200, response.text
    return response.json()


def run_panels(servers: list[BenchServer], count: int, clients: int = 40) -> tuple[list[dict[str, Any]], float]:
    """`count` panels from `clients` callers at once, spread over `servers`; the replies and the
    seconds taken. The callers share one event loop: forty threads would crowd the server's."""

    async def main() -> list[dict[str, Any]]:
        queue = list(range(count))
        replies: dict[int, dict[str, Any]] = {}
        limits = httpx2.Limits(max_connections=clients, max_keepalive_connections=clients)
        async with httpx2.AsyncClient(timeout=120, limits=limits) as http:

            async def caller() -> None:
                while queue:
                    i = queue.pop(0)
                    server = servers[i % len(servers)]
                    response = await http.post(f"{server.v1}/chat/completions", json=body(i))
                    assert response.status_code == 200, response.text
                    replies[i] = response.json()

            await asyncio.gather(*(caller() for _ in range(clients)))
        return [replies[i] for i in range(count)]

    started = time.monotonic()
    replies = asyncio.run(main())
    return replies, time.monotonic() - started


def limited_endpoint(server: BenchServer, fake: FakeUpstream, **limits: int) -> None:
    fake.script("tight", latency=0.02)
    add_fake_endpoint(server, fake, models=[listed("tight")])
    collection(server, "solo", ["tight"], max_explorers=0)
    server.admin(lambda bench: bench.endpoints.set_limits("fake", limits))


def minimum_seconds(panels: int, per_window: int, window: float) -> float:
    """The least time `panels` calls take when only `per_window` fit in any window: the last
    batch cannot start before every earlier batch's window has passed."""
    return (-(-panels // per_window) - 1) * window


def test_200_panels_keep_under_the_providers_requests_and_tokens_with_no_429_in_the_least_time(tmp_path, fake_upstream):
    # 20 requests and 4,000 tokens a window: 20 calls of 199 tokens fit (the bench reserves 200 each).
    fake_upstream.limit(requests=20, tokens=4000, period=3.0)
    server = ServeProcess(tmp_path / "home").start()
    try:
        limited_endpoint(server, fake_upstream, **{"requests-3s": 20, "tokens-3s": 4000})
        replies, seconds = run_panels([server], 200)
    finally:
        server.stop()
    assert [r["bench"]["seats"][0]["status"] for r in replies] == ["ok"] * 200
    assert fake_upstream.refused == 0
    calls = fake_upstream.chat_requests
    assert len(calls) == 200
    least = minimum_seconds(200, 20, 3.0)
    assert least <= calls[-1].at - calls[0].at
    assert least <= seconds <= least * 1.15, f"{seconds:.2f}s for a minimum of {least}s"


def test_a_tokens_limit_paces_below_the_requests_limit(tmp_path, fake_upstream):
    # 1,000 tokens a second: five calls of 199 tokens, though twenty requests would be allowed.
    fake_upstream.limit(requests=20, tokens=1000, period=1.0)
    server = ServeProcess(tmp_path / "home").start()
    try:
        limited_endpoint(server, fake_upstream, **{"requests-second": 20, "tokens-second": 1000})
        replies, _ = run_panels([server], 20, clients=10)
    finally:
        server.stop()
    assert [r["bench"]["seats"][0]["status"] for r in replies] == ["ok"] * 20
    assert fake_upstream.refused == 0
    calls = fake_upstream.chat_requests
    assert calls[-1].at - calls[0].at >= minimum_seconds(20, 5, 1.0)


def test_two_serve_processes_sharing_one_redis_keep_together_under_one_limit(redis_url, tmp_path, fake_upstream):
    fake_upstream.limit(requests=20, period=1.0)
    first = ServeProcess(tmp_path / "home", redis_url=redis_url).start()
    second = ServeProcess(tmp_path / "home", redis_url=redis_url).start()
    try:
        limited_endpoint(first, fake_upstream, **{"requests-second": 20})
        replies, _ = run_panels([first, second], 60)
    finally:
        second.stop()
        first.stop()
    assert [r["bench"]["seats"][0]["status"] for r in replies] == ["ok"] * 60
    assert fake_upstream.refused == 0
    calls = fake_upstream.chat_requests
    assert len(calls) == 60
    # Each process alone would have sent 20 in the first second; together they sent 20.
    assert len([c for c in calls if c.at - calls[0].at < 1.0]) == 20


def test_without_redis_two_serve_processes_each_spend_the_whole_limit(tmp_path, fake_upstream):
    fake_upstream.limit(requests=20, period=1.0)
    first = ServeProcess(tmp_path / "home").start()
    second = ServeProcess(tmp_path / "home").start()
    try:
        limited_endpoint(first, fake_upstream, **{"requests-second": 20})
        run_panels([first, second], 60)
    finally:
        second.stop()
        first.stop()
    # Per-process budgets: the provider refuses what the second process adds.
    assert fake_upstream.refused > 0


def cooldown_of(server: BenchServer, alias: str) -> float:
    until = server.admin(lambda bench: bench.models.model(alias))["cooldown_until"]
    assert until is not None
    return float(until)


def cooling_error(until: float) -> re.Pattern[str]:
    clock = time.strftime("%H:%M:%S UTC", time.gmtime(until))
    return re.compile(rf"cooling down after a rate limit \(429\); frees up in \d+\.\ds \({clock}\)")


def test_a_cooling_member_or_nominee_is_not_called_and_says_until_when(bench_with_roster, client, fake):
    fake.script("gemma-3-27b", status=429, headers={"retry-after": "90"})
    fake.script("deepseek-r1", status=429, headers={"retry-after": "300"})
    collection(bench_with_roster, "g", ["gemma-3-27b", "phi-4"], max_explorers=0)
    nominate = {"bench": {"with": ["fake/deepseek-r1"]}}
    first = ask(client, "bench/g", extra_body=nominate).bench["seats"]
    assert [(s["alias"], s["status"]) for s in first] == [
        ("fake/gemma-3-27b", "error"),
        ("fake/phi-4", "ok"),
        ("fake/deepseek-r1", "error"),
    ]
    gemma, deepseek = (
        cooldown_of(bench_with_roster, "fake/gemma-3-27b"),
        cooldown_of(bench_with_roster, "fake/deepseek-r1"),
    )

    fake.clear()
    reply = ask(client, "bench/g", extra_body=nominate)
    assert [r.json["model"] for r in fake.chat_requests] == ["phi-4"]  # neither cooling model was called
    seats = reply.bench["seats"]
    assert [(s["call"].rpartition(".")[2], s["status"], s["frees_at"]) for s in seats] == [
        ("member1", "cooling", gemma),
        ("member2", "ok", None),
        ("nominee1", "cooling", deepseek),
    ]
    assert cooling_error(gemma).fullmatch(seats[0]["error"]), seats[0]["error"]
    assert cooling_error(deepseek).fullmatch(seats[2]["error"]), seats[2]["error"]
    assert (seats[0]["answer"], seats[0]["seconds"]) == ("", 0.0)
    content = reply.choices[0].message.content
    assert f"## member · fake/gemma-3-27b · cooling · 0.0s\ncall `{seats[0]['call']}`\n\n_not called: " in content

    # Recorded as seats, owed no verdict, and refused one: nothing was said to judge.
    listed_panel = httpx2.get(f"{bench_with_roster.url}/bench/panels/{reply.bench['panel']}").json()
    assert [(s["status"], s["frees_at"]) for s in listed_panel["seats"]] == [
        ("cooling", gemma),
        ("ok", None),
        ("cooling", deepseek),
    ]
    assert listed_panel["owed"] == 1
    verdict = httpx2.post(f"{bench_with_roster.url}/bench/verdict", json={"call": seats[0]["call"], "useful": False})
    assert verdict.status_code == 400
    assert verdict.json()["error"]["code"] == "seat_not_called"
    # Not a seat in the evidence: gemma sat once (its 429), in the full leaderboard and the quick counts.
    full, quick, owed = bench_with_roster.admin(evidence)
    for board in (full, quick):
        [general] = board
        [standing] = [s for s in general.standings if s.alias == "fake/gemma-3-27b"]
        assert (standing.seats, standing.errors, standing.awaiting) == (1, 1, 0)
    assert owed == 2  # phi-4's two answers


async def evidence(bench: Bench) -> tuple[list[Any], list[Any], int]:
    async with bench.state.read() as conn:
        owed = await counts.owed_count(conn)
    return await leaderboard(bench.state), await standings(bench.state), owed


def test_a_paced_explorer_gives_its_seat_to_the_next_candidate(server, fake_upstream):
    for model in ("phi-4", "qwen3-32b", "kimi-k2"):
        fake_upstream.script(model, latency=0.01)
    add_fake_endpoint(server, fake_upstream, models=[listed(m) for m in ("phi-4", "qwen3-32b", "kimi-k2")])
    collection(server, "one", ["phi-4"], max_explorers=1)
    server.admin(lambda bench: bench.models.set_model("fake/qwen3-32b", limits={"requests-minute": 1}))
    server.admin(
        lambda bench: bench.gateway_settings.set_gateway(epsilon=0, explorer_floor=1)
    )  # the stalest explores, always
    # Each explorer sits once (both are new), then the stalest is asked again: qwen3-32b's one call
    # a minute is spent, so it is paced and kimi-k2 takes the seat, at most two panels later.
    for i in range(4):
        reply = post(server, body(i, "bench/one"))
        seats = [(s["call"].rpartition(".")[2], s["alias"], s["status"]) for s in reply["bench"]["seats"]]
        if any(status == "paced" for _, _, status in seats):
            break
    assert seats == [
        ("member1", "fake/phi-4", "ok"),
        ("explorer1", "fake/qwen3-32b", "paced"),
        ("explorer2", "fake/kimi-k2", "ok"),
    ]
    paced = reply["bench"]["seats"][1]
    assert paced["error"].startswith("paced: model fake/qwen3-32b's 1 request a minute are used up; frees up in ")
    assert 59 < paced["frees_at"] - time.time() <= 61
    assert [r.json["model"] for r in fake_upstream.chat_requests].count("qwen3-32b") == 1
    # Paced is not seated: it stays the stalest and is asked (and paced) first again.
    again = post(server, body(9, "bench/one"))["bench"]["seats"]
    assert [(s["alias"], s["status"]) for s in again] == [
        ("fake/phi-4", "ok"),
        ("fake/qwen3-32b", "paced"),
        ("fake/kimi-k2", "ok"),
    ]


def test_limits_learned_from_headers_pace_the_next_calls(server, fake_upstream):
    # The provider announces 2 requests a minute (OpenAI's headers) and refuses a third.
    fake_upstream.script("tight", latency=0.01)
    fake_upstream.limit(model="tight", requests=2, period=60, announce=True)
    add_fake_endpoint(server, fake_upstream, models=[listed("tight")])
    collection(server, "solo", ["tight"], max_explorers=0)
    server.admin(lambda bench: bench.gateway_settings.set_gateway(seat_timeout=2))
    started = time.time()
    statuses = [post(server, body(i))["bench"]["seats"][0] for i in range(3)]
    assert [s["status"] for s in statuses] == ["ok", "ok", "paced"]
    # The first call, made before the limit was known, counts too: the provider said one was left.
    assert statuses[2]["error"].startswith("paced: model fake/tight's 2 requests a minute are used up")
    assert started + 60 < statuses[2]["frees_at"] <= time.time() + 61
    assert len(fake_upstream.chat_requests) == 2
    assert fake_upstream.refused == 0
    shown = server.admin(lambda bench: bench.models.model("fake/tight"))
    assert shown["limits"] == {"requests-minute": 2}
