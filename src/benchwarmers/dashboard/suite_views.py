"""Shaping a suite report for the Suite page: one line per task, the run's state. Pure functions."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


def task_line(task: Mapping[str, Any]) -> str:
    """What the seats did with a task: found its defect, or (a control) flagged the fixed lines."""
    seats = task["seats"]
    answered = sum(1 for s in seats if s["hit"] is not None)
    if task["kind"] == "control":
        flagged = sum(1 for s in seats if s["flagged"])
        return f"{flagged} of {answered} answer{'s' if answered != 1 else ''} flagged the fixed lines"
    found = sum(1 for s in seats if s["hit"])
    return f"{found} of {answered} answer{'s' if answered != 1 else ''} found the defect"


def run_state(run: Mapping[str, Any]) -> str:
    """finished, or how far an unfinished run got (it may be running, or interrupted and resumable)."""
    return "finished" if run["finished_at"] else "not finished"


def span(lines: Sequence[int]) -> str:
    """`line 177`, or `lines 177–178`."""
    first, last = lines
    return f"line {first}" if first == last else f"lines {first}–{last}"
