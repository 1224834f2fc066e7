"""`claim-*` tasks: a recorded mutation of our own code, kept only when our own test catches it.

A seed names the mutation (mutations.py), the sentence and patterns that name its
mechanism, and the project test that must fail on it. Seeding copies the project's `src/` to a
temporary folder, mutates the copy, and runs the test there (testrun.py: the copy first on
the import path, checked; the project's own `tests/`). A mutation the test does not catch is
refused, and so is a test that fails on the unmutated copy. The task shows the mutated function
with some context at its real line numbers; nothing in it says what was changed.
"""

from __future__ import annotations

import difflib
import tempfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from benchwarmers.bench.suite.tasks import ID_PATTERN, Excerpt, Key, Source, Task, _patterns
from benchwarmers.errors import InvalidRequest
from tools.seeding.testrun import Result, Run, copy_src, run_tests

CONTEXT = 10  # lines shown above and below the mutated function
# The mutations need libcst (a fifth of a second to import): loaded when a seed is read, not by `--help`.
if TYPE_CHECKING:
    from tools.seeding.mutations import Mutation

CATALOGUE = Path("tools/seeding/seeds.json")  # within the project
TASKS = Path("src/benchwarmers/bench/suite/tasks")


@dataclass(frozen=True)
class Seed:
    id: str
    mutation: Mutation
    mechanism: str  # one sentence: what is wrong
    patterns: tuple[str, ...]  # words a reviewer would use to name it
    test: str  # pytest node id that catches it

    @property
    def path(self) -> str:
        """The mutated file as shown, relative to the project."""
        return "src/" + self.mutation.module.replace(".", "/") + ".py"

    def as_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "mutation": self.mutation.as_json(),
            "mechanism": self.mechanism,
            "patterns": list(self.patterns),
            "test": self.test,
        }


def parse_seed(data: Any, origin: str = "seed") -> Seed:
    if not isinstance(data, dict):
        raise InvalidRequest(f"{origin}: a seed is a JSON object")
    seed_id = data.get("id")
    if not isinstance(seed_id, str) or not seed_id.startswith("claim-") or not ID_PATTERN.match(seed_id):
        raise InvalidRequest(f"{origin}: id must be claim-<slug> in lower-case letters, digits, '.' and '-'")
    where = f"{origin} ({seed_id})"
    for name in ("mechanism", "test"):
        if not isinstance(data.get(name), str) or not data[name]:
            raise InvalidRequest(f"{where}: {name!r} is missing or not a string")
    if "::" not in data["test"]:
        raise InvalidRequest(f"{where}: test must be a pytest node id, e.g. tests/test_x.py::test_y")
    if not isinstance(data.get("mutation"), dict):
        raise InvalidRequest(f"{where}: 'mutation' is missing or not an object")
    from tools.seeding.mutations import Mutation

    return Seed(
        id=seed_id,
        mutation=Mutation.from_json(data["mutation"], where),
        mechanism=data["mechanism"],
        patterns=tuple(_patterns(data.get("patterns"), where)),
        test=data["test"],
    )


def load_seeds(path: Path) -> list[Seed]:
    try:
        data = orjson.loads(path.read_bytes())
    except FileNotFoundError:
        raise InvalidRequest(f"{path}: no such seed catalogue") from None
    except orjson.JSONDecodeError as exc:
        raise InvalidRequest(f"{path}: not JSON ({exc})") from None
    if not isinstance(data, list):
        raise InvalidRequest(f"{path}: a seed catalogue is a JSON list of seeds")
    seeds = [parse_seed(item, str(path)) for item in data]
    ids = [s.id for s in seeds]
    if len(set(ids)) != len(ids):
        twice = sorted({i for i in ids if ids.count(i) > 1})
        raise InvalidRequest(f"{path}: seed ids must be unique ({', '.join(twice)} twice)")
    return seeds


def choose(seeds: Sequence[Seed], only: Iterable[str]) -> list[Seed]:
    wanted = [o if o.startswith("claim-") else f"claim-{o}" for o in only]
    if not wanted:
        return list(seeds)
    known = {s.id: s for s in seeds}
    unknown = [w for w in wanted if w not in known]
    if unknown:
        raise InvalidRequest(f"no seed {', '.join(unknown)}; seeds are: {', '.join(known)}")
    return [known[w] for w in wanted]


def project_root(start: Path) -> Path:
    """The checkout holding `src/benchwarmers` and `tests/`, from `start` upwards."""
    for folder in (start.resolve(), *start.resolve().parents):
        if (folder / "src" / "benchwarmers").is_dir() and (folder / "tests").is_dir():
            return folder
    raise InvalidRequest(
        f"{start} is not inside a checkout of benchwarmers (src/benchwarmers and tests/): "
        "seeding runs the project's own tests, so run it there or pass --repo"
    )


# -- the task ------------------------------------------------------------------------------------


def mutated_source(seed: Seed, src: Path) -> tuple[str, str]:
    """(original, mutated) text of the seed's module under `src`."""
    from tools.seeding.mutations import apply_mutation

    file = src.parent / seed.path
    if not file.is_file():
        raise InvalidRequest(f"{seed.id}: no module {seed.mutation.module} ({seed.path})")
    original = file.read_text(encoding="utf-8")
    return original, apply_mutation(original, seed.mutation, origin=seed.path)


def changed_lines(original: str, mutated: str) -> tuple[int, int]:
    """The lines of `mutated` (1-based) that differ; a deletion gives the two lines around it."""
    before, after = original.splitlines(), mutated.splitlines()
    spans = [
        (j1 + 1, j2) if j2 > j1 else (max(1, j1), min(len(after), j1 + 1))
        for tag, _i1, _i2, j1, j2 in difflib.SequenceMatcher(None, before, after, autojunk=False).get_opcodes()
        if tag != "equal"
    ]
    if not spans:
        raise InvalidRequest("the mutation changed no line")
    return min(s[0] for s in spans), max(s[1] for s in spans)


def build_task(seed: Seed, src: Path) -> Task:
    """The task for `seed`, from the project's `src` folder (no test is run here)."""
    from tools.seeding.mutations import function_span

    original, mutated = mutated_source(seed, src)
    lines = mutated.splitlines()
    first, last = function_span(mutated, seed.mutation.function)
    start, end = max(1, first - CONTEXT), min(len(lines), last + CONTEXT)
    excerpt = Excerpt(path=seed.path, start=start, text="\n".join(lines[start - 1 : end]) + "\n")
    key = Key(
        path=seed.path,
        function=seed.mutation.function,
        lines=changed_lines(original, mutated),
        mechanism=seed.mechanism,
        patterns=seed.patterns,
    )
    return Task(
        id=seed.id,
        kind="claim",
        files=(excerpt,),
        source=Source(repo="benchwarmers", license="MIT"),
        title=f"{seed.mutation.function} in {seed.path}",
        key=key,
        test=seed.test,
        seed=seed.mutation.as_json(),
    )


# -- seeding: the tests on mutated copies -------------------------------------------------------


@dataclass(frozen=True)
class Outcome:
    seed: Seed
    caught: bool
    message: str
    task: Task | None = None


def judge(seed: Seed, task: Task, unmutated: Result, mutated: Result) -> Outcome:
    """Caught when the seed's test passed on the unmutated copy and failed on the mutated one."""
    failed = unmutated.failing()
    # A parametrized test is listed case by case: `test_x[1-2]` is a case of `test_x`.
    if any(f == seed.test or f.startswith(seed.test + "[") for f in failed) or (unmutated.code != 0 and not failed):
        why = f"its test {seed.test} does not pass on the unmutated code (pytest exit {unmutated.code})"
        return Outcome(seed, False, f"refused: {why}:\n{unmutated.tail}")
    if mutated.code == 0:
        return Outcome(
            seed,
            False,
            f"refused: {seed.test} passes on the mutated code, so it does not catch "
            f"{seed.mutation.mechanism} in {seed.mutation.function} ({seed.path}); pick a test that fails on it "
            "or another mutation",
        )
    if mutated.code != 1:
        why = f"{seed.test} did not run on the mutated code (pytest exit {mutated.code})"
        return Outcome(seed, False, f"refused: {why}:\n{mutated.tail}")
    return Outcome(seed, True, f"caught by {seed.test}", task)


def seed_all(
    root: Path,
    seeds: Sequence[Seed],
    *,
    jobs: int = 2,
    progress: Callable[[Outcome], None] = lambda _o: None,
) -> list[Outcome]:
    """Every seed checked: all the named tests once on an unmutated copy of `src/`, and each seed's
    test on a copy with its mutation (`jobs` runs at a time). A seed is caught when its test passes
    on the first and fails on the second."""
    outcomes: dict[str, Outcome] = {}
    with tempfile.TemporaryDirectory(prefix="bw-seed-") as tmp:
        folder = Path(tmp)
        runs = [Run(copy_src(root, folder / "unmutated"), tuple(sorted({s.test for s in seeds})), stop_first=False)]
        tasks: dict[int, tuple[Seed, Task]] = {}
        for seed in seeds:
            try:
                task = build_task(seed, root / "src")
                src = copy_src(root, folder / seed.id)
                module = src.parent / seed.path
                module.write_text(mutated_source(seed, src)[1], encoding="utf-8")
                for compiled in module.parent.glob(f"__pycache__/{module.stem}.*.pyc"):
                    compiled.unlink()  # never the unmutated module's bytecode, whatever the clock says
            except InvalidRequest as exc:
                outcomes[seed.id] = Outcome(seed, False, f"refused: {exc.message}")
                progress(outcomes[seed.id])
                continue
            tasks[len(runs)] = (seed, task)
            runs.append(Run(src, (seed.test,)))
        unmutated: list[Result] = []
        waiting: dict[int, Result] = {}

        def done(index: int, result: Result) -> None:
            if index == 0:
                unmutated.append(result)
            else:
                waiting[index] = result
            if unmutated:
                for i, mutated in sorted(waiting.items()):
                    seed, task = tasks[i]
                    outcomes[seed.id] = judge(seed, task, unmutated[0], mutated)
                    progress(outcomes[seed.id])
                waiting.clear()

        run_tests(root, runs, jobs=jobs, done=done)
    return [outcomes[s.id] for s in seeds]
