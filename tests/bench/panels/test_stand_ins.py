"""Stand-ins (issue #35 item 6): in a collection that opted in, a member that is cooling, paced out or
retired is replaced for the panel by the best eligible model (the one evidence rule on the panel's
shape, the explorers' eligibility), marked `stand-in for X` in the reply, the `bench` data and the
seat rows, and judged like any seat. The absent member's seat stays listed."""

from __future__ import annotations

import random
import sqlite3
from typing import Any

import httpx2

from benchwarmers.bench.evidence.board import leaderboard
from benchwarmers.bench.evidence.posterior import best_among
from benchwarmers.bench.panels.seating import Candidate, Seat, best_first, plan_seats
from tests.support.benchserver import BenchServer
from tests.support.panels import ask, collection

NOW = 1_800_000_000.0


def plan(members: list[Candidate], pool: list[Candidate], *, stand_ins: bool = True, explorers: int = 0) -> Any:
    return plan_seats(
        members,
        [],
        pool,
        estimate=100,
        images=False,
        max_explorers=explorers,
        max_calls=5,
        now=NOW,
        rng=random.Random(7),
        stand_ins=stand_ins,
    )


def free(alias: str, **facts: Any) -> Candidate:
    return Candidate(alias=alias, family=alias.split("-")[0], free=True, **facts)


def test_a_cooling_or_retired_member_gets_the_best_eligible_model_by_the_evidence() -> None:
    cooling = free("gemma-3", cooldown_until=NOW + 90)
    retired = free("qwen-3", retired=True)
    present = free("phi-4")
    pool = [
        free("kimi-k2", useful=9, not_useful=1),  # Wilson low 0.60: the best
        free("glm-4", useful=3, not_useful=0),  # 0.44: second
        free("mistral-s"),  # no verdict: after the judged ones
        Candidate("paid-x", family="paid", free=False, useful=20),  # priced: never seated by the bench itself
        free("cold-y", useful=30, cooldown_until=NOW + 10),  # cooling itself
        free("small-z", useful=30, window=50),  # the prompt does not fit
        free("went-w", useful=30, went_paid=True),
        cooling,
        retired,
        present,
    ]
    seats = plan([cooling, retired, present], pool).seats
    assert seats == (
        Seat("member", 1, "gemma-3"),
        Seat("standin", 1, "kimi-k2", family="kimi", stands_in_for="gemma-3"),
        Seat("member", 2, "qwen-3", retired=True),
        Seat("standin", 2, "glm-4", family="glm", stands_in_for="qwen-3"),
        Seat("member", 3, "phi-4"),
    )
    assert [r.alias for r in plan([cooling, retired, present], pool).reserves] == ["mistral-s"]


def test_best_first_orders_as_the_one_evidence_rule_does() -> None:
    rng = random.Random(3)
    pool = []
    for i in range(200):
        useful = rng.randint(0, 12) if i % 5 else 0
        pool.append(free(f"m-{i:03d}", useful=useful, not_useful=rng.randint(0, 12) if i % 5 else 0))
    counts = {c.alias: (c.useful, c.useful + c.not_useful) for c in pool}
    assert [c.alias for c in best_first(pool, 200)] == best_among(sorted(counts), counts)
    assert [c.alias for c in best_first(pool, 3)] == best_among(sorted(counts), counts)[:3]


def test_stand_ins_take_no_explorer_seat_and_explorers_none_of_theirs() -> None:
    cooling = free("gemma-3", cooldown_until=NOW + 90)
    pool = [free("kimi-k2", useful=5), free("kimi-k2b", useful=1), free("glm-4"), free("mistral-s"), cooling]
    result = plan([cooling], pool, explorers=2)
    kinds = [(s.kind, s.alias) for s in result.seats]
    assert kinds[:2] == [("member", "gemma-3"), ("standin", "kimi-k2")]
    # Two explorers beside one called seat (the stand-in), neither the stand-in nor of its family.
    assert sorted(a for k, a in kinds if k == "explorer") == ["glm-4", "mistral-s"]
    assert {r.alias for r in result.reserves} == {"kimi-k2b"}


def test_without_the_opt_in_nobody_stands_in() -> None:
    cooling = free("gemma-3", cooldown_until=NOW + 90)
    result = plan([cooling], [free("kimi-k2", useful=5), cooling], stand_ins=False)
    assert result.seats == (Seat("member", 1, "gemma-3"),)
    assert result.reserves == ()


# -- end to end: the openai SDK against a real bench and the fake provider -----------------------------


def seat_rows(server: BenchServer, panel: str) -> list[tuple[Any, ...]]:
    with sqlite3.connect(server.settings.home / "bench.db") as db:
        return db.execute(
            "SELECT call, seat, alias, status, stands_in_for FROM seats WHERE panel_id = ? ORDER BY position",
            (panel,),
        ).fetchall()


def judge(server: BenchServer, call: str, useful: bool) -> None:
    response = httpx2.post(f"{server.url}/bench/verdict", json={"call": call, "useful": useful, "note": "checked"})
    assert response.status_code == 200, response.text


def make_kimi_the_best(server: BenchServer, client: Any) -> None:
    """Evidence on the `review` shape: kimi-k2 useful three times, llama-3.3-70b not useful three."""
    collection(server, "seed", ["kimi-k2", "llama-3.3-70b"], max_explorers=0, shape="review")
    for _ in range(3):
        seats = ask(client, "bench/seed").bench["seats"]
        for seat in seats:
            judge(server, seat["call"], seat["alias"] == "fake/kimi-k2")


def cool_gemma(server: BenchServer, client: Any, fake: Any, name: str) -> None:
    """A 429 from gemma-3-27b (retry-after 90 s) on one panel: it cools, as the history learns it."""
    fake.script("gemma-3-27b", status=429, headers={"retry-after": "90"})
    ask(client, f"bench/{name}")
    assert server.admin(lambda b: b.models.model("fake/gemma-3-27b"))["status"] == "cooldown"
    fake.clear()


def test_a_cooling_member_has_a_stand_in_labelled_in_the_reply_the_data_and_the_rows(bench_with_roster, client, fake):
    make_kimi_the_best(bench_with_roster, client)
    collection(bench_with_roster, "g", ["gemma-3-27b", "phi-4"], max_explorers=0, shape="review", stand_ins=True)
    cool_gemma(bench_with_roster, client, fake, "g")

    reply = ask(client, "bench/g")
    panel = reply.bench["panel"]
    assert sorted(r.json["model"] for r in fake.chat_requests) == ["kimi-k2", "phi-4"]  # gemma is not called
    seats = reply.bench["seats"]
    assert [(s["call"], s["seat"], s["alias"], s["status"], s.get("stands_in_for")) for s in seats] == [
        (f"{panel}.member1", "member", "fake/gemma-3-27b", "cooling", None),
        (f"{panel}.standin1", "standin", "fake/kimi-k2", "ok", "fake/gemma-3-27b"),
        (f"{panel}.member2", "member", "fake/phi-4", "ok", None),
    ]
    assert "stands_in_for" not in seats[0] and "stands_in_for" not in seats[2]
    content = reply.choices[0].message.content
    assert f"## stand-in for fake/gemma-3-27b · fake/kimi-k2 · ok · {seats[1]['seconds']:.1f}s\n" in content
    assert f"call `{panel}.standin1`" in content
    assert "## member · fake/gemma-3-27b · cooling · 0.0s\n" in content  # the absent member is still listed
    assert seat_rows(bench_with_roster, panel) == [
        (f"{panel}.member1", "member", "fake/gemma-3-27b", "cooling", None),
        (f"{panel}.standin1", "standin", "fake/kimi-k2", "ok", "fake/gemma-3-27b"),
        (f"{panel}.member2", "member", "fake/phi-4", "ok", None),
    ]
    # The panel page reads the call log: the stand-in is shown as such there too.
    logged = httpx2.get(f"{bench_with_roster.url}/bench/panels/{panel}").json()
    assert [(s["seat"], s["alias"], s["stands_in_for"]) for s in logged["seats"]] == [
        ("member", "fake/gemma-3-27b", None),
        ("standin", "fake/kimi-k2", "fake/gemma-3-27b"),
        ("member", "fake/phi-4", None),
    ]
    assert logged["owed"] == 2

    # Judged like any seat: the verdict lands on kimi-k2's board for the shape (3 useful before, now 4).
    judge(bench_with_roster, f"{panel}.standin1", True)

    async def kimi(bench: Any) -> tuple[int, int]:
        [board] = await leaderboard(bench.state, "review")
        [standing] = [s for s in board.standings if s.alias == "fake/kimi-k2"]
        return standing.useful, standing.verdicts

    assert bench_with_roster.admin(kimi) == (4, 4)
    assert httpx2.get(f"{bench_with_roster.url}/bench/panels/{panel}").json()["owed"] == 1


def test_a_collection_that_has_not_opted_in_leaves_the_cooling_member_alone(bench_with_roster, client, fake):
    make_kimi_the_best(bench_with_roster, client)
    collection(bench_with_roster, "g", ["gemma-3-27b", "phi-4"], max_explorers=0, shape="review")
    cool_gemma(bench_with_roster, client, fake, "g")

    reply = ask(client, "bench/g")
    panel = reply.bench["panel"]
    assert [r.json["model"] for r in fake.chat_requests] == ["phi-4"]
    assert [(s["seat"], s["alias"], s["status"]) for s in reply.bench["seats"]] == [
        ("member", "fake/gemma-3-27b", "cooling"),
        ("member", "fake/phi-4", "ok"),
    ]
    assert "stand-in" not in reply.choices[0].message.content
    assert seat_rows(bench_with_roster, panel) == [
        (f"{panel}.member1", "member", "fake/gemma-3-27b", "cooling", None),
        (f"{panel}.member2", "member", "fake/phi-4", "ok", None),
    ]


def test_a_member_paced_out_for_the_day_has_a_stand_in(bench_with_roster, client, fake):
    make_kimi_the_best(bench_with_roster, client)
    collection(bench_with_roster, "p", ["phi-4"], max_explorers=0, shape="review", stand_ins=True)
    bench_with_roster.admin(lambda b: b.models.set_model("fake/phi-4", limits={"requests-day": 1}))
    assert [s["status"] for s in ask(client, "bench/p").bench["seats"]] == ["ok"]  # its one call today
    fake.clear()

    reply = ask(client, "bench/p")
    panel = reply.bench["panel"]
    assert [r.json["model"] for r in fake.chat_requests] == ["kimi-k2"]
    member, stand_in = reply.bench["seats"]
    assert (member["seat"], member["alias"], member["status"]) == ("member", "fake/phi-4", "paced")
    assert member["frees_at"] > reply.created + 86_000  # a day's window: longer than any panel waits
    assert (stand_in["call"], stand_in["alias"], stand_in["status"], stand_in["stands_in_for"]) == (
        f"{panel}.standin1",
        "fake/kimi-k2",
        "ok",
        "fake/phi-4",
    )
    assert "## stand-in for fake/phi-4 · fake/kimi-k2 · ok · " in reply.choices[0].message.content
    assert seat_rows(bench_with_roster, panel) == [
        (f"{panel}.member1", "member", "fake/phi-4", "paced", None),
        (f"{panel}.standin1", "standin", "fake/kimi-k2", "ok", "fake/phi-4"),
    ]


def test_the_api_body_sets_stand_ins_and_a_replace_without_it_clears_it(bench_with_roster):
    url = f"{bench_with_roster.url}/api/collections"
    made = httpx2.post(url, json={"name": "g", "members": ["fake/phi-4"], "stand_ins": True})
    assert (made.status_code, made.json()["stand_ins"]) == (201, True)
    wrong = httpx2.post(url, json={"name": "h", "members": ["fake/phi-4"], "stand_ins": "yes"})
    assert wrong.status_code == 400 and wrong.json()["error"]["param"] == "stand_ins"
    replaced = httpx2.put(f"{url}/g", json={"members": ["fake/phi-4"]})
    assert (replaced.status_code, replaced.json()["stand_ins"]) == (200, False)


def test_a_retired_member_has_a_stand_in_and_keeps_its_retired_seat(bench_with_roster, client, fake):
    make_kimi_the_best(bench_with_roster, client)
    collection(bench_with_roster, "r", ["qwen3-32b"], max_explorers=0, shape="review", stand_ins=True)
    bench_with_roster.admin(lambda bench: bench.gateway_settings.set_gateway(failing_after=3))
    fake.script("qwen3-32b", status=500)
    for _ in range(3):  # failing, not yet retired: nobody stands in for a seat that was called
        assert [(s["seat"], s["status"]) for s in ask(client, "bench/r").bench["seats"]] == [("member", "error")]
    fake.clear()

    reply = ask(client, "bench/r")
    panel = reply.bench["panel"]
    assert [r.json["model"] for r in fake.chat_requests] == ["kimi-k2"]
    assert seat_rows(bench_with_roster, panel) == [
        (f"{panel}.member1", "member", "fake/qwen3-32b", "retired", None),
        (f"{panel}.standin1", "standin", "fake/kimi-k2", "ok", "fake/qwen3-32b"),
    ]
    assert reply.bench["seats"][1]["stands_in_for"] == "fake/qwen3-32b"


def test_a_stand_in_without_a_slot_gives_the_seat_to_the_next_best(bench_with_roster, client, fake):
    make_kimi_the_best(bench_with_roster, client)  # kimi-k2 3/3, then llama-3.3-70b 0/3, then the unjudged
    collection(bench_with_roster, "g", ["gemma-3-27b"], max_explorers=0, shape="review", stand_ins=True)
    bench_with_roster.admin(lambda b: b.models.set_model("fake/kimi-k2", limits={"requests-day": 1}))
    cool_gemma(bench_with_roster, client, fake, "g")
    first = ask(client, "bench/g").bench["seats"]
    assert [(s["alias"], s.get("stands_in_for")) for s in first] == [
        ("fake/gemma-3-27b", None),
        ("fake/kimi-k2", "fake/gemma-3-27b"),  # kimi's one call today
    ]
    fake.clear()

    reply = ask(client, "bench/g")
    panel = reply.bench["panel"]
    assert [r.json["model"] for r in fake.chat_requests] == ["llama-3.3-70b"]  # kimi is paced: never called
    assert seat_rows(bench_with_roster, panel) == [
        (f"{panel}.member1", "member", "fake/gemma-3-27b", "cooling", None),
        (f"{panel}.standin1", "standin", "fake/llama-3.3-70b", "ok", "fake/gemma-3-27b"),
    ]
