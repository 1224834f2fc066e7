"""The one evidence rule (bench/evidence/posterior.py), tested directly: order, best, ties, P(best)."""

from __future__ import annotations

import random

import pytest

from benchwarmers.bench.evidence.posterior import (
    best_among,
    best_of,
    from_history,
    order_key,
    prob_best,
    prob_better,
    ranked,
    router_pick,
    tie_note,
)


def test_no_verdict_gate_a_clear_rate_beats_a_settled_poor_one():
    # The case: an always-seated member at 33/80 against a model at 21/26.
    counts = {"member": (33, 80), "better": (21, 26)}
    assert ranked(counts) == ["better", "member"]
    best = best_of(counts)
    assert best is not None and best.alias == "better" and best.separated and best.tied == ()


def test_order_is_the_interval_low_then_rate_then_evidence():
    assert order_key(0, 0) == (-0.0, -0.0, 0)
    # Same rate: more evidence has the higher lower bound.
    assert ranked({"few": (3, 4), "many": (75, 100)}) == ["many", "few"]
    # Unjudged models come last, in alias order.
    assert ranked({"b": (0, 0), "a": (0, 0), "c": (1, 2)}) == ["c", "a", "b"]


def test_overlapping_intervals_are_a_tie_and_say_so():
    counts = {"x": (60, 100), "y": (55, 100), "z": (10, 100)}
    best = best_of(counts)
    assert best is not None
    assert (best.alias, best.separated, best.tied) == ("x", False, ("y",))
    assert best.tie
    assert best.describe() == "x (tied with y)"


def test_probability_of_best_is_reported_and_can_separate():
    rng = random.Random(1)
    p = prob_best({"x": (600, 1000), "y": (500, 1000)}, rng)
    assert p["x"] > 0.999 and p["y"] < 0.001
    close = best_of({"x": (60, 100), "y": (55, 100)}, rng=random.Random(2))
    assert close is not None and close.tie and close.p_best is not None and 0.6 < close.p_best < 0.9
    assert close.describe() == f"x (P(best) = {close.p_best:.2f}; tied with y)"
    far = best_of({"x": (900, 1000), "y": (850, 1000)}, rng=random.Random(3))
    assert far is not None and far.separated and far.p_best == pytest.approx(1.0, abs=0.01)


def test_prob_best_is_deterministic_and_sums_to_one():
    counts = {"a": (3, 5), "b": (2, 5), "c": (0, 0)}
    first = prob_best(counts)
    assert first == prob_best(counts)
    assert sum(first.values()) == pytest.approx(1.0)


def test_no_judged_model_has_no_best():
    assert best_of({}) is None
    assert best_of({"a": (0, 0)}) is None


def test_best_among_keeps_given_order_for_the_unjudged():
    counts = {"m1": (1, 10), "m2": (8, 10)}
    assert best_among(["m3", "m1", "m2", "m4"], counts) == ["m2", "m1", "m3", "m4"]


def test_tie_note_names_the_overlap_only_for_the_first():
    counts = {"x": (6, 10), "y": (5, 10)}
    assert tie_note(["x", "y"], counts) == "; tied with y (intervals overlap)"
    assert tie_note(["x", "y"], {"x": (90, 100), "y": (10, 100)}) == ""


def test_router_pick_has_no_verdict_gate():
    # Moved from test_stats (the old rule preferred settled cells): now a 9/9 start (low ≈ 0.70)
    # leads a settled 32/40 (low ≈ 0.65), however few verdicts it has.
    counts = {"steady": (24, 40), "strong": (32, 40), "lucky": (9, 9), "mid": (15, 20), "new": (0, 0)}
    assert router_pick(counts) == "lucky"
    assert router_pick(counts, pinned="new") == "new"
    assert router_pick({"steady": (24, 40), "strong": (32, 40)}) == "strong"
    assert router_pick({"new": (0, 0)}) is None
    assert router_pick({}) is None
    # A tie in every figure goes to the alias, whatever the mapping's order.
    assert router_pick({"b-model": (30, 40), "a-model": (30, 40)}) == "a-model"
    assert router_pick({"a-model": (30, 40), "b-model": (30, 40)}) == "a-model"


def test_prob_better_is_exact():
    assert prob_better((5, 10), (5, 10)) == pytest.approx(0.5)
    assert prob_better((0, 0), (0, 0)) == pytest.approx(0.5)
    assert prob_better((60, 100), (55, 100)) + prob_better((55, 100), (60, 100)) == pytest.approx(1.0)
    # Against seeded draws of the same posteriors.
    rng = random.Random(7)
    n = 100_000
    drawn = sum(rng.betavariate(61, 41) > rng.betavariate(56, 46) for _ in range(n)) / n
    assert prob_better((60, 100), (55, 100)) == pytest.approx(drawn, abs=0.01)
    assert round(prob_better((60, 100), (55, 100)), 4) == 0.7616
    assert prob_better((21, 26), (33, 80)) > 0.999
    assert prob_better((126, 140), (100, 140)) > 0.99


def test_from_history_turns_not_useful_into_verdicts():
    history = {("a", "review"): (3, 1), ("a", "code"): (9, 9), ("b", "review"): (0, 2)}
    assert from_history(history, "review", ["a", "b", "c"]) == {"a": (3, 4), "b": (0, 2), "c": (0, 0)}
