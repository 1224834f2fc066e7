"""Claims read from free-form reviews, graded against a key: hits, located, false, pairs. Pure."""

from __future__ import annotations

import pytest

from benchwarmers.bench.suite.claims import definitions, parse_claims, says_no_defects
from benchwarmers.bench.suite.grading import SLACK, grade, pair_outcome, pair_verdicts
from benchwarmers.bench.suite.tasks import Excerpt, Key, Source, Task

CODE = """\
def explorer_count(members, max_explorers=2, max_calls=5):
    \"\"\"Explorer seats beside the members.\"\"\"
    return max(0, min(max_explorers, max_calls - members - 1))


class Seats:
    def spare(self, pool):
        chosen = [c for c in pool if c.free]
        return chosen


def other(a):
    return a + 1
"""
PATH = "src/benchwarmers/bench/panels/seating.py"
FILE = Excerpt(PATH, 60, CODE)  # line 60 is `def explorer_count`; line 62 the defect
KEY = Key(PATH, "explorer_count", (62, 62), "subtracts one seat too many", (r"off[- ]by[- ]one", r"extra (one|1)"))
TASK = Task(id="claim-x", kind="claim", files=(FILE,), source=Source("benchwarmers", "MIT"), key=KEY)
CONTROL = Task(
    id="rebench-x-control",
    kind="control",
    files=(FILE,),
    source=Source("x", "MIT"),
    pair="rebench-x-bug",
    fixed_lines=(62, 62),
)


def test_definitions_have_real_line_spans_and_qualified_names() -> None:
    found = [(d.name, d.first, d.last) for d in definitions([FILE])]
    assert found == [
        ("explorer_count", 60, 62),
        ("Seats", 65, 68),
        ("Seats.spare", 66, 68),
        ("other", 71, 72),
    ]


def test_claims_from_bullets_paths_functions_and_fences() -> None:
    answer = """Here is what I found.

- `seating.py:62` — off by one: an extra 1 is subtracted
  so a 3-member collection gets one explorer.
2) lines 66-68: `spare()` keeps every free model
* src/benchwarmers/bench/panels/seating.py#L71 other() never checks its input

```python
return max(0, min(max_explorers, max_calls - members))  # seating.py:62 is not a claim
```
Overall the code is readable.
"""
    claims = [(c.text, c.path, c.lines, c.functions) for c in parse_claims(answer, [FILE])]
    assert claims == [
        (
            "`seating.py:62` — off by one: an extra 1 is subtracted so a 3-member collection gets one explorer.",
            "seating.py",
            [(62, 62)],
            [],
        ),
        ("lines 66-68: `spare()` keeps every free model", None, [(66, 68)], ["spare"]),
        (
            "src/benchwarmers/bench/panels/seating.py#L71 other() never checks its input",
            "src/benchwarmers/bench/panels/seating.py",
            [(71, 71)],
            ["other"],
        ),
    ]
    assert says_no_defects("No defects found.") and says_no_defects("I found no bugs here")
    assert parse_claims("No defects found.", [FILE]) == []


def test_a_hit_names_the_location_and_the_mechanism() -> None:
    graded = grade(TASK, "- seating.py:62 — off-by-one in the explorer count")
    assert (graded.hit, graded.hits, graded.located, graded.false, graded.useful) == (
        True,
        ["seating.py:62 — off-by-one in the explorer count"],
        [],
        [],
        True,
    )
    by_name = grade(TASK, "`explorer_count()` takes an extra one off")
    assert by_name.hit and by_name.hits == ["`explorer_count()` takes an extra one off"]


@pytest.mark.parametrize(("line", "at_location"), [(62 - SLACK, True), (62 + SLACK, True), (62 + SLACK + 1, False)])
def test_a_line_within_three_of_the_key_names_its_location(line: int, at_location: bool) -> None:
    graded = grade(TASK, f"- seating.py:{line} — off by one")
    assert (graded.hit, len(graded.false)) == (at_location, 0 if at_location else 1)


def test_location_without_mechanism_is_located_and_elsewhere_is_false() -> None:
    answer = "1. seating.py:62 — the default of 2 looks arbitrary\n2. seating.py:64 — `other()` off by one\n"
    graded = grade(TASK, answer)
    assert graded.hit is False
    assert graded.located == ["seating.py:62 — the default of 2 looks arbitrary"]
    # Line 64 is within three of 62, but the claim is about other(): it points elsewhere.
    assert graded.false == ["seating.py:64 — `other()` off by one"]
    assert graded.useful is False


def test_a_path_that_is_not_the_keys_is_elsewhere() -> None:
    graded = grade(TASK, "- src/other.py:62 — off by one")
    assert (graded.hit, graded.false) == (False, ["src/other.py:62 — off by one"])


def test_useful_allows_at_most_one_false_claim() -> None:
    one = grade(TASK, "- seating.py:62 off by one\n- seating.py:71 other() wrong")
    two = grade(TASK, "- seating.py:62 off by one\n- seating.py:71 other() wrong\n- seating.py:67 spare() wrong")
    assert (one.hit, len(one.false), one.useful) == (True, 1, True)
    assert (two.hit, len(two.false), two.useful) == (True, 2, False)


def test_a_judge_decides_the_mechanism_at_the_location_and_agreement_is_counted() -> None:
    answer = "- seating.py:62 — off by one\n- seating.py:61 — the docstring lies\n- seating.py:71 — other() is wrong"
    asked: list[str] = []

    def judge(claim: str, mechanism: str) -> bool:
        asked.append(claim)
        assert mechanism == KEY.mechanism
        return "docstring" in claim  # disagrees with the patterns on both claims at the location

    graded = grade(TASK, answer, judge=judge)
    assert asked == ["seating.py:62 — off by one", "seating.py:61 — the docstring lies"]  # never the false one
    assert (graded.hits, graded.located, graded.judged, graded.agreed) == (
        ["seating.py:61 — the docstring lies"],
        ["seating.py:62 — off by one"],
        2,
        0,
    )


def test_on_a_control_every_claim_is_false_and_the_fixed_lines_flag_it() -> None:
    clean = grade(CONTROL, "No defects found.")
    assert (clean.flagged, clean.false, clean.useful) == (False, [], True)
    elsewhere = grade(CONTROL, "- seating.py:71 other() adds one")
    assert (elsewhere.flagged, elsewhere.false, elsewhere.useful) == (False, ["seating.py:71 other() adds one"], True)
    flagged = grade(CONTROL, "- seating.py:62 off by one")
    assert (flagged.flagged, flagged.useful) == (True, False)
    by_function = grade(CONTROL, "`explorer_count()` is off by one")
    assert by_function.flagged


def test_pair_outcomes() -> None:
    assert [pair_outcome(hit, flagged) for hit, flagged in [(1, 0), (1, 1), (0, 0), (0, 1)]] == [
        "correct",
        "both flagged",
        "neither",
        "reversed",
    ]


def test_a_control_counts_only_beside_its_twin() -> None:
    found = grade(TASK, "- seating.py:62 off by one: one seat too many")
    missed = grade(TASK, "No defects found.")
    left_alone, flagged = grade(CONTROL, "No defects found."), grade(CONTROL, "- seating.py:62 off by one")
    assert (found.useful, missed.useful) == (True, False)
    # (the control's verdict, whether the twin's useful verdict is withdrawn)
    assert pair_verdicts(found, left_alone) == (True, False)  # correct: both useful
    assert pair_verdicts(missed, left_alone) == (None, False)  # silence twice: nothing shown
    assert pair_verdicts(None, left_alone) == (None, False)  # the twin not asked (or skipped)
    assert pair_verdicts(found, flagged) == (False, True)  # both flagged: the find goes too
    assert pair_verdicts(missed, flagged) == (False, False)  # reversed
    noisy = grade(CONTROL, "- seating.py:66 spare() keeps paid ones\n- seating.py:71 other() adds one")
    assert pair_verdicts(found, noisy) == (False, False)  # two false claims, as on any task
