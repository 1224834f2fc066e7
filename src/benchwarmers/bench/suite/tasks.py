"""Suite tasks: review requests whose defect is known, read from JSON files.

A task shows files (excerpts keep their real line numbers) and asks for claims as
`path:line — what is wrong`. A `claim` task carries a defect seeded into our own code, a `bug` task
the code just before a real fix, and a `control` task the same code just after it (its `pair` is the
bug task, its `fixed_lines` the lines the fix touched). The key says where the defect is and the
words that name its mechanism; it never reaches the prompt.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import orjson

from benchwarmers.errors import InvalidRequest

KINDS = ("claim", "bug", "control")
# The most a reviewer may write per task kind (the request's `max_tokens`): room for every claim a
# real review makes, one line each, but not for a small model rambling to the end of its window.
# A bug and its control get the same, so the pair compares like with like; mined pairs show more
# code (up to 220 lines) than a seeded claim's one function.
MAX_TOKENS = {"claim": 512, "bug": 768, "control": 768}
ID_PATTERN = re.compile(r"^[a-z0-9][a-z0-9.-]{0,79}$")
SHIPPED = "benchwarmers.bench.suite"  # package holding the `tasks/` folder


@dataclass(frozen=True)
class Excerpt:
    """Part of a file as shown to the reviewer: `text` starts at line `start` of the real file."""

    path: str
    start: int
    text: str

    @property
    def end(self) -> int:
        return self.start + max(len(self.text.splitlines()), 1) - 1

    def numbered(self) -> str:
        lines = self.text.splitlines()
        width = len(str(self.start + len(lines)))
        return "\n".join(f"{n:>{width}}  {line}" for n, line in enumerate(lines, start=self.start))


@dataclass(frozen=True)
class Key:
    """Where a defect is and what names it. `patterns` are case-insensitive regular expressions;
    a claim names the mechanism when any of them matches its text."""

    path: str
    function: str
    lines: tuple[int, int]
    mechanism: str
    patterns: tuple[str, ...]


@dataclass(frozen=True)
class Source:
    """Where the shown code comes from and under which licence it travels."""

    repo: str
    license: str
    url: str = ""
    commit: str = ""
    attribution: str = ""


@dataclass(frozen=True)
class Task:
    id: str
    kind: str
    files: tuple[Excerpt, ...]
    source: Source
    shape: str = "review"
    title: str = ""
    key: Key | None = None  # claim and bug tasks
    pair: str | None = None  # control tasks: the bug task they pair with
    fixed_lines: tuple[int, int] | None = None  # control tasks: what the fix changed
    test: str | None = None  # claim tasks: the project's test that catches the seeded defect
    seed: Mapping[str, Any] = field(default_factory=dict)  # claim tasks: the recorded mutation
    prompt_text: str | None = None  # a prompt of its own; else the standard review request

    @property
    def max_tokens(self) -> int:
        return MAX_TOKENS[self.kind]

    @property
    def pair_id(self) -> str | None:
        """The pair a bug or control task belongs to (`rebench-x`), None for claim tasks."""
        if self.kind == "control":
            return (self.pair or "").removesuffix("-bug") or None
        if self.kind == "bug":
            return self.id.removesuffix("-bug")
        return None

    def prompt(self) -> str:
        if self.prompt_text:
            return self.prompt_text
        shown = "\n\n".join(f"{e.path} (lines {e.start}-{e.end})\n```python\n{e.numbered()}\n```" for e in self.files)
        return (
            "Review this code for defects: logic errors, wrong conditions or boundaries, misused "
            "variables or arguments, missing awaits or guards, errors that are swallowed. Line numbers "
            "are the file's own.\n\n"
            f"{shown}\n\n"
            "List each defect you find as one line: `path:line — what is wrong and why`. Only claim "
            "what you can point to in the code shown; if you find no defect, say `no defects found`."
        )


def parse_task(data: Any, origin: str = "task") -> Task:
    """A task from its JSON form, or InvalidRequest saying what is wrong with it."""
    if not isinstance(data, dict):
        raise InvalidRequest(f"{origin}: a task is a JSON object")

    def need(name: str, kind: type | tuple[type, ...], where: Mapping[str, Any] = data) -> Any:
        value = where.get(name)
        if not isinstance(value, kind) or (isinstance(value, str) and not value):
            raise InvalidRequest(f"{origin}: {name!r} is missing or not a {getattr(kind, '__name__', kind)}")
        return value

    task_id = need("id", str)
    if not ID_PATTERN.match(task_id):
        raise InvalidRequest(f"{origin}: id {task_id!r} must be lower-case letters, digits, '.' and '-'")
    kind = need("kind", str)
    if kind not in KINDS:
        raise InvalidRequest(f"{origin}: kind must be one of {', '.join(KINDS)} (got {kind!r})")
    files = tuple(
        Excerpt(path=need("path", str, f), start=int(f.get("start") or 1), text=need("text", str, f))
        for f in need("files", list)
        if isinstance(f, dict) or _bad(origin, "each file is an object with path, start and text")
    )
    if not files:
        raise InvalidRequest(f"{origin}: a task shows at least one file")
    src = need("source", dict)
    source = Source(
        repo=need("repo", str, src),
        license=need("license", str, src),
        url=str(src.get("url") or ""),
        commit=str(src.get("commit") or ""),
        attribution=str(src.get("attribution") or ""),
    )
    key = None
    if kind in ("claim", "bug"):
        raw = need("key", dict)
        key = Key(
            path=need("path", str, raw),
            function=need("function", str, raw),
            lines=_span(raw.get("lines"), f"{origin}: key.lines"),
            mechanism=need("mechanism", str, raw),
            patterns=tuple(_patterns(raw.get("patterns"), origin)),
        )
        if key.path not in {f.path for f in files}:
            raise InvalidRequest(f"{origin}: key.path {key.path!r} is not one of the files shown")
    pair = fixed = None
    if kind == "control":
        pair = need("pair", str)
        fixed = _span(data.get("fixed_lines"), f"{origin}: fixed_lines")
    return Task(
        id=task_id,
        kind=kind,
        files=files,
        source=source,
        shape=str(data.get("shape") or "review"),
        title=str(data.get("title") or ""),
        key=key,
        pair=pair,
        fixed_lines=fixed,
        test=data.get("test") if isinstance(data.get("test"), str) else None,
        seed=_mapping(data.get("seed")),
        prompt_text=data.get("prompt") if isinstance(data.get("prompt"), str) else None,
    )


def task_json(task: Task) -> dict[str, Any]:
    """The JSON form `parse_task` reads (what `tools/suite_seed.py` and `suite mine` write)."""
    data: dict[str, Any] = {"id": task.id, "kind": task.kind, "shape": task.shape}
    if task.title:
        data["title"] = task.title
    data["source"] = {k: v for k, v in vars(task.source).items() if v}
    if task.key is not None:
        data["key"] = {**vars(task.key), "lines": list(task.key.lines), "patterns": list(task.key.patterns)}
    if task.pair is not None:
        data["pair"] = task.pair
    if task.fixed_lines is not None:
        data["fixed_lines"] = list(task.fixed_lines)
    if task.test:
        data["test"] = task.test
    if task.seed:
        data["seed"] = dict(task.seed)
    if task.prompt_text:
        data["prompt"] = task.prompt_text
    data["files"] = [{"path": e.path, "start": e.start, "text": e.text} for e in task.files]
    return data


def write_task(task: Task, folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{task.id}.json"
    path.write_bytes(orjson.dumps(task_json(task), option=orjson.OPT_INDENT_2) + b"\n")
    return path


def load_folder(folder: Path) -> list[Task]:
    """Every `*.json` task in a folder (not recursive), sorted by id."""
    if not folder.is_dir():
        raise InvalidRequest(f"{folder} is not a folder of task files (*.json)")
    tasks = []
    for path in sorted(folder.glob("*.json")):
        try:
            data = orjson.loads(path.read_bytes())
        except orjson.JSONDecodeError as exc:
            raise InvalidRequest(f"{path}: not JSON ({exc})") from None
        tasks.append(parse_task(data, origin=str(path)))
    return tasks


def shipped_folder() -> Path:
    return Path(str(resources.files(SHIPPED).joinpath("tasks")))


def load_tasks(extra: Iterable[Path] = ()) -> list[Task]:
    """The shipped tasks and those in `extra` folders; a task id may be defined once."""
    tasks: dict[str, Task] = {}
    for folder in (shipped_folder(), *extra):
        for task in load_folder(folder):
            if task.id in tasks:
                raise InvalidRequest(f"task {task.id!r} is defined twice (again in {folder})")
            tasks[task.id] = task
    for task in tasks.values():
        if task.kind == "control" and task.pair not in tasks:
            raise InvalidRequest(f"control task {task.id!r} names pair {task.pair!r}, which no task has")
    return sorted(tasks.values(), key=lambda t: t.id)


def select(tasks: Sequence[Task], patterns: Sequence[str]) -> list[Task]:
    """Tasks whose id matches any glob in `patterns` (all of them when none is given)."""
    if not patterns:
        return list(tasks)
    chosen = [t for t in tasks if any(fnmatch.fnmatchcase(t.id, p) for p in patterns)]
    if not chosen:
        raise InvalidRequest(f"no task matches {', '.join(patterns)}; `benchwarmers suite list` shows them")
    return chosen


def _span(value: Any, where: str) -> tuple[int, int]:
    if (
        not isinstance(value, list)
        or len(value) != 2
        or not all(isinstance(v, int) and v > 0 for v in value)
        or value[0] > value[1]
    ):
        raise InvalidRequest(f"{where} must be [first, last] line numbers")
    return value[0], value[1]


def _patterns(value: Any, origin: str) -> list[str]:
    if not isinstance(value, list) or not value or not all(isinstance(p, str) and p for p in value):
        raise InvalidRequest(f"{origin}: key.patterns must be a non-empty list of regular expressions")
    for pattern in value:
        try:
            re.compile(pattern, re.IGNORECASE)
        except re.error as exc:
            raise InvalidRequest(f"{origin}: key pattern {pattern!r} is not a regular expression ({exc})") from None
    return value


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, dict) else {}


def _bad(origin: str, why: str) -> bool:
    raise InvalidRequest(f"{origin}: {why}")
