"""Mining rebench pairs from fix records; the task files themselves; the dry-run arithmetic."""

from __future__ import annotations

import difflib
import re
from pathlib import Path

import orjson
import pytest

from benchwarmers.bench.suite.estimate import describe_seconds, seconds_needed
from benchwarmers.bench.suite.mine import MAX_LINES, changes, mechanism_words, mine
from benchwarmers.bench.suite.tasks import load_folder, load_tasks, parse_task, select, shipped_folder, task_json
from benchwarmers.catalog.pace import Limit
from benchwarmers.errors import InvalidRequest

BEFORE = "\n".join(
    [
        "import re",
        "",
        "",
        "def tokens(line):",
        '    """The numbers in a line."""',
        '    found = re.findall(r"\\d+(?:e[-+]?\\d+)?", line)',
        "    return [float(t) for t in found]",
        "",
        "",
        "def first(xs):",
        "    return xs[0]",
        "",
    ]
)
REGEX_FIXED = BEFORE.replace("(?:e[-+]?", "(?:[eE][-+]?")
AFTER = REGEX_FIXED.replace("def first(xs):\n", "def first(xs):\n    if not xs:\n        return None\n")


def patch(path: str, before: str, after: str) -> str:
    lines = difflib.unified_diff(
        before.splitlines(keepends=True), after.splitlines(keepends=True), f"a/{path}", f"b/{path}", n=3
    )
    return f"diff --git a/{path} b/{path}\n" + "".join(lines)


def record(before: str = BEFORE, after: str = AFTER, **extra) -> dict:
    return {
        "instance_id": "acme__numbers-12",
        "repo": "acme/numbers",
        "pull_number": 12,
        "license": "MIT",
        "base_commit": "a" * 40,
        "fix_commit": "b" * 40,
        "problem_statement": "Upper-case exponents are not parsed: SECRET-STATEMENT",
        "patch": patch("numbers/parse.py", before, after),
        "base_files": {"numbers/parse.py": before},
        "fixed_files": {"numbers/parse.py": after},
        **extra,
    }


def test_a_record_becomes_a_bug_and_a_control_task_with_a_key_from_the_hunks() -> None:
    bug, control = mine(record(BEFORE, REGEX_FIXED))
    assert (bug.id, control.id, control.pair) == ("rebench-numbers-12-bug", "rebench-numbers-12-control", bug.id)
    assert bug.key is not None
    assert (bug.key.path, bug.key.function, bug.key.lines) == ("numbers/parse.py", "tokens", (6, 6))
    assert control.fixed_lines == (6, 6)
    assert bug.key.mechanism == (
        'the fix replaced `found = re.findall(r"\\d+(?:e[-+]?\\d+)?", line)` with '
        '`found = re.findall(r"\\d+(?:[eE][-+]?\\d+)?", line)`'
    )
    assert (bug.source.url, bug.source.commit, control.source.commit) == (
        "https://github.com/acme/numbers/pull/12",
        "a" * 40,
        "b" * 40,
    )
    assert (bug.files[0].text, control.files[0].text, control.files[0].start) == (BEFORE, REGEX_FIXED, 1)
    for task in (bug, control):
        assert "SECRET-STATEMENT" not in task.prompt() and "diff --git" not in task.prompt()


def test_keywords_and_changed_identifiers_become_patterns() -> None:
    bug, _ = mine(record(defect={"mechanism": "only a lower-case exponent is read", "keywords": ["upper case", "eE"]}))
    assert bug.key is not None and bug.key.mechanism == "only a lower-case exponent is read"
    assert any(re.search(p, "the UPPER-CASE exponent", re.IGNORECASE) for p in bug.key.patterns)
    assert not any(re.search(p, "the exponent is fine", re.IGNORECASE) for p in bug.key.patterns)


def test_a_pure_insertion_keys_on_the_line_before_it() -> None:
    found = changes(patch("numbers/parse.py", "a = 1\nb = 2\nc = 3\n", "a = 1\nb = 2\nif a:\n    pass\nc = 3\n"))
    assert [(c.before, c.after, c.removed, c.added) for c in found] == [((2, 2), (3, 4), (), ("if a:", "    pass"))]
    assert mechanism_words(["x = total(values)"], ["x = total(values, start=0)"]) == ["start"]


def test_records_that_cannot_be_mined_are_refused_clearly() -> None:
    with pytest.raises(InvalidRequest, match="'patch' is missing"):
        mine({**record(), "patch": ""})
    with pytest.raises(InvalidRequest, match=r"numbers/parse\.py is not in base_files"):
        mine({**record(), "base_files": {"numbers/other.py": ""}})


def test_long_files_are_shown_as_the_function_with_real_line_numbers() -> None:
    padding = "".join(f"def f{i}():\n    return {i}\n\n\n" for i in range(80))
    bug, _control = mine(record(padding + BEFORE, padding + AFTER))
    excerpt = bug.files[0]
    whole = (padding + BEFORE).splitlines()
    assert excerpt.end - excerpt.start + 1 <= MAX_LINES and excerpt.start > 1
    assert excerpt.text.splitlines() == whole[excerpt.start - 1 : excerpt.end]
    assert bug.key is not None and excerpt.start <= bug.key.lines[0] <= excerpt.end


def test_shipped_tasks_load_and_round_trip() -> None:
    tasks = load_tasks()
    for task in tasks:
        assert parse_task(task_json(task), task.id) == task
        assert orjson.loads((shipped_folder() / f"{task.id}.json").read_bytes()) == task_json(task)
    pairs = select(tasks, ["rebench-*"])
    assert [t.id for t in pairs if t.kind == "bug"] == [
        "rebench-matchms-809-bug",
        "rebench-more-itertools-1028-bug",
        "rebench-narwhals-2864-bug",
        "rebench-quantecon.py-769-bug",
        "rebench-scrapy-6867-bug",
    ]
    licences = {t.source.license for t in pairs}
    assert licences == {"Apache-2.0", "MIT", "BSD-3-Clause"}
    notice = (shipped_folder().parent / "NOTICE.md").read_text()
    for task in pairs:
        assert task.source.repo in notice
        assert (shipped_folder().parent / "licenses" / f"{task.source.repo.split('/')[1]}-LICENSE.txt").exists()


def test_each_shipped_pair_differs_exactly_where_its_key_says() -> None:
    tasks = {t.id: t for t in load_tasks()}
    for control in (t for t in tasks.values() if t.kind == "control"):
        bug = tasks[control.pair or ""]
        assert bug.key is not None and control.fixed_lines is not None
        before, after = bug.files[0], control.files[0]
        removed = before.text.splitlines()[bug.key.lines[0] - before.start : bug.key.lines[1] - before.start + 1]
        added = after.text.splitlines()[control.fixed_lines[0] - after.start : control.fixed_lines[1] - after.start + 1]
        assert removed and added and removed != added, bug.id


def test_user_task_folders_are_checked(tmp_path: Path) -> None:
    (tmp_path / "bad.json").write_text('{"id": "Bad Id", "kind": "claim"}')
    with pytest.raises(InvalidRequest, match="must be lower-case letters"):
        load_folder(tmp_path)
    (tmp_path / "bad.json").write_text(
        '{"id": "x-control", "kind": "control", "pair": "nope", "fixed_lines": [1, 1],'
        ' "source": {"repo": "r", "license": "MIT"},'
        ' "files": [{"path": "a.py", "start": 1, "text": "x = 1\\n"}]}'
    )
    with pytest.raises(InvalidRequest, match="names pair 'nope', which no task has"):
        load_tasks([tmp_path])
    with pytest.raises(InvalidRequest, match="no task matches nothing-\\*"):
        select(load_tasks(), ["nothing-*"])


def test_seconds_needed_under_known_limits() -> None:
    rpm = Limit("requests", 60, 4)
    assert seconds_needed(4, 1000, [rpm]) == 0  # one window holds them
    assert seconds_needed(10, 1000, [rpm]) == 120  # three windows
    assert seconds_needed(10, 3000, [rpm, Limit("tokens", 60, 6000)]) == 240  # two calls a window: five windows
    assert seconds_needed(1, 7000, [Limit("tokens", 60, 6000)]) is None
    assert [describe_seconds(s) for s in (0, 30, 120, 7200, 172800, None)] == [
        "no wait",
        "30 s",
        "2 min",
        "2.0 h",
        "2.0 days",
        "never (one call is larger than a token limit)",
    ]
