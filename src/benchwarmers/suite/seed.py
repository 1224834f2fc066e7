"""`claim-*` tasks: a recorded mutation of our own code, kept only when our own test catches it.

A seed names the mutation (suite/mutations.py), the sentence and patterns that name its
mechanism, and the project test that must fail on it. Seeding copies the project's `src/` to a
temporary folder, mutates the copy, and runs the test there in a subprocess (the copy first on
the import path, checked; the project's own `tests/`). A mutation the test does not catch is
refused, and so is a test that fails on the unmutated copy. The task shows the mutated function
with some context at its real line numbers; nothing in it says what was changed.
"""

from __future__ import annotations

import difflib
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from benchwarmers.errors import InvalidRequest
from benchwarmers.suite.mutations import Mutation, apply_mutation, function_span
from benchwarmers.suite.tasks import ID_PATTERN, Excerpt, Key, Source, Task, _patterns

CONTEXT = 10  # lines shown above and below the mutated function
CATALOGUE = Path("src/benchwarmers/suite/seeds.json")  # within the project
TASKS = Path("src/benchwarmers/suite/tasks")
# Runs pytest only once the copy is what `import benchwarmers` finds: PYTHONPATH puts it first,
# and this refuses to run the project's own code by mistake.
BOOTSTRAP = (
    "import sys, pathlib, benchwarmers, pytest\n"
    "copy = pathlib.Path(sys.argv[1]).resolve()\n"
    "found = pathlib.Path(benchwarmers.__file__).resolve()\n"
    "if not found.is_relative_to(copy):\n"
    "    print(f'benchwarmers was imported from {found}, not from the copy in {copy}'); sys.exit(97)\n"
    "sys.exit(pytest.main(sys.argv[2:]))\n"
)
NOT_THE_COPY = 97
# pytest plugins a seed's test does not need (the fuzzers' and anyio's): left out, each run starts
# in about half the time.
PLUGINS_OFF = ("schemathesis", "hypothesispytest", "anyio")


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


# -- running the tests on a copy -----------------------------------------------------------------


@dataclass(frozen=True)
class TestRun:
    code: int
    output: str

    @property
    def tail(self) -> str:
        return "\n".join(self.output.strip().splitlines()[-12:])


def copy_src(root: Path, into: Path) -> Path:
    target = into / "src"
    # Compiled files come along: they are checked against their source, so only the mutated module is
    # compiled again.
    shutil.copytree(root / "src", target, ignore=shutil.ignore_patterns("*.egg-info"))
    return target


def run_tests(root: Path, src: Path, node_ids: Sequence[str], *, stop_first: bool = True) -> TestRun:
    """pytest on `node_ids` from `root` (its tests), importing benchwarmers from `src`."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(src), *filter(None, [env.get("PYTHONPATH")])])
    plugins = [arg for name in ("cacheprovider", *PLUGINS_OFF) for arg in ("-p", f"no:{name}")]
    args = ["-q", *(["-x"] if stop_first else []), *plugins, "-rfE", *node_ids]
    done = subprocess.run(  # noqa: S603 - our own interpreter, our own test ids
        [sys.executable, "-c", BOOTSTRAP, str(src), *args],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    run = TestRun(done.returncode, done.stdout + done.stderr)
    if run.code == NOT_THE_COPY:
        raise InvalidRequest(f"the tests did not import the copy: {run.tail}")
    return run


def failing(run: TestRun) -> list[str]:
    """Node ids pytest's summary lists as FAILED or ERROR."""
    out = []
    for line in run.output.splitlines():
        for mark in ("FAILED ", "ERROR "):
            if line.startswith(mark):
                out.append(line[len(mark) :].split(" - ")[0].strip())
    return out


@dataclass(frozen=True)
class Outcome:
    seed: Seed
    caught: bool
    message: str
    task: Task | None = None


def check_unmutated(root: Path, seeds: Sequence[Seed]) -> dict[str, str]:
    """Seeds whose test does not pass on the unmutated code, with why (one pytest run for all)."""
    with tempfile.TemporaryDirectory(prefix="bw-seed-") as tmp:
        run = run_tests(root, copy_src(root, Path(tmp)), sorted({s.test for s in seeds}), stop_first=False)
    if run.code == 0:
        return {}
    bad = failing(run)
    refused = {s.id: f"its test {s.test} fails on the unmutated code" for s in seeds if s.test in bad}
    if not refused:  # collection error, missing test: say so for every seed
        refused = {s.id: f"the tests do not pass on the unmutated code (pytest exit {run.code}):\n{run.tail}" for s in seeds}
    return refused


def check_seed(root: Path, seed: Seed) -> Outcome:
    """Mutate a copy of `src/`, run the seed's test on it: caught (with its task) or refused."""
    try:
        task = build_task(seed, root / "src")
        with tempfile.TemporaryDirectory(prefix="bw-seed-") as tmp:
            src = copy_src(root, Path(tmp))
            (src.parent / seed.path).write_text(mutated_source(seed, src)[1], encoding="utf-8")
            run = run_tests(root, src, [seed.test])
    except InvalidRequest as exc:
        return Outcome(seed, False, f"refused: {exc}")
    if run.code == 0:
        return Outcome(
            seed,
            False,
            f"refused: {seed.test} passes on the mutated code, so it does not catch "
            f"{seed.mutation.mechanism} in {seed.mutation.function} ({seed.path}); pick a test that fails on it "
            "or another mutation",
        )
    if run.code != 1:
        return Outcome(seed, False, f"refused: {seed.test} did not run on the mutated code (pytest exit {run.code}):\n{run.tail}")
    return Outcome(seed, True, f"caught by {seed.test}", task)


def seed_all(
    root: Path,
    seeds: Sequence[Seed],
    *,
    jobs: int = 2,
    progress: Callable[[Outcome], None] = lambda _o: None,
) -> list[Outcome]:
    """Every seed checked: the unmutated run first, then each mutation (`jobs` at a time)."""
    unmutated = check_unmutated(root, seeds)
    outcomes: dict[str, Outcome] = {}
    for seed in seeds:
        if seed.id in unmutated:
            outcomes[seed.id] = Outcome(seed, False, f"refused: {unmutated[seed.id]}")
            progress(outcomes[seed.id])
    todo = [s for s in seeds if s.id not in outcomes]
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        for future in as_completed([pool.submit(check_seed, root, s) for s in todo]):
            outcome = future.result()
            outcomes[outcome.seed.id] = outcome
            progress(outcome)
    return [outcomes[s.id] for s in seeds]


def summary(outcomes: Iterable[Outcome]) -> Mapping[str, int]:
    done = list(outcomes)
    return {"caught": sum(o.caught for o in done), "refused": sum(not o.caught for o in done)}
