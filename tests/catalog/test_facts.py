"""Fact precedence: override → learned → listing → models.dev; learned windows only lower."""

from __future__ import annotations

from typing import Any

import pytest

from benchwarmers.catalog.facts import FACTS, SOURCES, ListedModel, effective, free_from_prices, listed_facts


def test_vocabulary() -> None:
    assert FACTS == (
        "context_window",
        "output_cap",
        "input_kinds",
        "free",
        "price",
        "family",
        "deprecated",
        "rate_limits",
        "tags",
        "free_tier",
    )
    assert SOURCES == ("override", "learned", "headers", "listing", "free_tier", "models.dev")


def test_first_source_wins_and_missing_falls_through() -> None:
    facts = effective(
        {
            "override": {"input_kinds": ["image", "text"], "family": None},
            "listing": {"context_window": 131072, "family": "llama", "free": True},
            "models.dev": {
                "context_window": 128000,
                "output_cap": 8192,
                "input_kinds": ["text"],
                "free": False,
                "family": "llama-ish",
                "deprecated": "deprecated",
            },
        }
    )
    assert facts == {
        "context_window": (131072, "listing"),
        "output_cap": (8192, "models.dev"),
        "input_kinds": (["image", "text"], "override"),
        "free": (True, "listing"),
        "family": ("llama", "listing"),  # the override's None falls through
        "deprecated": ("deprecated", "models.dev"),
    }


def test_unknown_facts_are_absent() -> None:
    assert effective({}) == {}
    assert effective({"listing": {"context_window": None, "not_a_fact": 3}}) == {}


def test_false_is_a_value_not_a_gap() -> None:
    facts = effective({"listing": {"free": False}, "models.dev": {"free": True}})
    assert facts["free"] == (False, "listing")


@pytest.mark.parametrize(
    ("sources", "expected"),
    [
        # learned lower than the listing: it counts
        ({"learned": {"context_window": 8000}, "listing": {"context_window": 131072}}, (8000, "learned")),
        # learned higher or equal: windows learned from errors only ever lower
        ({"learned": {"context_window": 200000}, "listing": {"context_window": 131072}}, (131072, "listing")),
        ({"learned": {"context_window": 131072}, "listing": {"context_window": 131072}}, (131072, "listing")),
        # the next source that says anything is the one compared
        ({"learned": {"context_window": 9000}, "models.dev": {"context_window": 8192}}, (8192, "models.dev")),
        (
            {"learned": {"context_window": 9000}, "listing": {}, "models.dev": {"context_window": 65536}},
            (9000, "learned"),
        ),
        # nothing below to compare: the learned window is all we know
        ({"learned": {"context_window": 9000}}, (9000, "learned")),
        # the user's override beats a learned window, even a lower one
        ({"override": {"context_window": 32000}, "learned": {"context_window": 8000}}, (32000, "override")),
    ],
)
def test_learned_window_only_lowers(sources: dict[str, dict[str, Any]], expected: tuple[int, str]) -> None:
    assert effective(sources)["context_window"] == expected


def test_learned_other_facts_win_normally() -> None:
    facts = effective({"learned": {"free": False}, "listing": {"free": True}})
    assert facts["free"] == (False, "learned")


def test_unknown_source_raises() -> None:
    with pytest.raises(ValueError, match="unknown fact source"):
        effective({"listings": {"context_window": 1}})


@pytest.mark.parametrize(
    ("prompt", "completion", "free"),
    [(0.0, 0.0, True), (0.0, 1e-6, False), (2e-7, None, False), (0.0, None, None), (None, None, None)],
)
def test_free_from_prices(prompt: float | None, completion: float | None, free: bool | None) -> None:
    assert free_from_prices(prompt, completion) is free


def test_listed_facts_are_json_ready_and_sparse() -> None:
    model = ListedModel(
        model_id="m",
        context_window=8192,
        input_kinds=frozenset({"text", "image"}),
        price_prompt=0.0,
        price_completion=0.0,
        free=True,
        family="gemma",
    )
    assert listed_facts(model) == {
        "context_window": 8192,
        "input_kinds": ["image", "text"],
        "free": True,
        "price": {"prompt": 0.0, "completion": 0.0},
        "family": "gemma",
    }
    assert listed_facts(ListedModel(model_id="bare")) == {}
    assert model.vision is True
    assert ListedModel(model_id="bare").vision is None
    assert effective({"listing": listed_facts(model)})["price"] == (
        {"prompt": 0.0, "completion": 0.0},
        "listing",
    )
