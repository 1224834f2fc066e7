"""Explorers that focus, through a real serve: the close-rates run of perf/simulate.py, smaller,
with verdicts posted over HTTP right after each panel, judged by each model's hidden rate."""

from __future__ import annotations

import random
import time
from collections import Counter

import httpx2
from typer.testing import CliRunner

from benchwarmers.cli.app import app
from tests.fakes.upstream import FakeUpstream
from tests.support.benchserver import BenchServer, add_fake_endpoint, listed

MEMBER = "member"
# A best, a close runner-up and nine more; the last three are clearly bad (rate <= 0.35).
RATES = {
    "alpha": 0.60,
    "bravo": 0.55,
    "charlie": 0.50,
    "delta": 0.48,
    "echo": 0.46,
    "foxtrot": 0.44,
    "golf": 0.42,
    "hotel": 0.40,
    "india": 0.34,
    "juliet": 0.32,
    "kilo": 0.30,
}
BAD = ("india", "juliet", "kilo")
PANELS = 400


def test_explorer_seats_leave_the_clearly_bad_models_without_starving_them(server: BenchServer):
    with FakeUpstream() as fake:
        for model in (MEMBER, *RATES):
            fake.script(model)
        add_fake_endpoint(server, fake, models=[listed(m) for m in (MEMBER, *RATES)])
        solo = {"name": "solo", "members": [f"fake/{MEMBER}"], "description": "solo work", "tags": ["test"]}
        server.admin(lambda bench: bench.collections.add_collection({**solo, "shape": "review", "max_explorers": 2}))
        assert server.admin(lambda b: b.state.snapshot()).gateway.explorer_floor == 0.5
        world = random.Random(3)
        late: Counter[str] = Counter()  # explorer seats in the second half, when the evidence is in
        body = {"model": "bench/solo", "messages": [{"role": "user", "content": "Review this function."}]}
        with httpx2.Client(base_url=server.url, timeout=30) as http:
            for n in range(PANELS):
                reply = http.post("/v1/chat/completions", json=body)
                assert reply.status_code == 200, reply.text
                seats = reply.json()["bench"]["seats"]
                assert [s["seat"] for s in seats] == ["member", "explorer", "explorer"]
                for seat in seats:
                    alias = seat["alias"].removeprefix("fake/")
                    assert seat["status"] == "ok", seat
                    useful = world.random() < (0.45 if alias == MEMBER else RATES[alias])
                    judged = http.post("/bench/verdict", json={"call": seat["call"], "useful": useful})
                    assert judged.json() == {"call": seat["call"], "recorded": True, "replaced": False}
                    if seat["seat"] == "explorer" and n >= PANELS // 2:
                        late[alias] += 1
    fair = sum(late.values()) / len(RATES)
    shares = {alias: late[alias] / fair for alias in RATES}
    assert sum(late.values()) == PANELS  # two explorers on each of the last 200 panels
    # The clearly bad models fall below their fair share; none is starved (the staleness floor).
    assert max(shares[a] for a in BAD) < 1.0, shares
    assert sum(shares[a] for a in BAD) / len(BAD) < 0.8, shares
    assert min(shares.values()) >= 0.25, shares
    # Every verdict posted reached the server's seat history, which seating reads.
    history = server.bench.state.history
    assert sum(sum(history.counts[(f"fake/{a}", "review")]) for a in RATES) == 2 * PANELS


def test_the_leaderboard_shows_a_change_beside_the_all_time_record(server: BenchServer, monkeypatch):
    with FakeUpstream() as fake:
        fake.script(MEMBER)
        add_fake_endpoint(server, fake, models=[listed(MEMBER)])
        solo = {"name": "solo", "members": [f"fake/{MEMBER}"], "description": "solo work", "tags": ["test"]}
        server.admin(lambda bench: bench.collections.add_collection({**solo, "shape": "review", "max_explorers": 0}))
        body = {"model": "bench/solo", "messages": [{"role": "user", "content": "Review this function."}]}
        with httpx2.Client(base_url=server.url, timeout=30) as http:
            # 100 useful answers, then the model changes: 20 that are not.
            for n in range(120):
                [seat] = http.post("/v1/chat/completions", json=body).json()["bench"]["seats"]
                assert http.post("/bench/verdict", json={"call": seat["call"], "useful": n < 100}).status_code == 200
            [board] = http.get("/api/leaderboard").json()["shapes"]
            page = http.get("/leaderboard").text
    [model] = board["models"]
    assert (model["useful"], model["verdicts"]) == (100, 120)
    # The last 10 of the first 105 verdicts (5 of them useful) opened the epoch, as test_epochs.py shows.
    assert model["current"] == {"useful": 5, "verdicts": 25, "rate": 0.2, "interval": [0.0886, 0.3913]}
    assert model["changed"]["why"] == "recent 5/10 against 95/95 before"
    assert "now 5/25: recent 5/10 against 95/95 before" in page
    monkeypatch.setenv("BENCHWARMERS_HOME", str(server.settings.home))
    result = CliRunner().invoke(app, ["leaderboard"], env={"COLUMNS": "200"})
    day = time.strftime("%Y-%m-%d", time.gmtime(model["changed"]["at"]))
    assert (
        f"fake/{MEMBER}: standing changed {day}: recent 5/10 against 95/95 before; now 5/25 useful, all-time 100/120\n"
    ) in result.output
