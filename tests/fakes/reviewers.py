"""Scripted reviewers for the suite: each reads the task from the prompt it is sent and answers
as a kind of reviewer does. They know the tasks (the test gives them), as a good reviewer would
know the defect once it has read the code.

- `finder`: names the key's line and its mechanism in the key's own words; on a control, no defect.
- `flag_all`: the defect's mechanism claimed on every function shown, before the fix and after it.
- `flag_nothing`: "No defects found."
- `wrong_line`: the mechanism at a line far from the defect; after the fix, at the fixed lines.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from benchwarmers.bench.suite.claims import definitions
from benchwarmers.bench.suite.tasks import Task

Respond = Callable[[dict[str, Any]], str]


def _prompt(request: dict[str, Any]) -> str:
    return "".join(m["content"] if isinstance(m.get("content"), str) else "" for m in request.get("messages") or [])


def _task(tasks: Sequence[Task], request: dict[str, Any]) -> Task:
    prompt = _prompt(request)
    for task in tasks:
        if task.prompt() == prompt:
            return task
    raise LookupError("the prompt is no task's")


def _words(tasks: Sequence[Task], task: Task) -> str:
    """The defect's mechanism in the key's own words (a control's: its bug task's)."""
    key = task.key or next(t.key for t in tasks if t.id == task.pair)
    assert key is not None
    return key.mechanism


def finder(tasks: Sequence[Task]) -> Respond:
    def respond(request: dict[str, Any]) -> str:
        task = _task(tasks, request)
        if task.key is None:
            return "No defects found: the code handles its inputs correctly."
        line = task.key.lines[0]
        return f"Found one defect:\n\n- `{task.key.path}:{line}` — {_words(tasks, task)}\n"

    return respond


def flag_all(tasks: Sequence[Task]) -> Respond:
    def respond(request: dict[str, Any]) -> str:
        task = _task(tasks, request)
        words = _words(tasks, task)
        shown = enumerate(definitions(task.files), 1)
        return "\n".join(f"{i}. {d.path}:{d.first} — `{d.name.rsplit('.', 1)[-1]}()`: {words}" for i, d in shown)

    return respond


def flag_nothing(_tasks: Sequence[Task]) -> Respond:
    return lambda _request: "No defects found."


def wrong_line(tasks: Sequence[Task]) -> Respond:
    def respond(request: dict[str, Any]) -> str:
        task = _task(tasks, request)
        if task.key is None:
            fixed = task.fixed_lines or (1, 1)
            return f"* {task.files[0].path}:{fixed[0]} — {_words(tasks, task)}"
        far = task.key.lines[1] + 40 if task.key.lines[1] + 40 <= task.files[0].end else task.files[0].start
        return f"* {task.key.path}:{far} — {_words(tasks, task)}"

    return respond


REVIEWERS = {"finder": finder, "flag-all": flag_all, "flag-none": flag_nothing, "wrong-line": wrong_line}
