"""Evidence arithmetic: Wilson, maturity, pairwise outcomes, Bradley–Terry, router pick."""

from __future__ import annotations

import math
import random

import pytest

from benchwarmers.bench.evidence.stats import (
    Cell,
    Judged,
    bootstrap_bt,
    bradley_terry,
    maturity,
    pairwise_outcomes,
    thompson_draw,
    wilson,
)

Z = 1.959964


# Values worked out by solving (p̂ − p)² = z²·p(1−p)/n as a quadratic in p,
# a different route from the centre ± half-width formula the module uses.
@pytest.mark.parametrize(
    ("k", "n", "low", "high"),
    [
        (8, 10, 0.4902, 0.9433),
        (0, 10, 0.0, 0.2775),
        (10, 10, 0.7225, 1.0),
        (1, 2, 0.0945, 0.9055),
        (45, 60, 0.6277, 0.8422),
    ],
)
def test_wilson_hand_values(k: int, n: int, low: float, high: float) -> None:
    got = wilson(k, n)
    assert round(got[0], 4) == low
    assert round(got[1], 4) == high


def test_wilson_zero_successes_upper_is_closed_form() -> None:
    # With k = 0 the upper bound is z² / (n + z²).
    assert wilson(0, 10)[1] == pytest.approx(Z * Z / (10 + Z * Z))


def test_wilson_no_trials_and_bad_input() -> None:
    assert wilson(0, 0) == (0.0, 1.0)
    with pytest.raises(ValueError):
        wilson(3, 2)
    with pytest.raises(ValueError):
        wilson(-1, 2)


@pytest.mark.parametrize(
    ("n", "label"),
    [
        (0, "none"),
        (1, "preliminary"),
        (9, "preliminary"),
        (10, "provisional"),
        (29, "provisional"),
        (30, "settled"),
        (500, "settled"),
    ],
)
def test_maturity(n: int, label: str) -> None:
    assert maturity(n) == label


def test_pairwise_outcomes_rules() -> None:
    panel = [
        Judged("a", useful=True, false_claims=0),
        Judged("b", useful=True, false_claims=2),
        Judged("c", useful=False, false_claims=0),
        Judged("d", useful=False, false_claims=5),
        Judged("e", useful=True, false_claims=0),
    ]
    got = set(pairwise_outcomes([panel]))
    assert got == {
        ("a", "b"),
        ("a", "c"),
        ("a", "d"),
        ("b", "c"),
        ("b", "d"),
        ("e", "b"),
        ("e", "c"),
        ("e", "d"),
    }
    # a and e tie (both useful, no false claims); c and d are both not useful: no pair.


def test_pairwise_outcomes_stay_within_a_panel() -> None:
    p1 = [Judged("a", True, 0)]
    p2 = [Judged("b", False, 0)]
    assert pairwise_outcomes([p1, p2]) == []
    assert pairwise_outcomes([[Judged("a", True, 0), Judged("b", False, 0)], p2]) == [("a", "b")]


def test_bradley_terry_two_models_closed_form() -> None:
    # Two models, A beats B w times and loses l times: the MLE ratio is w/l, so with
    # geometric mean 1 the log-strengths are ±ln(w/l)/2.
    outcomes = [("A", "B")] * 6 + [("B", "A")] * 2
    got = bradley_terry(outcomes, prior=0.0)
    assert got["A"] == pytest.approx(math.log(3) / 2, abs=1e-9)
    assert got["B"] == pytest.approx(-math.log(3) / 2, abs=1e-9)


def test_bradley_terry_balanced_cycle_is_all_equal() -> None:
    outcomes = [("A", "B"), ("B", "C"), ("C", "A")] * 3
    got = bradley_terry(outcomes, prior=0.0)
    for value in got.values():
        assert value == pytest.approx(0.0, abs=1e-9)


def test_bradley_terry_prior_keeps_undefeated_finite_and_shrinks() -> None:
    outcomes = [("A", "B")] * 5
    got = bradley_terry(outcomes)
    assert math.isfinite(got["A"]) and math.isfinite(got["B"])
    assert got["A"] > 0 > got["B"]
    assert got["A"] == pytest.approx(-got["B"])  # symmetric case stays centred
    mle = bradley_terry([("A", "B")] * 6 + [("B", "A")] * 2, prior=0.0)
    shrunk = bradley_terry([("A", "B")] * 6 + [("B", "A")] * 2, prior=0.5)
    assert 0 < shrunk["A"] < mle["A"]


def test_bradley_terry_normalised_and_ordered() -> None:
    outcomes = [("A", "B")] * 4 + [("B", "C")] * 4 + [("A", "C")] * 4 + [("C", "A"), ("B", "A")]
    got = bradley_terry(outcomes, models=["D"])
    assert sum(got.values()) == pytest.approx(0.0, abs=1e-9)
    assert got["A"] > got["B"] > got["C"]
    assert "D" in got
    assert bradley_terry([]) == {}


def test_bootstrap_contains_point_estimate_and_is_seeded() -> None:
    outcomes = [("A", "B")] * 8 + [("B", "A")] * 4 + [("B", "C")] * 7 + [("C", "B")] * 3 + [("A", "C")] * 5
    point = bradley_terry(outcomes)
    first = bootstrap_bt(outcomes, random.Random(7), samples=200)
    again = bootstrap_bt(outcomes, random.Random(7), samples=200)
    assert first == again
    for name, (low, high) in first.items():
        assert low <= point[name] <= high
        assert low < high


def test_cell_of_derives_interval_and_maturity() -> None:
    cell = Cell.of("m", "code", useful=8, verdicts=10)
    assert (round(cell.low, 4), round(cell.high, 4)) == (0.4902, 0.9433)
    assert cell.maturity == "provisional"
    assert cell.not_useful == 2
    assert cell.rate == 0.8


def test_thompson_draw_follows_evidence() -> None:
    rng = random.Random(1)
    strong = [thompson_draw(90, 10, rng) for _ in range(200)]
    weak = [thompson_draw(10, 90, rng) for _ in range(200)]
    assert min(strong) > max(weak)
    assert all(0.0 <= x <= 1.0 for x in strong + weak)
