"""Reading claims out of a free-form review: bullets, `path:line`, `function()`, code fences.

A claim is a line (or bullet) that points somewhere: a `path:line` (or `path:line-line`), a
"line N" / "lines N-M", or a function named as `name()` or `` `name` `` when the shown files
define it. Lines that point nowhere continue the claim above them when they are indented or
wrapped, and are dropped otherwise. Code in fences is a suggested fix, not a claim.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from benchwarmers.bench.suite.tasks import Excerpt

NO_DEFECTS = re.compile(r"\bno (?:defects?|bugs?|issues?|problems?)(?: (?:were |was )?found)?\b", re.IGNORECASE)
_FENCE = re.compile(r"^\s*(```|~~~)")
_BULLET = re.compile(r"^\s*(?:[-*+•]|\d{1,3}[.)]|#{1,6})\s+")
_PATH_LINE = re.compile(
    r"(?P<path>[\w./\\-]+\.\w{1,5})\s*[:#]\s*L?(?P<first>\d{1,6})(?:\s*[-–—]\s*L?(?P<last>\d{1,6}))?"
)
_LINE_WORD = re.compile(r"\blines?\s+(?P<first>\d{1,6})(?:\s*(?:[-–—]|to|and)\s*(?P<last>\d{1,6}))?", re.IGNORECASE)
_CALLED = re.compile(r"`?\b(?P<name>[A-Za-z_][\w.]*)\s*\(\s*\)`?|`(?P<ticked>[A-Za-z_][\w.]*)`")
_DEF = re.compile(r"^(?P<indent>\s*)(?:async\s+)?(?P<kind>def|class)\s+(?P<name>\w+)")


@dataclass
class Claim:
    text: str
    path: str | None = None  # as written by the reviewer (may be a suffix of the real path)
    lines: list[tuple[int, int]] = field(default_factory=list)
    functions: list[str] = field(default_factory=list)  # unqualified names the shown files define


@dataclass(frozen=True)
class Definition:
    path: str
    name: str  # qualified: Class.method
    first: int
    last: int


def definitions(files: Sequence[Excerpt]) -> list[Definition]:
    """Functions and classes the shown files define, with their real line spans."""
    found: list[Definition] = []
    for excerpt in files:
        lines = excerpt.text.splitlines()
        stack: list[tuple[int, str, int]] = []  # (indent, qualified name, first line)
        for offset, line in enumerate(lines):
            number = excerpt.start + offset
            match = _DEF.match(line)
            indent = len(line) - len(line.lstrip()) if line.strip() else None
            if indent is not None and not line.lstrip().startswith(("#", "@", ")")):
                while stack and indent <= stack[-1][0]:
                    closing = stack.pop()
                    found.append(Definition(excerpt.path, closing[1], closing[2], _last_code(lines, excerpt, number)))
            if match:
                parents = [s[1] for s in stack]
                name = ".".join([*parents[-1:], match["name"]]) if parents else match["name"]
                stack.append((len(match["indent"]), name, number))
        for closing in reversed(stack):
            found.append(Definition(excerpt.path, closing[1], closing[2], excerpt.end))
    return sorted(found, key=lambda d: (d.path, d.first))


def _last_code(lines: list[str], excerpt: Excerpt, before: int) -> int:
    """The last non-blank line before line `before` (a definition ends there)."""
    number = before - 1
    while number > excerpt.start and not lines[number - excerpt.start].strip():
        number -= 1
    return number


def parse_claims(answer: str, files: Sequence[Excerpt]) -> list[Claim]:
    """The claims an answer makes about the shown files, in order."""
    names = {d.name.rsplit(".", 1)[-1] for d in definitions(files)} | {d.name for d in definitions(files)}
    claims: list[Claim] = []
    current: Claim | None = None
    in_fence = gap = False
    for raw in answer.splitlines():
        if _FENCE.match(raw):
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        if not raw.strip():
            gap = True
            continue
        located = _locate(raw, names)
        if located is not None:
            current = located
            claims.append(current)
        elif current is not None and not _BULLET.match(raw) and (not gap or raw[:1].isspace()):
            current.text = f"{current.text} {raw.strip()}"  # the claim's explanation, wrapped
        else:
            current = None
        gap = False
    return claims


def _locate(line: str, names: set[str]) -> Claim | None:
    text = _BULLET.sub("", line).strip()
    claim = Claim(text=text)
    for match in _PATH_LINE.finditer(text):
        first = int(match["first"])
        claim.path = claim.path or match["path"].replace("\\", "/")
        claim.lines.append((first, int(match["last"] or first)))
    if not claim.lines:
        for match in _LINE_WORD.finditer(text):
            first = int(match["first"])
            claim.lines.append((first, max(first, int(match["last"] or first))))
    for match in _CALLED.finditer(text):
        name = (match["name"] or match["ticked"] or "").rsplit(".", 1)[-1]
        if name in names and name not in claim.functions:
            claim.functions.append(name)
    if claim.lines or claim.functions:
        return claim
    return None


def says_no_defects(answer: str) -> bool:
    return bool(NO_DEFECTS.search(answer))


def unique_texts(claims: Iterable[Claim]) -> list[str]:
    return list(dict.fromkeys(c.text for c in claims))
