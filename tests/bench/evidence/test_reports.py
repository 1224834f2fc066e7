"""Honesty reports (pure): exposure, bench vs best, verdicts per key, length bias."""

from __future__ import annotations

import pytest

from benchwarmers.bench.evidence.reports import (
    _compare,
    bench_vs_best,
    build_report,
    explorable,
    explorer_eligible,
    exposure,
    length_bias,
    two_proportion_z,
    verdicts_by_key,
)
from benchwarmers.bench.snapshot import ModelView, Snapshot
from benchwarmers.nouns.gateway import GatewaySettings
from tests.support.evidence_rows import row


def explorer(alias: str, endpoint: str) -> dict:
    return {**row(alias, f"p-{alias}"), "seat": "explorer", "endpoint": endpoint}


def model(
    alias: str, *, enabled: bool = True, free: bool | None = True, gone: bool = False, family: str | None = None
) -> ModelView:
    facts: dict = {} if free is None else {"free": (free, "listing")}
    if family is not None:
        facts["family"] = (family, "user")
    return ModelView(
        pk=1,
        alias=alias,
        endpoint=alias.split("/")[0],
        model_id=alias.split("/")[1],
        enabled=enabled,
        gone=gone,
        cooldown_until=None,
        failure_streak=0,
        facts=facts,
    )


def test_explorer_eligible_is_enabled_free_not_retiring_not_went_paid() -> None:
    models = [
        model("e1/ok"),
        model("e2/ok2"),
        model("e1/disabled", enabled=False),
        model("e1/paid", free=False),
        model("e1/unknown", free=None),
        model("e1/gone", gone=True),
        model("e1/went-paid"),
    ]
    snapshot = Snapshot(version=1, models={m.alias: m for m in models}, went_paid=frozenset({"e1/went-paid"}))
    assert explorer_eligible(snapshot) == {"e1/ok": "e1", "e2/ok2": "e2"}


def test_exposure_flags_models_and_endpoints_below_half_their_fair_share() -> None:
    eligible = {"a": "e1", "b": "e1", "c": "e2", "d": "e2"}
    rows = (
        [explorer("a", "e1")] * 5
        + [explorer("b", "e1")] * 3
        + [explorer("c", "e2")] * 2
        + [explorer("x", "e3")] * 2  # not eligible any more (disabled, say)
        + [{**row("d", "p-m"), "endpoint": "e2"}]  # a member seat is not an explorer seat
    )
    shown = exposure(rows, eligible)
    assert shown["explorer_seats"] == 12
    assert shown["fair_share"] == 0.25
    assert [(m["alias"], m["seats"], m["share"], m["eligible"], m["flagged"]) for m in shown["models"]] == [
        ("a", 5, 0.4167, True, False),
        ("b", 3, 0.25, True, False),
        ("c", 2, 0.1667, True, False),
        ("x", 2, 0.1667, False, False),
        ("d", 0, 0.0, True, True),
    ]
    assert shown["endpoints"] == [
        {"endpoint": "e1", "eligible_models": 2, "seats": 8, "share": 0.6667, "fair_share": 0.5, "flagged": False},
        {"endpoint": "e2", "eligible_models": 2, "seats": 2, "share": 0.1667, "fair_share": 0.5, "flagged": True},
        {"endpoint": "e3", "eligible_models": 0, "seats": 2, "share": 0.1667, "fair_share": 0.0, "flagged": False},
    ]
    assert shown["warnings"] == [
        "exposure: d got 0% of explorer seats, under half its fair share of 25%",
        "exposure: endpoint e2 got 17% of explorer seats, under half its fair share of 50%",
    ]


def test_exposure_without_explorer_seats_flags_nothing() -> None:
    shown = exposure([], {"a": "e1"})
    assert (shown["explorer_seats"], shown["warnings"]) == (0, [])
    assert shown["models"] == [
        {
            "alias": "a",
            "endpoint": "e1",
            "seats": 0,
            "share": 0.0,
            "eligible": True,
            "can_explore": True,
            "member_seats": 0,
            "flagged": False,
        }
    ]


def test_a_member_of_every_collection_it_could_explore_is_not_starved() -> None:
    # The case: a collection's only member sat every panel and was called starved.
    models = {a: model(a) for a in ("e1/solo", "e1/x", "e1/y")}
    models["e1/kin"] = model("e1/kin", family="solo-family")
    models["e1/solo"] = model("e1/solo", family="solo-family")
    collections = {"one": {"name": "one", "members": ["e1/solo"], "max_explorers": 1, "max_calls": None}}
    gateway = GatewaySettings(max_explorers=2, max_calls=5)
    snapshot = Snapshot(version=1, models=models, collections=collections, gateway=gateway)  # type: ignore[arg-type]
    # kin shares the member's family: seating never seats it beside solo either.
    assert explorable(snapshot) == {"e1/solo": 0, "e1/x": 1, "e1/y": 1, "e1/kin": 0}
    rows = [{**row("e1/solo", f"p{i}"), "endpoint": "e1"} for i in range(10)]
    rows += [explorer("e1/x", "e1")] * 5 + [explorer("e1/y", "e1")] * 5
    shown = exposure(rows, explorer_eligible(snapshot), explorable(snapshot))
    assert (shown["eligible_models"], shown["fair_share"], shown["warnings"]) == (2, 0.5, [])
    assert [(m["alias"], m["seats"], m["member_seats"], m["can_explore"], m["flagged"]) for m in shown["models"]] == [
        ("e1/x", 5, 0, True, False),
        ("e1/y", 5, 0, True, False),
        ("e1/kin", 0, 0, False, False),
        ("e1/solo", 0, 10, False, False),
    ]
    # Without the collections' view, the old report flagged both.
    assert exposure(rows, explorer_eligible(snapshot))["warnings"] == [
        "exposure: e1/kin got 0% of explorer seats, under half its fair share of 25%",
        "exposure: e1/solo got 0% of explorer seats, under half its fair share of 25%",
    ]


def test_bench_beats_its_best_model_when_any_seat_is_useful_far_more_often() -> None:
    rows = []
    for i in range(30):  # every panel has one useful seat; each model alone is useful half the time
        rows += [row("A", f"p{i}", i % 2 == 0), row("B", f"p{i}", i % 2 == 1)]
    rows.append(row("A", "unjudged", None))
    [entry] = bench_vs_best(rows, ["review"], {"A", "B"})
    assert entry == {
        "shape": "review",
        "judged_panels": 30,
        "any_useful": 30,
        "rate": 1.0,
        "interval": [0.8865, 1.0],
        "best": "A",  # tied with B on every count: the alias decides, and the tie is said
        "best_detail": {"alias": "A", "separated": False, "tied": ["B"], "p_best": 0.50975},
        "best_verdicts": 30,
        "best_rate": 0.5,
        "best_interval": [0.3315, 0.6685],
        "verdict": "bench ahead",
    }
    [nothing] = bench_vs_best([], ["design"], {"A"})
    assert (nothing["judged_panels"], nothing["rate"], nothing["best"], nothing["verdict"]) == (
        0,
        None,
        None,
        "not enough evidence",
    )


def test_compare_needs_intervals_apart() -> None:
    assert _compare((0.8, 0.95), (0.3, 0.7)) == "bench ahead"
    assert _compare((0.1, 0.3), (0.4, 0.7)) == "best model ahead"
    assert _compare((0.5, 0.8), (0.6, 0.9)) == "no clear difference"


def judged_by(judge: str, caller: str = "local") -> dict:
    return {**row("a", f"p-{judge}", True), "judge": judge, "caller": caller}


def test_verdicts_per_key_warn_when_one_key_dominates() -> None:
    rows = [judged_by("alice")] * 3 + [judged_by("bob", caller="bob")] + [row("a", "p", None)]
    report = verdicts_by_key(rows)
    assert report["keys"] == [
        {"key": "alice", "verdicts": 3, "share": 0.75},
        {"key": "bob", "verdicts": 1, "share": 0.25},
    ]
    assert (report["verdicts"], report["callers"]) == (4, 3)  # local asked, alice and bob judged
    assert report["warnings"] == [
        "verdicts: key alice gave 75% of the verdicts (3 of 4); the rankings lean on one judge"
    ]
    assert verdicts_by_key([judged_by("alice"), judged_by("bob")])["warnings"] == []  # exactly half is fine
    # A bench with one caller is not warned about its only judge.
    assert verdicts_by_key([judged_by("local")] * 5)["warnings"] == []


def test_two_proportion_z_hand_values() -> None:
    # 8/10 vs 2/10: pooled 0.5, se = √(0.25 · 0.2), z = 0.6 / se.
    assert two_proportion_z(8, 10, 2, 10) == pytest.approx(2.683282, abs=1e-6)
    assert two_proportion_z(9, 10, 2, 10) == pytest.approx(3.146266, abs=1e-6)
    assert two_proportion_z(5, 5, 5, 5) == 0.0
    assert two_proportion_z(1, 0, 1, 2) == 0.0


def sized(length: int, useful: bool, panel: str, *, status: str = "ok") -> dict:
    return {**row("a", panel, useful, status=status), "length": length}


def test_length_bias_warns_only_on_a_large_significant_gap() -> None:
    long = [sized(900, i < 9, f"l{i}") for i in range(10)]
    short = [sized(100 + i, i < 2, f"s{i}") for i in range(10)]
    empties = [sized(0, False, f"e{i}", status="empty") for i in range(5)]  # never counted
    [entry] = length_bias(long + short + empties, ["review"])
    assert entry == {
        "shape": "review",
        "median_length": 504.5,
        "short": {"verdicts": 10, "useful": 2, "rate": 0.2},
        "long": {"verdicts": 10, "useful": 9, "rate": 0.9},
        "difference": 0.7,
        "z": 3.146,
        "warning": True,
    }
    # Too few verdicts in a half: no warning whatever the gap.
    [few] = length_bias(long[1:] + short[1:], ["review"])
    assert (few["long"]["verdicts"], few["warning"]) == (9, False)
    # A small gap is not worth a warning even when significant by luck.
    modest = [sized(900, i < 6, f"l{i}") for i in range(10)] + [sized(100, i < 5, f"s{i}") for i in range(10)]
    [small] = length_bias(modest, ["review"])
    assert (small["difference"], small["warning"]) == (0.1, False)
    # All answers the same length: nothing is long.
    [flat] = length_bias([sized(50, True, f"f{i}") for i in range(12)], ["review"])
    assert (flat["long"], flat["difference"], flat["warning"]) == (
        {"verdicts": 0, "useful": 0, "rate": None},
        None,
        False,
    )
    assert length_bias([row("a", "p", None)], ["review"]) == []


def test_build_report_gathers_every_warning() -> None:
    collections = {"c": {"name": "c", "members": ["e1/m"], "max_explorers": 1, "max_calls": 5}}
    snapshot = Snapshot(
        version=1,
        models={"e1/a": model("e1/a"), "e1/b": model("e1/b")},
        shapes={"review": ""},
        collections=collections,  # type: ignore[arg-type]
        gateway=GatewaySettings(max_explorers=2, max_calls=5),
    )
    rows = [{**explorer("e1/a", "e1"), "shape": "review"}] * 4
    rows += [{**sized(900, True, f"l{i}"), "alias": "e1/a"} for i in range(10)]
    rows += [{**sized(10, False, f"s{i}"), "alias": "e1/b"} for i in range(10)]
    report = build_report(rows, snapshot, 30, 123.0)
    assert (report["days"], report["since"]) == (30, 123.0)
    assert report["warnings"] == [
        "exposure: e1/b got 0% of explorer seats, under half its fair share of 50%",
        "length bias on review: long answers judged useful 100% of the time, short ones 0% (z = 4.47); "
        "judges may be rewarding length",
    ]
    assert [b["best"] for b in report["bench_vs_best"]] == ["e1/a"]
