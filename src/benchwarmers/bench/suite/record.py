"""A suite unit's results stored, and turned into verdicts with the source `suite`.

Each seat becomes a result row; a member that could not take the task becomes a `skipped` row with
its reason (never a verdict). Verdicts follow the pair rule (grading.pair_verdicts): a control
counts only beside the same model's answer to its bug twin in the same run and attempt.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from benchwarmers.bench.caller import Caller
from benchwarmers.bench.calls.call import used_tokens
from benchwarmers.bench.evidence.verdicts import SUITE, write_verdict
from benchwarmers.bench.state import BenchState
from benchwarmers.bench.suite.grading import Graded, pair_verdicts
from benchwarmers.bench.suite.tasks import Task
from benchwarmers.store import suite as store

CALLER = Caller(name="suite")
RATE_LIMITED = ("paced", "cooling")
SKIPPED = "skipped"
# Why a member could not take a task: its known window is smaller than the prompt's estimate, the
# panel refused the prompt as too large, or the provider refused it as longer than its context.
WINDOW, TOO_LARGE, CONTEXT = "window", "413", "context"


def skip_reason(seat: Mapping[str, Any]) -> str | None:
    """A seat the provider refused because the prompt did not fit is a skip, not a failure to grade."""
    return CONTEXT if seat["status"] == "error" and seat["error_kind"] == "context_too_long" else None


def result_row(run_id: str, unit: Any, seat: Mapping[str, Any], result: Graded | None) -> dict[str, Any]:
    reason = skip_reason(seat)
    return {
        "run_id": run_id,
        "task": unit.task,
        "attempt": unit.attempt,
        "alias": seat["alias"],
        "panel_id": seat["panel_id"],
        "call": seat["call"],
        "status": SKIPPED if reason else seat["status"],
        "seconds": seat["seconds"],
        "tokens": used_tokens(seat["usage"]),
        "rate_limited": seat["status"] in RATE_LIMITED or seat["error_kind"] == "rate_limited",
        "graded": result.as_dict() if result is not None else None,
        "unit_alias": unit.alias,
        "skipped": reason,
    }


def skip_row(run_id: str, unit: Any, alias: str, reason: str, panel_id: str) -> dict[str, Any]:
    """A member left out of the unit's panel (no call: no call id)."""
    return {
        "run_id": run_id,
        "task": unit.task,
        "attempt": unit.attempt,
        "alias": alias,
        "panel_id": panel_id,
        "call": "",
        "status": SKIPPED,
        "seconds": 0.0,
        "tokens": None,
        "rate_limited": False,
        "graded": None,
        "unit_alias": unit.alias,
        "skipped": reason,
    }


def summary(result: Graded) -> str:
    if result.kind == "control":
        found = "flagged the fixed lines" if result.flagged else "left the fixed lines alone"
    else:
        found = "found the defect" if result.hit else "missed the defect"
    return f"{found}; {len(result.false)} false claim(s)"


async def store_unit(
    state: BenchState,
    run_id: str,
    unit: Any,
    task: Task,
    seats: Sequence[dict[str, Any]],
    graded: dict[str, Graded],
    skips: Mapping[str, str],
    panel_id: str,
) -> None:
    """Store the unit's rows (seats and skips) and write the suite's verdicts, in one transaction.

    A row's `graded.useful` is the verdict the suite wrote (None: it wrote none)."""
    judged: list[tuple[str, str, bool, bool | None]] = []
    async with state.write() as conn:
        verdicts: dict[str, tuple[bool | None, str]] = {}
        for seat in seats:
            result = graded.get(seat["call"])
            if result is None:
                continue
            useful: bool | None = result.useful
            if task.kind == "control" and task.pair:
                twin = await store.result_of(conn, run_id, task.pair, unit.attempt, seat["alias"])
                bug = _graded(twin)
                useful, withdraw = pair_verdicts(bug, result)
                if withdraw and twin is not None and bug is not None:
                    # Both flagged: the twin's find was flagging everything; its useful verdict goes.
                    note = f"suite run {run_id}: found the defect, but flagged the fixed lines of {task.id} too"
                    written, replaced = await _verdict(conn, twin["call"], False, note, bug)
                    await store.set_graded(conn, twin["id"], {**twin["graded"], "useful": False})
                    if written:
                        judged.append((twin["alias"], seat["shape"], False, replaced))
            verdicts[seat["call"]] = (useful, f"suite run {run_id}: {summary(result)}")
        rows = []
        for seat in seats:
            row = result_row(run_id, unit, seat, graded.get(seat["call"]))
            if seat["call"] in verdicts and row["graded"] is not None:
                row["graded"]["useful"] = verdicts[seat["call"]][0]
            rows.append(row)
        rows += [skip_row(run_id, unit, alias, reason, panel_id) for alias, reason in skips.items()]
        await store.insert_results(conn, rows)
        for seat in seats:
            useful, note = verdicts.get(seat["call"], (None, ""))
            if useful is None:
                continue  # no answer to grade, or a control left alone beside a missed (or unasked) bug
            written, replaced = await _verdict(conn, seat["call"], useful, note, graded[seat["call"]])
            if written:
                judged.append((seat["alias"], seat["shape"], useful, replaced))
    for alias, shape, useful, replaced in judged:
        state.history.judged(alias, shape, useful, replaced)


def _graded(row: Mapping[str, Any] | None) -> Graded | None:
    if row is None or row["graded"] is None:
        return None
    found = row["graded"]
    return Graded(
        kind="bug",
        hit=bool(found["hit"]),
        flagged=bool(found["flagged"]),
        hits=list(found["hits"]),
        located=list(found["located"]),
        false=list(found["false"]),
    )


async def _verdict(conn: Any, call: str, useful: bool, note: str, result: Graded | None) -> tuple[bool, bool | None]:
    return await write_verdict(
        conn,
        {
            "call": call,
            "useful": useful,
            "note": note,
            "real": result.hits if result is not None else [],
            "false": result.false if result is not None else [],
            "caller": CALLER.name,
        },
        SUITE,
    )
