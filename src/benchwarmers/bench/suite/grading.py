"""Grading a review against a task's key: hits, false claims, pair outcomes. Pure functions.

A claim **hits** when it names the key's location — its path (or the only file shown) and either a
line within `SLACK` lines of the defect or the defect's function — and its mechanism: one of the
key's patterns matches the claim's words (or, with a judge, the judge said yes). A claim that
names the location but not the mechanism is **located**: neither a hit nor false. Every other
claim points where there is no known defect and is **false**. In a `control` task (the code after
the fix) there is no defect, so every claim is false, and one that names the fixed lines **flags**
the control.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from benchwarmers.bench.suite.claims import Claim, Definition, definitions, parse_claims
from benchwarmers.bench.suite.tasks import Key, Task

SLACK = 3  # lines either side of the key's range that still name its location
PAIR_OUTCOMES = ("correct", "both flagged", "neither", "reversed")

# A judge is asked only about claims at the key's location: (claim text, mechanism) → yes?
Judge = Callable[[str, str], bool]


@dataclass
class Graded:
    """One answer graded: what each claim was, and the task's outcome."""

    kind: str = "claim"
    hit: bool = False
    flagged: bool = False  # control tasks: a claim names the fixed lines
    hits: list[str] = field(default_factory=list)
    located: list[str] = field(default_factory=list)
    false: list[str] = field(default_factory=list)
    judged: int = 0  # claims a judge was asked about
    agreed: int = 0  # of those, where the judge and the patterns agreed

    @property
    def claims(self) -> int:
        return len(self.hits) + len(self.located) + len(self.false)

    @property
    def useful(self) -> bool:
        """The suite's verdict: a hit (on a control: the fixed lines left alone) with at most one
        false claim."""
        right = not self.flagged if self.kind == "control" else self.hit
        return right and len(self.false) <= 1

    def as_dict(self) -> dict[str, Any]:
        return {
            "hit": self.hit,
            "flagged": self.flagged,
            "useful": self.useful,
            "hits": self.hits,
            "located": self.located,
            "false": self.false,
            "judged": self.judged,
            "agreed": self.agreed,
        }


def names_mechanism(text: str, key: Key) -> bool:
    return any(re.search(pattern, text, re.IGNORECASE) for pattern in key.patterns)


def at_location(
    claim: Claim, *, path: str, function: str, lines: tuple[int, int], shown: Sequence[str], defs: Sequence[Definition]
) -> bool:
    """Does the claim point at `function` / `lines` of `path`?"""
    if claim.path is not None and not _same_file(claim.path, path):
        return False
    if claim.path is None and len(shown) > 1 and not claim.functions:
        return False  # "line 40" with several files shown says nowhere
    short = function.rsplit(".", 1)[-1]
    if claim.functions and short not in claim.functions:
        return False  # it names another function, whatever line is near
    first, last = lines[0] - SLACK, lines[1] + SLACK
    if any(a <= last and b >= first for a, b in claim.lines):
        return True
    if short in claim.functions:
        # A line elsewhere beside the function's name points elsewhere.
        return not claim.lines or any(_inside(a, b, path, function, defs) for a, b in claim.lines)
    return False


def grade(task: Task, answer: str, judge: Judge | None = None) -> Graded:
    """Grade one answer to one task."""
    claims = parse_claims(answer, task.files)
    defs = definitions(task.files)
    shown = [f.path for f in task.files]
    graded = Graded(kind=task.kind)
    if task.kind == "control":
        fixed = task.fixed_lines or (0, 0)
        function = _function_at(defs, task.files[0].path, fixed[0])
        for claim in claims:
            graded.false.append(claim.text)
            if at_location(claim, path=task.files[0].path, function=function, lines=fixed, shown=shown, defs=defs):
                graded.flagged = True
        return graded
    key = task.key
    if key is None:
        raise ValueError(f"task {task.id} has no key")
    for claim in claims:
        if not at_location(claim, path=key.path, function=key.function, lines=key.lines, shown=shown, defs=defs):
            graded.false.append(claim.text)
            continue
        by_patterns = names_mechanism(claim.text, key)
        named = by_patterns
        if judge is not None:
            named = judge(claim.text, key.mechanism)
            graded.judged += 1
            graded.agreed += int(named == by_patterns)
        (graded.hits if named else graded.located).append(claim.text)
    graded.hit = bool(graded.hits)
    return graded


def pair_outcome(bug_hit: bool, control_flagged: bool) -> str:
    """The headline: a reviewer that flags everything finds every bug and flags every control."""
    if bug_hit:
        return "both flagged" if control_flagged else "correct"
    return "reversed" if control_flagged else "neither"


def pair_verdicts(bug: Graded | None, control: Graded) -> tuple[bool | None, bool]:
    """A control counts only beside its twin: (the control's verdict, whether the twin's useful
    verdict must be withdrawn).

    `bug` is the same model's graded answer to the twin in the same run and attempt (None when it
    has none). Saying nothing is right on a control but shows nothing: a control left alone is
    useful only when the twin's bug was found, and earns no verdict otherwise. A flagged control is
    not useful, and it withdraws the twin's useful verdict too (both flagged: the find was the
    flagging, not the bug), so flagging everything earns nothing either.
    """
    if control.flagged:
        return False, bug is not None and bug.useful
    if bug is None or not bug.hit:
        return None, False
    return len(control.false) <= 1, False


def pair_outcomes(results: Mapping[str, Mapping[str, Any]], tasks: Mapping[str, Task]) -> dict[str, str]:
    """pair id → outcome, for pairs whose bug and control were both graded.

    `results` maps a task id to its graded dict (`hit`, `flagged`).
    """
    outcomes = {}
    for task in tasks.values():
        if task.kind != "control" or task.pair is None:
            continue
        bug, control = results.get(task.pair), results.get(task.id)
        if bug is not None and control is not None:
            outcomes[task.pair_id or task.pair] = pair_outcome(bool(bug["hit"]), bool(control["flagged"]))
    return outcomes


def _same_file(written: str, real: str) -> bool:
    written = written.lstrip("./")
    return real == written or real.endswith("/" + written)


def _inside(first: int, last: int, path: str, function: str, defs: Sequence[Definition]) -> bool:
    short = function.rsplit(".", 1)[-1]
    for d in defs:
        if d.path == path and d.name.rsplit(".", 1)[-1] == short and first <= d.last and last >= d.first:
            return True
    return False


def _function_at(defs: Sequence[Definition], path: str, line: int) -> str:
    """The innermost function holding `line`, or '' when none does."""
    holding = [d for d in defs if d.path == path and d.first <= line <= d.last]
    return max(holding, key=lambda d: d.first).name if holding else ""
