"""A suite run's report: per model and per task, from its stored results. Pure functions.

A task a model could not take (its window, a 413, the provider's context error) is a skip, counted
apart per model with its reason: not a seat, not an error, not a verdict.

The headline is the pair-correct rate: on a `rebench-*` pair a reviewer is right only when it finds
the bug before the fix and leaves the fixed lines alone after it, so flagging everything does not
pay. The hit rate (claim and bug tasks found) comes with its Wilson interval.
"""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from benchwarmers.bench.evidence.stats import wilson
from benchwarmers.bench.suite.grading import PAIR_OUTCOMES, pair_outcome
from benchwarmers.bench.suite.tasks import Task


def model_rows(results: Sequence[Mapping[str, Any]], tasks: Mapping[str, Task]) -> list[dict[str, Any]]:
    """One row per model, best pair-correct rate first (then hit rate)."""
    by_alias: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for row in results:
        by_alias[row["alias"]].append(row)
    rows = [_model_row(alias, found, tasks) for alias, found in by_alias.items()]
    rows.sort(key=lambda r: (-(r["pair_correct_rate"] or 0.0), -(r["hit_rate"] or 0.0), r["alias"]))
    return rows


def _model_row(alias: str, found_rows: Sequence[Mapping[str, Any]], tasks: Mapping[str, Task]) -> dict[str, Any]:
    # A task the model could not take (window, 413, context) is counted apart: not a seat, not a verdict.
    skipped = Counter(str(r["skipped"]) for r in found_rows if r.get("skipped"))
    rows = [r for r in found_rows if not r.get("skipped")]
    graded = [r for r in rows if r["graded"] is not None]
    found = [r for r in graded if _kind(r, tasks) in ("claim", "bug")]
    hits = sum(1 for r in found if r["graded"]["hit"])
    pairs = Counter(_pairs(graded, tasks).values())
    paired = sum(pairs.values())
    false_claims = sum(len(r["graded"]["false"]) for r in graded)
    return {
        "alias": alias,
        "seats": len(rows),
        "answers": len(graded),
        "errors": sum(1 for r in rows if r["status"] == "error"),
        "found": len(found),
        "hits": hits,
        "hit_rate": round(hits / len(found), 3) if found else None,
        "hit_interval": _interval(hits, len(found)),
        "pairs": paired,
        **{outcome.replace(" ", "_"): pairs.get(outcome, 0) for outcome in PAIR_OUTCOMES},
        "pair_correct_rate": round(pairs.get("correct", 0) / paired, 3) if paired else None,
        "pair_interval": _interval(pairs.get("correct", 0), paired),
        "false_per_answer": round(false_claims / len(graded), 2) if graded else None,
        "median_seconds": round(statistics.median(r["seconds"] for r in graded), 2) if graded else None,
        "tokens": sum(r["tokens"] or 0 for r in rows),
        "rate_limited": sum(1 for r in rows if r["rate_limited"]),
        "judged": sum(r["graded"]["judged"] for r in graded),
        "judge_agreed": sum(r["graded"]["agreed"] for r in graded),
        "skipped": sum(skipped.values()),
        "skipped_by": dict(sorted(skipped.items())),
    }


def _interval(part: int, whole: int) -> list[float] | None:
    """The 95% Wilson interval of part/whole to three places; None when there is nothing to count."""
    if not whole:
        return None
    low, high = wilson(part, whole)
    return [round(low, 3), round(high, 3)]


def _kind(row: Mapping[str, Any], tasks: Mapping[str, Task]) -> str:
    task = tasks.get(row["task"])
    return task.kind if task is not None else "unknown"


def _pairs(rows: Sequence[Mapping[str, Any]], tasks: Mapping[str, Task]) -> dict[tuple[str, int], str]:
    """(pair, attempt) → outcome, for each pair whose bug and control this model both answered."""
    graded = {(r["task"], r["attempt"]): r["graded"] for r in rows}
    outcomes = {}
    for (task_id, attempt), result in graded.items():
        task = tasks.get(task_id)
        if task is None or task.kind != "control" or task.pair is None:
            continue
        bug = graded.get((task.pair, attempt))
        if bug is not None:
            outcomes[(task.pair_id or task.pair, attempt)] = pair_outcome(bool(bug["hit"]), bool(result["flagged"]))
    return outcomes


def task_rows(
    results: Sequence[Mapping[str, Any]], tasks: Mapping[str, Task], answers: Mapping[str, str]
) -> list[dict[str, Any]]:
    """Each task with every seat's answer and grade, for the drill-down."""
    by_task: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in results:
        graded = row["graded"]
        by_task[row["task"]].append(
            {
                "alias": row["alias"],
                "attempt": row["attempt"],
                "call": row["call"],
                "status": row["status"],
                "skipped": row.get("skipped"),
                "seconds": row["seconds"],
                "hit": graded["hit"] if graded else None,
                "flagged": graded["flagged"] if graded else None,
                "useful": graded["useful"] if graded else None,
                "hits": graded["hits"] if graded else [],
                "located": graded["located"] if graded else [],
                "false": graded["false"] if graded else [],
                "answer": answers.get(row["call"], ""),
            }
        )
    rows = []
    for task_id, seats in sorted(by_task.items()):
        task = tasks.get(task_id)
        rows.append(
            {
                "task": task_id,
                "kind": task.kind if task else "unknown",
                "key": _key(task),
                "seats": seats,
            }
        )
    return rows


def _key(task: Task | None) -> dict[str, Any] | None:
    if task is None:
        return None
    if task.key is not None:
        return {
            "path": task.key.path,
            "function": task.key.function,
            "lines": list(task.key.lines),
            "mechanism": task.key.mechanism,
        }
    if task.fixed_lines is not None:
        return {"path": task.files[0].path, "fixed_lines": list(task.fixed_lines), "pair": task.pair}
    return None


def planned_units(plan: Mapping[str, Any]) -> int:
    """Units a run's plan holds: each task attempt once, or once per model asked alone."""
    return len(plan["tasks"]) * int(plan["repeat"]) * max(1, len(plan["models"]))


def task_view(task: Task) -> dict[str, Any]:
    """A task as the drill-down shows it: its files (each from its real first line), its key."""
    return {
        "task": task.id,
        "kind": task.kind,
        "title": task.title,
        "shape": task.shape,
        "key": _key(task),
        "source": {k: v for k, v in vars(task.source).items() if v},
        "files": [{"path": f.path, "start": f.start, "end": f.end, "text": f.text} for f in task.files],
    }


def task_shown(task: Task) -> dict[str, Any]:
    """A task as `suite show` prints it: the prompt exactly as a model is sent it, the key with the patterns
    a claim must match to name the mechanism (a control: its pair and the fixed lines), and the files' spans."""
    key = _key(task)
    if key is not None and task.key is not None:
        key["patterns"] = list(task.key.patterns)
    return {
        "task": task.id,
        "kind": task.kind,
        "title": task.title,
        "shape": task.shape,
        "key": key,
        "source": {k: v for k, v in vars(task.source).items() if v},
        "files": [{"path": f.path, "start": f.start, "end": f.end} for f in task.files],
        "prompt": task.prompt(),
    }


def report(
    run: Mapping[str, Any],
    results: Sequence[Mapping[str, Any]],
    tasks: Mapping[str, Task],
    answers: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    planned = planned_units(run["plan"])
    units = {(r["task"], r["attempt"], r.get("unit_alias")) for r in results}
    judged = sum((r["graded"] or {}).get("judged", 0) for r in results)
    agreed = sum((r["graded"] or {}).get("agreed", 0) for r in results)
    return {
        "run": run["id"],
        "target": run["target"],
        "created_at": run["created_at"],
        "finished_at": run["finished_at"],
        "plan": run["plan"],
        "units": {"planned": planned, "done": len(units)},
        "skipped": sum(1 for r in results if r.get("skipped")),
        "judge_agreement": round(agreed / judged, 3) if judged else None,
        "models": model_rows(results, tasks),
        "tasks": task_rows(results, tasks, answers or {}),
    }


TREND_FIGURES = ("hits", "found", "hit_rate", "hit_interval", "correct", "pairs", "pair_correct_rate", "pair_interval")


def run_trend(runs: Sequence[tuple[Mapping[str, Any], Sequence[Mapping[str, Any]]]]) -> dict[str, Any]:
    """Each model's hit and pair-correct rates per run, with their intervals: `runs` are (run, its
    model rows) oldest first; a model a run did not ask has None for that run."""
    aliases = sorted({row["alias"] for _, rows in runs for row in rows})
    by_run = [{row["alias"]: row for row in rows} for _, rows in runs]
    return {
        "runs": [
            {
                "run": run["id"],
                "target": run["target"],
                "created_at": run["created_at"],
                "finished_at": run["finished_at"],
            }
            for run, _ in runs
        ],
        "models": [
            {
                "alias": alias,
                "points": [
                    {key: found[alias][key] for key in TREND_FIGURES} if alias in found else None for found in by_run
                ],
            }
            for alias in aliases
        ],
    }
