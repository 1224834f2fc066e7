"""Seating: members, nominees, explorers; every explorer filter; staleness, epsilon and the focus seats."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence

import pytest

from benchwarmers.bench.core.seats import explorer_count
from benchwarmers.bench.panels.seating import Candidate, Seat, SeatPlan, Skipped, plan_seats, too_small

NOW = 1_800_000_000.0


def free(alias: str, **kw: object) -> Candidate:
    kw.setdefault("free", True)
    return Candidate(alias, **kw)  # type: ignore[arg-type]


def plan(
    members: Sequence[Candidate] = (),
    nominees: Sequence[Candidate] = (),
    pool: Sequence[Candidate] = (),
    *,
    estimate: int = 1000,
    images: bool = False,
    max_explorers: int = 2,
    max_calls: int = 5,
    seed: int = 0,
    epsilon: float = 0.0,
    floor: float = 1.0,
) -> SeatPlan:
    return plan_seats(
        members,
        nominees,
        pool,
        estimate=estimate,
        images=images,
        max_explorers=max_explorers,
        max_calls=max_calls,
        now=NOW,
        rng=random.Random(seed),
        epsilon=epsilon,
        floor=floor,
    )


def explorers(p: SeatPlan) -> list[str]:
    return [s.alias for s in p.seats if s.kind == "explorer"]


def only_explorer(candidate: Candidate, **kw: object) -> list[str]:
    """Explorers chosen when the pool holds just `candidate` and a member of another family."""
    return explorers(plan([Candidate("m", family="member-fam")], pool=[candidate], **kw))  # type: ignore[arg-type]


# --- explorer arithmetic -----------------------------------------------------------------


@pytest.mark.parametrize(("members", "expected"), [(0, 2), (1, 2), (2, 2), (3, 2), (4, 1), (5, 0), (7, 0)])
def test_explorer_count_defaults(members: int, expected: int) -> None:
    assert explorer_count(members) == expected
    assert members + expected <= max(5, members)


@pytest.mark.parametrize(
    ("seated", "max_explorers", "max_calls", "expected"),
    [(1, 1, 5, 1), (1, 3, 5, 3), (3, 3, 5, 2), (2, 2, 3, 1), (0, 4, 4, 4), (4, 2, 8, 2), (2, 0, 5, 0)],
)
def test_explorer_count_overrides(seated: int, max_explorers: int, max_calls: int, expected: int) -> None:
    assert explorer_count(seated, max_explorers, max_calls) == expected


@pytest.mark.parametrize(("n", "expected"), [(1, 2), (2, 2), (3, 2), (4, 1), (5, 0)])
def test_plan_fills_table(n: int, expected: int) -> None:
    members = [Candidate(f"m{i}", family=f"mf{i}") for i in range(n)]
    pool = [free(f"x{i}", family=f"xf{i}") for i in range(6)]
    p = plan(members, pool=pool)
    assert [s.alias for s in p.seats if s.kind == "member"] == [f"m{i}" for i in range(n)]
    assert len(explorers(p)) == expected


def test_plan_uses_collection_overrides() -> None:
    pool = [free(f"x{i}", family=f"xf{i}") for i in range(6)]
    p = plan([Candidate("m", family="mf")], pool=pool, max_explorers=3, max_calls=3)
    assert len(explorers(p)) == 2
    p = plan([Candidate("m", family="mf")], pool=pool, max_explorers=1, max_calls=9)
    assert len(explorers(p)) == 1


def test_seat_indices_per_kind() -> None:
    p = plan(
        [Candidate("a", family="fa"), Candidate("b", family="fb")],
        [Candidate("c", family="fc")],
        [free("x", family="fx"), free("y", family="fy")],
    )
    assert [(s.kind, s.index) for s in p.seats] == [
        ("member", 1),
        ("member", 2),
        ("nominee", 1),
        ("explorer", 1),
        ("explorer", 2),
    ]


def test_too_small_only_known_windows() -> None:
    members = [Candidate("big", window=200_000), Candidate("tiny", window=8_000), Candidate("unknown")]
    assert [c.alias for c in too_small(members, 10_000)] == ["tiny"]
    assert too_small(members, 8_000) == []


# --- one test per explorer filter ---------------------------------------------------------


def test_filter_baseline_candidate_is_seated() -> None:
    assert only_explorer(free("x")) == ["x"]


def test_filter_disabled() -> None:
    assert only_explorer(free("x", enabled=False)) == []


def test_filter_not_free() -> None:
    assert only_explorer(Candidate("x", free=False)) == []


def test_filter_free_unknown() -> None:
    assert only_explorer(Candidate("x", free=None)) == []


def test_filter_went_paid() -> None:
    assert only_explorer(free("x", went_paid=True)) == []


def test_filter_retiring() -> None:
    assert only_explorer(free("x", retiring=True)) == []


def test_filter_retired() -> None:
    assert only_explorer(free("x", retired=True)) == []


def test_filter_cooldown() -> None:
    assert only_explorer(free("x", cooldown_until=NOW + 30)) == []
    assert only_explorer(free("x", cooldown_until=NOW)) == ["x"]  # cooldown has ended
    assert only_explorer(free("x", cooldown_until=NOW - 30)) == ["x"]


def test_filter_window() -> None:
    assert only_explorer(free("x", window=4_000), estimate=5_000) == []
    assert only_explorer(free("x", window=5_000), estimate=5_000) == ["x"]
    assert only_explorer(free("x", window=None), estimate=5_000_000) == ["x"]


def test_filter_vision_when_images() -> None:
    member = Candidate("m", family="mf", vision=True)
    pool = [free("blind", vision=False), free("unsure", vision=None), free("sees", vision=True)]
    assert explorers(plan([member], pool=pool, images=True)) == ["sees"]
    # Without images, vision does not matter.
    assert sorted(explorers(plan([member], pool=pool, max_explorers=3, max_calls=9))) == [
        "blind",
        "sees",
        "unsure",
    ]


def test_filter_member_and_nominee_never_explore() -> None:
    members = [free("m", family="mf")]
    nominees = [free("n", family="nf")]
    pool = [free("m", family="mf"), free("n", family="nf"), free("x", family="xf")]
    p = plan(members, nominees, pool)
    assert explorers(p) == ["x"]
    assert Counter(s.alias for s in p.seats) == {"m": 1, "n": 1, "x": 1}


# --- families ----------------------------------------------------------------------------


def test_family_of_member_or_nominee_excluded_case_insensitively() -> None:
    members = [Candidate("gpt-a", family="OpenAI")]
    nominees = [Candidate("llama-a", family="llama")]
    pool = [free("gpt-b", family="openai"), free("llama-b", family="Llama"), free("q", family="qwen")]
    assert explorers(plan(members, nominees, pool)) == ["q"]


def test_no_two_explorers_of_one_family() -> None:
    pool = [free(f"q{i}", family="Qwen" if i % 2 else "qwen") for i in range(4)] + [free("g", family="gemma")]
    for seed in range(20):
        chosen = explorers(plan([Candidate("m", family="mf")], pool=pool, seed=seed))
        assert len(chosen) == 2
        assert "g" in chosen


def test_family_none_is_its_own_family() -> None:
    pool = [free("a"), free("b"), free("c", family="")]
    assert sorted(explorers(plan(pool=pool, max_explorers=3, max_calls=9))) == ["a", "b", "c"]
    # ...and an alias-as-family still collides with a member of the same name as family.
    assert explorers(plan([Candidate("m", family="A")], pool=[free("a")])) == []


def test_skipped_members_family_does_not_block() -> None:
    # Only seated members' families are excluded; a member that could not see is not seated.
    members = [Candidate("m-blind", family="mf", vision=False), Candidate("m2", family="other", vision=True)]
    p = plan(members, pool=[free("x", family="mf", vision=True)], images=True)
    assert explorers(p) == ["x"]


# --- staleness ---------------------------------------------------------------------------


def test_staleness_never_seated_first_then_oldest() -> None:
    pool = [
        free("recent", family="f1", last_seated=NOW - 60),
        free("old", family="f2", last_seated=NOW - 86_400),
        free("never", family="f3"),
        free("older", family="f4", last_seated=NOW - 7 * 86_400),
    ]
    for seed in range(10):
        assert explorers(plan(pool=pool, max_explorers=4, max_calls=4, seed=seed)) == [
            "never",
            "older",
            "old",
            "recent",
        ]


def test_staleness_with_recorded_history() -> None:
    # Seat panels one after another, recording when each model sat: every model sits
    # once before anyone sits twice.
    names = [f"m{i}" for i in range(6)]
    last: dict[str, float] = {}
    order: list[str] = []
    rng = random.Random(3)
    for step in range(6):
        now = NOW + step * 60
        pool = [free(n, family=n, last_seated=last.get(n)) for n in names]
        p = plan_seats([], [], pool, estimate=1, images=False, max_explorers=2, max_calls=2, now=now, rng=rng)
        for alias in explorers(p):
            last[alias] = now
            order.append(alias)
    assert sorted(order[:6]) == names
    assert sorted(order[6:]) == names


def test_ties_random_but_seeded() -> None:
    pool = [free(f"x{i}", family=f"f{i}") for i in range(8)]
    first_picks = {tuple(explorers(plan(pool=pool, seed=s))) for s in range(30)}
    assert len(first_picks) > 5  # ties really are broken at random
    for seed in range(5):
        assert explorers(plan(pool=pool, seed=seed)) == explorers(plan(pool=pool, seed=seed))
        # ...and do not depend on the order the pool arrives in.
        assert explorers(plan(pool=pool, seed=seed)) == explorers(plan(pool=pool[::-1], seed=seed))


def test_epsilon_zero_ignores_evidence() -> None:
    plain = [free(f"x{i}", family=f"f{i}") for i in range(6)]
    judged = [free(f"x{i}", family=f"f{i}", useful=50 * (i == 5), not_useful=50 * (i != 5)) for i in range(6)]
    for seed in range(20):
        assert explorers(plan(pool=plain, seed=seed)) == explorers(plan(pool=judged, seed=seed))


def test_epsilon_one_picks_best_evidence() -> None:
    pool = [
        free("stale-bad", family="f1", useful=1, not_useful=60),
        free("best", family="f2", last_seated=NOW - 10, useful=60, not_useful=2),
        free("meh", family="f3", useful=20, not_useful=30),
        free("bad", family="f4", useful=2, not_useful=60),
    ]
    for seed in range(50):
        chosen = explorers(plan(pool=pool, seed=seed, epsilon=1.0, max_explorers=2, max_calls=2))
        assert chosen[0] == "best"
        assert chosen[1] == "meh"
    # With epsilon 0 staleness alone decides: "best" was seated most recently, so last.
    assert explorers(plan(pool=pool, max_explorers=4, max_calls=4))[-1] == "best"


def test_epsilon_breaks_staleness_ties_by_evidence() -> None:
    # Tied on staleness; a small epsilon rarely exploits, but the tie-break is a Thompson draw.
    pool = [
        free("good", family="f1", useful=80, not_useful=2),
        free("poor", family="f2", useful=2, not_useful=80),
    ]
    wins = Counter(explorers(plan(pool=pool, seed=s, epsilon=1e-9, max_explorers=1, max_calls=1))[0] for s in range(40))
    assert wins == {"good": 40}


def test_epsilon_is_the_share_of_picks_taken_from_staleness() -> None:
    # Staleness says "stale" (never seated); the evidence says "best". With epsilon 0.2 about a
    # fifth of the picks go to the Thompson draw, which all but always names "best".
    pool = [
        free("stale", family="f1", useful=1, not_useful=40),
        free("best", family="f2", last_seated=NOW - 10, useful=40, not_useful=1),
        free("fresh", family="f3", last_seated=NOW - 5, useful=1, not_useful=40),
    ]
    picks = Counter(
        explorers(plan(pool=pool, seed=s, epsilon=0.2, max_explorers=1, max_calls=1))[0] for s in range(1000)
    )
    assert set(picks) == {"stale", "best"}
    assert 170 <= picks["best"] <= 230  # 218 with these seeds; binomial(1000, 0.2) sd ≈ 13


def test_epsilon_deterministic_for_seed() -> None:
    pool = [free(f"x{i}", family=f"f{i}", useful=i, not_useful=5 - i) for i in range(6)]
    for seed in range(10):
        a = explorers(plan(pool=pool, seed=seed, epsilon=0.3))
        assert a == explorers(plan(pool=pool, seed=seed, epsilon=0.3))


def test_epsilon_out_of_range() -> None:
    with pytest.raises(ValueError):
        plan(pool=[free("x")], epsilon=1.5)


# --- members and nominees ----------------------------------------------------------------


def test_nominee_dedupe() -> None:
    members = [Candidate("a", family="fa"), Candidate("b", family="fb")]
    nominees = [Candidate("b", family="fb"), Candidate("c", family="fc"), Candidate("c", family="fc")]
    p = plan(members, nominees)
    assert p.seats == (Seat("member", 1, "a"), Seat("member", 2, "b"), Seat("nominee", 1, "c"))
    assert p.skipped == ()


def test_nominees_never_take_an_explorer_seat() -> None:
    pool = [free(f"x{i}", family=f"xf{i}") for i in range(5)]
    members = [Candidate(f"m{i}", family=f"mf{i}") for i in range(3)]
    p = plan(members, [Candidate("n", family="nf")], pool)
    assert len(explorers(p)) == 2  # min(2, 5 - 3 members): the nominee is the caller's extra call
    p = plan(members, [Candidate("n1", family="nf1"), Candidate("n2", family="nf2")], pool)
    assert len(explorers(p)) == 2
    four = [Candidate(f"m{i}", family=f"mf{i}") for i in range(4)]
    assert len(explorers(plan(four, [Candidate("n", family="nf")], pool))) == 1


def test_image_skips_with_both_reasons() -> None:
    members = [
        Candidate("sees", family="f1", vision=True),
        Candidate("blind", family="f2", vision=False),
        Candidate("unknown", family="f3", vision=None),
    ]
    nominees = [
        Candidate("nom-blind", family="f4", vision=False),
        Candidate("nom-sees", family="f5", vision=True),
    ]
    p = plan(members, nominees, [free("x", family="fx", vision=True)], images=True)
    assert [(s.kind, s.index, s.alias) for s in p.seats] == [
        ("member", 1, "sees"),
        ("nominee", 1, "nom-sees"),
        ("explorer", 1, "x"),
    ]
    assert p.skipped == (
        Skipped("member", "blind", "cannot take images"),
        Skipped("member", "unknown", "not known to take images"),
        Skipped("nominee", "nom-blind", "cannot take images"),
    )


def test_image_skips_count_only_seated_for_explorers() -> None:
    members = [Candidate(f"b{i}", family=f"bf{i}", vision=False) for i in range(4)] + [
        Candidate("s", family="sf", vision=True)
    ]
    pool = [free(f"x{i}", family=f"xf{i}", vision=True) for i in range(4)]
    p = plan(members, pool=pool, images=True)
    assert len(explorers(p)) == 2  # one seated member → two explorers, not zero
    assert len(p.skipped) == 4


def test_nominated_member_skipped_once() -> None:
    members = [Candidate("blind", vision=False)]
    p = plan(members, [Candidate("blind", vision=False)], images=True)
    assert p.skipped == (Skipped("member", "blind", "cannot take images"),)
    assert p.seats == ()


def test_a_retired_member_keeps_its_seat_marked_and_leaves_its_call_to_an_explorer() -> None:
    members = [Candidate(f"m{i}", family=f"mf{i}") for i in range(4)] + [Candidate("r", family="rf", retired=True)]
    pool = [free("x1", family="xf1"), free("x2", family="xf2", last_seated=NOW - 10), free("same", family="rf")]
    p = plan(members, [Candidate("n", family="nf", retired=True)], pool=pool)
    assert [s for s in p.seats if s.kind != "explorer"] == [
        *(Seat("member", i + 1, f"m{i}") for i in range(4)),
        Seat("member", 5, "r", retired=True),
        Seat("nominee", 1, "n", retired=True),
    ]
    # Four members asked: one explorer (five calls), never of the retired member's family.
    assert explorers(p) == ["x1"]


# --- the focus seats (top-two Thompson) and the staleness floor ----------------------------


def close_pool() -> list[Candidate]:
    """A best and a close runner-up, three clearly bad models; the bad ones are the stalest."""
    return [
        free("best", family="f1", last_seated=NOW - 1, useful=60, not_useful=40),
        free("runner", family="f2", last_seated=NOW - 2, useful=55, not_useful=45),
        *(free(f"bad{i}", family=f"b{i}", last_seated=NOW - 100 - i, useful=10, not_useful=90) for i in range(3)),
    ]


def test_focus_seats_go_to_the_leader_and_its_challenger() -> None:
    seated = Counter()
    for seed in range(200):
        chosen = explorers(plan(pool=close_pool(), seed=seed, floor=0.0))
        assert len(chosen) == 2 and len(set(chosen)) == 2
        seated.update(chosen)
    # 0.60 and 0.55 overlap: both are contenders; the bad models' intervals lie far below.
    assert seated["best"] + seated["runner"] >= 390, seated
    assert seated["best"] >= 150 and seated["runner"] >= 150, seated


def test_one_focus_seat_is_the_leader_or_a_challenger_at_even_odds() -> None:
    pool = [
        free("best", family="f1", useful=900, not_useful=100),  # far ahead: every draw leads
        free("second", family="f2", useful=500, not_useful=500),
        free("third", family="f3", useful=100, not_useful=900),
    ]
    seated = Counter(explorers(plan(pool=pool, seed=s, floor=0.0, max_explorers=1, max_calls=1))[0] for s in range(400))
    # The challenger is the best of the rest when no re-draw dethrones the leader.
    assert set(seated) == {"best", "second"}
    assert 160 <= seated["best"] <= 240, seated


def test_the_floor_seats_go_stalest_first() -> None:
    # With floor 0.4 each seat is the floor's 40% of the time, and a floor seat takes the stalest:
    # bad2 sits when either seat is the floor's, 1 - 0.6^2 = 64% of panels.
    panels = 1000
    stalest = sum("bad2" in explorers(plan(pool=close_pool(), seed=s, floor=0.4)) for s in range(panels))
    assert 0.58 * panels <= stalest <= 0.70 * panels, stalest


def test_floor_one_is_the_stalest_first_rule() -> None:
    for seed in range(30):
        kept = plan(pool=close_pool(), seed=seed, epsilon=0.2)
        assert explorers(plan(pool=close_pool(), seed=seed, epsilon=0.2, floor=1.0)) == explorers(kept)
    assert explorers(plan(pool=close_pool(), floor=1.0)) == ["bad2", "bad1"]


def test_focus_seats_keep_families_apart_and_leave_spares() -> None:
    pool = [
        free("best", family="same", useful=90, not_useful=10),
        free("twin", family="same", useful=89, not_useful=11),
        free("other", family="else", useful=40, not_useful=60),
        free("third", family="third", useful=10, not_useful=90),
    ]
    for seed in range(50):
        p = plan([Candidate("m", family="member-fam")], pool=pool, seed=seed, floor=0.0)
        chosen = explorers(p)
        assert len({s.family for s in p.seats if s.kind == "explorer"}) == 2
        assert not {"best", "twin"} <= set(chosen)
        assert p.spares and not {s.alias for s in p.spares} & set(chosen)


def test_a_floor_out_of_range_is_refused() -> None:
    with pytest.raises(ValueError, match="floor must be in"):
        plan(pool=close_pool(), floor=1.5)


def test_focus_and_floor_together_favour_contenders_and_starve_no_one() -> None:
    # Panels in turn, verdicts right after by hidden rates: a small run of the simulation.
    rates = {"best": 0.6, "runner": 0.55, **{f"mid{i}": 0.45 for i in range(3)}, **{f"bad{i}": 0.3 for i in range(4)}}
    counts = {alias: [0, 0] for alias in rates}
    last: dict[str, float] = {}
    rng = random.Random(7)
    seated = Counter()
    for panel in range(1500):
        pool = [free(a, family=a, last_seated=last.get(a), useful=counts[a][0], not_useful=counts[a][1]) for a in rates]
        chosen = explorers(plan(pool=pool, seed=panel, floor=0.4, epsilon=0.2))
        for alias in chosen:
            last[alias] = NOW + panel
            counts[alias][0 if rng.random() < rates[alias] else 1] += 1
            if panel >= 1000:
                seated[alias] += 1
    fair = 2 * 500 / len(rates)
    assert all(seated[a] / fair <= 0.8 for a in rates if rates[a] <= 0.35), seated
    assert min(seated[a] for a in rates) / fair >= 0.25, seated
    assert (seated["best"] + seated["runner"]) / (2 * fair) >= 1.5, seated
