"""Evidence from seat rows (pure): standings, pairwise strengths, ranking, the pick and pinned roles."""

from __future__ import annotations

import hashlib
import random

import pytest

from benchwarmers.bench.evidence.board import (
    build_board,
    check_shape,
    evidence_line,
    panel_judgements,
    prompt_hash,
    since_days,
    standing_of,
)
from benchwarmers.bench.evidence.posterior import Best
from benchwarmers.bench.evidence.primary import Primary, primaries, primary_map
from benchwarmers.bench.evidence.stats import Judged, bootstrap_bt, bradley_terry, pairwise_outcomes
from benchwarmers.bench.snapshot import Snapshot
from benchwarmers.errors import InvalidRequest
from tests.support.evidence_rows import row


def test_standing_counts_every_column() -> None:
    rows = [
        row("m", "p1", True, real=("a", "b"), seconds=2.0, at=10),
        row("m", "p2", False, false=("x",), seconds=4.0, at=20, judged_at=95),
        row("m", "p3", True, real=("c",), false=("y", "z"), seconds=9.0, at=30, judged_at=90),
        row("m", "p4", None, seconds=3.0, at=40),  # answered, awaiting a verdict
        row("m", "p5", None, status="empty", seconds=0.5, at=50),  # empty: not owed
        {**row("m", "p6", None, status="error", seconds=120.0, at=60), "error_kind": "timeout"},  # nothing to judge
    ]
    s = standing_of("m", "review", rows)
    assert (s.seats, s.verdicts, s.useful, s.rate) == (6, 3, 2, 2 / 3)
    # Wilson 2/3: centre (2/3 + z²/6) / (1 + z²/3), half z·√(2/27 + z²/36) / (1 + z²/3).
    assert (round(s.low, 4), round(s.high, 4)) == (0.2077, 0.9385)
    assert s.maturity == "preliminary"
    assert s.real_per_answer == 1.0  # 3 real claims over 3 judged answers
    assert s.false_per_answer == 1.0
    assert (s.awaiting, s.errors, s.empties) == (1, 1, 1)
    assert s.median_seconds == 3.5  # ok seats only: 2, 3, 4, 9
    assert s.p90_seconds == 9.0  # nearest rank: the 4th of 4
    assert (s.error_kinds, s.error_rate, s.errors_text) == ((("timeout", 1),), 1 / 6, "1 of 6 (17%): 1 timeout")
    assert (s.last_seated, s.last_judged) == (60, 95)


def test_standing_without_verdicts() -> None:
    s = standing_of("m", "code", [row("m", "p1", None, status="error")])
    assert (s.verdicts, s.rate, s.low, s.high, s.maturity) == (0, None, 0.0, 1.0, "none")
    assert (s.real_per_answer, s.false_per_answer, s.median_seconds, s.last_judged) == (None, None, None, None)
    assert s.public(1)["strength_interval"] is None


def test_panel_judgements_compare_within_each_panel_only() -> None:
    rows = [
        row("a", "p1", True),
        row("b", "p1", False),
        row("c", "p1", None),  # unjudged seats take no part
        row("a", "p2", True, false=("x",)),
        row("b", "p2", True),
        row("a", "p3", True, shape="code"),
        row("b", "p4", False, shape="code"),
    ]
    judged = panel_judgements(rows)
    assert judged == {
        "review": [[Judged("a", True, 0), Judged("b", False, 0)], [Judged("a", True, 1), Judged("b", True, 0)]],
        "code": [[Judged("a", True, 0)], [Judged("b", False, 0)]],
    }
    assert pairwise_outcomes(judged["review"]) == [("a", "b"), ("b", "a")]
    assert pairwise_outcomes(judged["code"]) == []


def test_board_ranks_by_lower_bound_with_strengths_beside() -> None:
    rows = []
    for i in range(6):  # a useful 6/6, b 3/6, c 0/6, all in the same panels
        rows += [row("a", f"p{i}", True), row("b", f"p{i}", i < 3), row("c", f"p{i}", False)]
    rows.append(row("d", "p9", None))  # seated, never judged
    board = build_board("review", rows, pickable={"a", "b", "c", "d"})
    assert [s.alias for s in board.standings] == ["a", "b", "c", "d"]
    assert (board.panels, board.judged_panels) == (7, 6)
    outcomes = pairwise_outcomes(panel_judgements(rows)["review"])
    assert board.comparisons == len(outcomes) == 3 + 6 + 3  # a>b ×3 (b useful ties a), a>c ×6, b>c ×3
    point = bradley_terry(outcomes)
    intervals = bootstrap_bt(sorted(outcomes), random.Random(0), samples=200)
    for s in board.standings[:3]:
        assert s.strength == point[s.alias]
        assert (s.strength_low, s.strength_high) == intervals[s.alias]
    assert board.standings[0].strength > board.standings[1].strength > board.standings[2].strength
    assert board.standings[3].strength is None
    assert (board.pick, board.pinned, board.primary, board.primary_by) == ("a", None, "a", "evidence")
    # 6/6 and 3/6 overlap, and 3/6 and 0/6, but 6/6 and 0/6 do not: shared ranks, none for the unjudged.
    assert [(s.rank_range, s.rank_text) for s in board.standings] == [
        ((1, 2), "1–2"), ((1, 3), "1–3"), ((2, 3), "2–3"), (None, "–")
    ]  # fmt: skip
    public = board.public()
    assert public["models"][0] == {
        "rank": 1,
        "alias": "a",
        "seats": 6,
        "verdicts": 6,
        "sources": {"human": 6},
        "useful": 6,
        "rate": 1.0,
        "interval": [0.6097, 1.0],
        "maturity": "preliminary",
        "real_per_answer": 0.0,
        "false_per_answer": 0.0,
        "awaiting": 0,
        "errors": 0,
        "error_rate": 0.0,
        "errors_by_kind": {},
        "empties": 0,
        "truncated": 0,
        "median_seconds": 1.0,
        "p90_seconds": 1.0,
        "rank_range": [1, 2],
        "last_seated": 100.0,
        "last_judged": 101.0,
        "strength": round(point["a"], 3),
        "strength_interval": [round(intervals["a"][0], 3), round(intervals["a"][1], 3)],
        # No change was detected: the current epoch is the whole record.
        "current": {"useful": 6, "verdicts": 6, "rate": 1.0, "interval": [0.6097, 1.0]},
        "changed": None,
        "listing_changed": None,
    }
    assert public["models"][3]["rank"] is None and public["models"][3]["verdicts"] == 0  # unjudged: no rank


def test_the_only_judged_model_gets_no_rank_above_the_unjudged() -> None:
    # 0/1 beside two unjudged models: nothing to rank it against, so no "rank 1".
    rows = [row("a", "p1", False), row("b", "p1", None), row("c", "p1", None)]
    board = build_board("review", rows, pickable={"a", "b", "c"})
    assert [(s.alias, s.rank_range, s.rank_text) for s in board.standings] == [
        ("a", None, "–"), ("b", None, "–"), ("c", None, "–")
    ]  # fmt: skip
    assert [(m["alias"], m["rank"], m["rank_range"]) for m in board.public()["models"]] == [
        ("a", None, None), ("b", None, None), ("c", None, None)
    ]  # fmt: skip
    # A second judged model gives the evidence something to rank: both, and only they.
    board = build_board("review", [*rows, row("b", "p2", True)], pickable={"a", "b", "c"})
    assert [(m["alias"], m["rank"], m["rank_range"]) for m in board.public()["models"]] == [
        ("b", 1, [1, 2]), ("a", 2, [1, 2]), ("c", None, None)
    ]  # fmt: skip


def test_pick_follows_the_interval_not_a_verdict_gate_then_pinned_wins_when_usable() -> None:
    rows = [row("steady", f"s{i}", i < 24) for i in range(40)]  # settled, 24/40, low ≈ 0.45
    rows += [row("lucky", f"l{i}", True) for i in range(9)]  # preliminary, 9/9, low ≈ 0.70
    rows += [row("gone", f"g{i}", True) for i in range(50)]  # settled and best, but cannot sit
    board = build_board("review", rows, pickable={"steady", "lucky"})
    assert [s.alias for s in board.standings] == ["gone", "lucky", "steady"]  # ranks show every model
    # The old rule picked the settled "steady"; 9/9's interval lies above 24/40's: it is the pick.
    assert board.pick == "lucky"
    assert board.best is not None and board.public()["best"] == board.best.as_json()
    assert (board.best.alias, board.best.separated, board.best.tied) == ("lucky", True, ())
    pinned = build_board("review", rows, pickable={"steady", "lucky"}, pinned="steady")
    assert (pinned.pick, pinned.primary, pinned.primary_by) == ("lucky", "steady", "pinned")
    unusable = build_board("review", rows, pickable={"steady", "lucky"}, pinned="gone")
    assert (unusable.pinned, unusable.primary, unusable.primary_by) == ("gone", "lucky", "evidence")
    empty = build_board("design", [], pickable={"steady"})
    assert (empty.standings, empty.pick, empty.primary, empty.primary_by) == ((), None, None, None)


def test_primaries_from_counts_and_pins() -> None:
    counts = {
        ("a", "code"): (32, 40),  # settled, low ≈ 0.65
        ("b", "code"): (9, 9),  # preliminary, low ≈ 0.70: no verdict gate, it leads (the old rule chose a)
        ("c", "review"): (2, 3),
        ("off", "review"): (30, 30),  # not usable
    }
    usable = {"a", "b", "c"}
    assert primaries(counts, {}, usable) == {"code": "b", "review": "c"}
    assert primaries(counts, {"code": "a", "design": "c"}, usable) == {"code": "a", "review": "c", "design": "c"}
    assert primaries(counts, {"review": "off"}, usable) == {"code": "b", "review": "c"}
    found = primary_map(counts, {"design": "c"}, usable)
    # 9/9 and 32/40 overlap: the pick is a tie and says so; a pin says it is pinned.
    assert found["code"] == Primary("b", False, Best("b", False, ("a",)))
    assert found["code"].describe() == "b (evidence; tied with a (intervals overlap))"
    assert found["review"] is not None and found["review"].describe() == "c (evidence)"
    assert found["design"] is not None and found["design"].describe() == "c (pinned)"


def test_shape_and_window_checks() -> None:
    snapshot = Snapshot(version=1, shapes={"general": "", "review": ""})
    check_shape(snapshot, "review")
    check_shape(snapshot, "legacy", seen={"legacy"})  # evidence for a shape since removed still shows
    with pytest.raises(InvalidRequest, match=r"shape 'nope' is not known\. Shapes are: general, review"):
        check_shape(snapshot, "nope")
    assert since_days(None) is None
    assert since_days(2, now=1_000_000.0) == 1_000_000.0 - 2 * 86_400
    with pytest.raises(InvalidRequest, match="days must be a positive number"):
        since_days(0)


def test_prompt_hash_and_export_line() -> None:
    messages = [{"role": "user", "content": "hi"}]
    expected = hashlib.sha256(b'[{"content":"hi","role":"user"}]').hexdigest()
    assert prompt_hash({"model": "bench/x", "messages": messages}) == expected
    assert prompt_hash({"messages": [{"content": "hi", "role": "user"}], "temperature": 1}) == expected
    line = evidence_line(
        {
            "panel_id": "p1",
            "request": {"messages": messages},
            "shape": "review",
            "call": "p1.member1",
            "seat": "member",
            "alias": "fake/a",
            "status": "ok",
            "answer": "it is 4",
            "useful": False,
            "note": "wrong",
            "real": [],
            "false_claims": ["2+2=5"],
            "judged_at": 5.0,
        }
    )
    assert line == {
        "panel": "p1",
        "prompt_hash": expected,
        "shape": "review",
        "call": "p1.member1",
        "seat": "member",
        "alias": "fake/a",
        "status": "ok",
        "answer": "it is 4",
        "verdict": "not useful",
        "source": "human",
        "note": "wrong",
        "claims": {"real": [], "false": ["2+2=5"]},
        "judged_at": 5.0,
    }
