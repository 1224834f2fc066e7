"""Mining `rebench-*` pairs from real fixes: the code just before a fix and just after it.

A record (see docs/SUITE.md) carries the repository, licence, commits, the fix's patch and the
whole files before and after it. The `-bug` task shows the code before the fix, with a key read
from the patch's hunks (the lines the fix removed or changed, the function holding them) and
mechanism words from the removed and added lines; the `-control` task shows the same code after
the fix. Neither the problem statement nor the patch ever reaches a prompt.
"""

from __future__ import annotations

import keyword
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from unidiff.patch import PatchSet

from benchwarmers.bench.suite.claims import definitions
from benchwarmers.bench.suite.tasks import Excerpt, Key, Source, Task
from benchwarmers.errors import InvalidRequest

CONTEXT = 25  # lines shown around the function that holds the fix
MAX_LINES = 220  # an excerpt longer than this is cut around the fix
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,}")
_COMMON = {"self", "cls", "return", "none", "true", "false", "print", "len", "str", "int", "list", "dict"}


@dataclass(frozen=True)
class Change:
    """What a patch changed in one file: the lines before the fix and after it."""

    path: str
    before: tuple[int, int]  # lines in the base file the fix removed (or the line before an insertion)
    after: tuple[int, int]  # lines in the fixed file the fix added (or the line after a deletion)
    removed: tuple[str, ...]
    added: tuple[str, ...]


def changes(patch: str) -> list[Change]:
    """One Change per modified source file, spanning all its hunks."""
    found = []
    for patched in PatchSet(patch):
        if patched.is_added_file or patched.is_removed_file:
            continue
        removed: list[tuple[int, str]] = []
        added: list[tuple[int, str]] = []
        anchors: list[tuple[int, int]] = []  # (base line, fixed line) of context next to a change
        for hunk in patched:
            previous: tuple[int, int] | None = None
            for line in hunk:
                text = line.value.rstrip("\n")
                if line.is_removed and line.source_line_no is not None:
                    removed.append((line.source_line_no, text))
                elif line.is_added and line.target_line_no is not None:
                    added.append((line.target_line_no, text))
                    if previous is not None:
                        anchors.append(previous)
                elif line.source_line_no is not None and line.target_line_no is not None:
                    previous = (line.source_line_no, line.target_line_no)
        before = _span([n for n, _ in removed]) or _span([a for a, _ in anchors])
        after = _span([n for n, _ in added]) or _span([b for _, b in anchors])
        if before is None or after is None:
            continue
        path = patched.path
        found.append(Change(path, before, after, tuple(t for _, t in removed), tuple(t for _, t in added)))
    if not found:
        raise InvalidRequest("the patch changes no existing file")
    return found


def mechanism_words(removed: Iterable[str], added: Iterable[str]) -> list[str]:
    """Identifiers the fix took out or brought in (not those on both sides): what names the defect."""
    gone = {w for line in removed for w in _IDENT.findall(line)}
    new = {w for line in added for w in _IDENT.findall(line)}
    words = (gone ^ new) - set(keyword.kwlist)
    return sorted(w for w in words if w.lower() not in _COMMON)


def excerpt(path: str, text: str, lines: tuple[int, int]) -> Excerpt:
    """The function holding `lines` with CONTEXT lines around it (the whole file when it is short)."""
    whole = text.splitlines()
    if len(whole) <= MAX_LINES:
        return Excerpt(path, 1, text)
    holding = [d for d in definitions([Excerpt(path, 1, text)]) if d.first <= lines[0] and lines[1] <= d.last]
    first, last = (holding[-1].first, holding[-1].last) if holding else lines
    first, last = max(1, first - CONTEXT), min(len(whole), last + CONTEXT)
    if last - first + 1 > MAX_LINES:
        middle = (lines[0] + lines[1]) // 2
        first = max(1, middle - MAX_LINES // 2)
        last = min(len(whole), first + MAX_LINES - 1)
    return Excerpt(path, first, "\n".join(whole[first - 1 : last]) + "\n")


def function_at(path: str, text: str, lines: tuple[int, int]) -> str:
    holding = [d for d in definitions([Excerpt(path, 1, text)]) if d.first <= lines[0] <= d.last]
    return max(holding, key=lambda d: d.first).name if holding else "<module>"


def slug(record: dict[str, Any]) -> str:
    instance = str(record.get("instance_id") or "")
    name = instance.split("__", 1)[-1] if "__" in instance else instance
    return re.sub(r"[^a-z0-9.-]+", "-", name.lower()).strip("-.")


def mine(record: Any) -> tuple[Task, Task]:
    """A record → its (`-bug`, `-control`) tasks."""
    if not isinstance(record, dict):
        raise InvalidRequest("a record is a JSON object")
    for name in ("instance_id", "repo", "license", "patch", "base_files", "fixed_files"):
        if not record.get(name):
            raise InvalidRequest(f"record {record.get('instance_id', '?')}: {name!r} is missing")
    change = changes(record["patch"])[0]
    base = record["base_files"].get(change.path)
    fixed = record["fixed_files"].get(change.path)
    if base is None or fixed is None:
        raise InvalidRequest(f"record {record['instance_id']}: {change.path} is not in base_files and fixed_files")
    defect: dict[str, Any] = record["defect"] if isinstance(record.get("defect"), dict) else {}
    words = [*(defect.get("keywords") or []), *mechanism_words(change.removed, change.added)]
    patterns = list(dict.fromkeys(_pattern(w) for w in words if w.strip()))
    mechanism = defect.get("mechanism") or _described(change)
    function = function_at(change.path, base, change.before)
    url = f"https://github.com/{record['repo']}/pull/{record['pull_number']}" if record.get("pull_number") else ""
    attribution = f"{record['repo']}, {record['license']} (see NOTICE)"
    name = f"rebench-{slug(record)}"
    bug = Task(
        id=f"{name}-bug",
        kind="bug",
        title=f"{record['repo']} before the fix",
        files=(excerpt(change.path, base, change.before),),
        source=Source(record["repo"], record["license"], url, str(record.get("base_commit") or ""), attribution),
        key=Key(change.path, function, change.before, mechanism, tuple(patterns or [re.escape(function)])),
    )
    control = Task(
        id=f"{name}-control",
        kind="control",
        title=f"{record['repo']} after the fix",
        files=(excerpt(change.path, fixed, change.after),),
        source=Source(record["repo"], record["license"], url, str(record.get("fix_commit") or ""), attribution),
        pair=bug.id,
        fixed_lines=change.after,
    )
    return bug, control


def _span(numbers: list[int]) -> tuple[int, int] | None:
    return (min(numbers), max(numbers)) if numbers else None


def _pattern(word: str) -> str:
    """A keyword as a case-insensitive pattern: whole words, any spacing or hyphen between them."""
    parts = [re.escape(p) for p in re.split(r"[\s_-]+", word.strip()) if p]
    joined = r"[\s_-]*".join(parts)
    return rf"(?<![A-Za-z0-9]){joined}(?![A-Za-z0-9])"


def _described(change: Change) -> str:
    gone = " / ".join(line.strip() for line in change.removed) or "(nothing)"
    new = " / ".join(line.strip() for line in change.added) or "(nothing)"
    return f"the fix replaced `{gone}` with `{new}`"
