"""A suite report's per-model rows (pure): every pair outcome counted, so the reviewer that flags everything,
the one that flags nothing and the one that flags only the fix are told apart though none gets a pair right."""

from __future__ import annotations

from typing import Any

from benchwarmers.bench.suite.report import model_rows
from benchwarmers.bench.suite.tasks import Task, load_tasks, select

TASKS: dict[str, Task] = {t.id: t for t in select(load_tasks(), ["rebench-*"])}
BUGS = sorted(t.id for t in TASKS.values() if t.kind == "bug")
CONTROLS = {t.pair: t.id for t in TASKS.values() if t.kind == "control"}


def result(alias: str, task: str, *, hit: bool = False, flagged: bool = False, attempt: int = 1) -> dict[str, Any]:
    graded = {"hit": hit, "flagged": flagged, "false": [], "judged": 0, "agreed": 0}
    return {"alias": alias, "task": task, "attempt": attempt, "status": "ok", "graded": graded, "seconds": 1.0,
            "tokens": 10, "rate_limited": False}  # fmt: skip


def reviewer(alias: str, outcomes: list[tuple[bool, bool]]) -> list[dict[str, Any]]:
    """One (bug found, control flagged) per pair, in BUGS order."""
    rows = []
    for bug, (hit, flagged) in zip(BUGS, outcomes, strict=False):
        rows += [result(alias, bug, hit=hit), result(alias, CONTROLS[bug], flagged=flagged)]
    return rows


def breakdown(row: dict[str, Any]) -> tuple[int, ...]:
    return row["pairs"], row["correct"], row["both_flagged"], row["neither"], row["reversed"]


def test_each_pair_outcome_is_counted_per_model():
    assert len(BUGS) == 5
    results = [
        *reviewer("flag-all", [(True, True)] * 5),
        *reviewer("flag-none", [(False, False)] * 5),
        *reviewer("mixed", [(True, False), (True, False), (True, True), (False, False), (False, True)]),
    ]
    rows = {r["alias"]: r for r in model_rows(results, TASKS)}
    assert breakdown(rows["flag-all"]) == (5, 0, 5, 0, 0)
    assert breakdown(rows["flag-none"]) == (5, 0, 0, 5, 0)
    assert breakdown(rows["mixed"]) == (5, 2, 1, 1, 1)
    # Both score 0 on the headline; only the breakdown (and the hit rate) says which is which.
    assert (rows["flag-all"]["pair_correct_rate"], rows["flag-none"]["pair_correct_rate"]) == (0.0, 0.0)
    assert [r["alias"] for r in model_rows(results, TASKS)] == ["mixed", "flag-all", "flag-none"]


def test_a_pair_counts_only_when_both_halves_were_answered_in_the_same_attempt():
    results = [
        result("half", BUGS[0], hit=True),  # no control answered: no pair
        result("half", BUGS[1], hit=True, attempt=1),
        result("half", CONTROLS[BUGS[1]], flagged=True, attempt=2),  # another attempt: no pair either
        result("half", BUGS[2], hit=True, attempt=2),
        result("half", CONTROLS[BUGS[2]], attempt=2),
    ]
    [row] = model_rows(results, TASKS)
    assert breakdown(row) == (1, 1, 0, 0, 0)
    assert row["pair_correct_rate"] == 1.0
    [nothing] = model_rows([result("lone", BUGS[0], hit=True)], TASKS)
    assert breakdown(nothing) == (0, 0, 0, 0, 0) and nothing["pair_correct_rate"] is None
