"""Explorers that focus, through a real serve: the close-rates run of perf/simulate.py, smaller,
with verdicts posted over HTTP right after each panel, judged by each model's hidden rate."""

from __future__ import annotations

import random
from collections import Counter

import httpx2

from tests.benchserver import BenchServer, add_fake_endpoint, listed
from tests.fakes.upstream import FakeUpstream

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
        assert server.admin(lambda b: b.state.snapshot()).gateway["explorer_floor"] == 0.4
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
