"""Running the project's own tests against copies of its `src/`, many copies in one go.

One Python process (started with `-c`, so it imports no `benchwarmers` of its own) imports the
third-party libraries every test run needs, then forks one child per run: the child puts its copy
first on the import path (and on PYTHONPATH, for the processes a test starts), checks that
`benchwarmers` is imported from the copy, and runs pytest from the checkout, so the tests are the
project's own. Forking after the warm-up makes a run cost what the project's own modules and the
test cost, not openai's or fastapi's import time. POSIX only (os.fork).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import orjson

from benchwarmers.errors import InvalidRequest

NOT_THE_COPY = 97
# pytest plugins a seed's test does not need (the fuzzers' and anyio's): left out, each run starts sooner.
PLUGINS_OFF = ("cacheprovider", "schemathesis", "hypothesispytest", "anyio")
# Imported once before forking: what the tests' fixtures import (a missing one is skipped).
WARM = (
    "pytest",
    "_pytest.assertion.rewrite",
    "_pytest.python",
    "pytest_asyncio",
    "openai",
    "fastapi",
    "starlette.applications",
    "sqlalchemy.ext.asyncio",
    "alembic",
    "aiohttp",
    "aiosqlite",
    "pydantic_settings",
    "httpx2",
    "uvicorn",
    "jinja2",
    "limits.aio.storage",
    "typer.testing",
    "rich.progress",
    "orjson",
    "cryptography.fernet",
    "mcp",
    "libcst",
)
RUNNER = r"""
import importlib, json, os, pathlib, sys, traceback
jobs, width, warm = json.loads(sys.argv[1]), int(sys.argv[2]), json.loads(sys.argv[3])
for name in warm:
    try:
        importlib.import_module(name)
    except Exception:
        pass
running = {}

def reap():
    pid, status = os.wait()
    print(json.dumps({"job": running.pop(pid), "code": os.waitstatus_to_exitcode(status)}), flush=True)

for index, job in enumerate(jobs):
    while len(running) >= width:
        reap()
    sys.stdout.flush(); sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        code = 3
        try:
            out = os.open(job["out"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            os.dup2(out, 1); os.dup2(out, 2)
            copy = pathlib.Path(job["src"]).resolve()
            sys.path.insert(0, str(copy))
            os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(copy), os.environ.get("PYTHONPATH")]))
            import benchwarmers
            found = pathlib.Path(benchwarmers.__file__).resolve()
            if not found.is_relative_to(copy):
                print(f"benchwarmers was imported from {found}, not from the copy in {copy}")
                code = NOT_THE_COPY
            else:
                import pytest
                code = int(pytest.main(job["args"]))
        except BaseException:
            traceback.print_exc()
        finally:
            sys.stdout.flush(); sys.stderr.flush()
            os._exit(code)
    running[pid] = index
while running:
    reap()
""".replace("NOT_THE_COPY", str(NOT_THE_COPY))


@dataclass(frozen=True)
class Run:
    """What to test: the `src` folder to import, the node ids, and whether to stop at the first failure."""

    src: Path
    node_ids: tuple[str, ...]
    stop_first: bool = True

    def args(self) -> list[str]:
        plugins = [arg for name in PLUGINS_OFF for arg in ("-p", f"no:{name}")]
        return ["-q", *(["-x"] if self.stop_first else []), *plugins, "-rfE", *self.node_ids]


@dataclass(frozen=True)
class Result:
    code: int  # pytest's exit code: 0 passed, 1 some failed, 2+ did not run as asked
    output: str

    @property
    def tail(self) -> str:
        return "\n".join(self.output.strip().splitlines()[-12:])

    def failing(self) -> list[str]:
        """Node ids pytest's summary lists as FAILED or ERROR."""
        found = []
        for line in self.output.splitlines():
            for mark in ("FAILED ", "ERROR "):
                if line.startswith(mark):
                    found.append(line[len(mark) :].split(" - ")[0].strip())
        return found


def copy_src(root: Path, into: Path) -> Path:
    """A copy of the checkout's `src/` (compiled files too: they are checked against their source)."""
    target = into / "src"
    shutil.copytree(root / "src", target, ignore=shutil.ignore_patterns("*.egg-info"))
    return target


def run_tests(
    root: Path,
    runs: Sequence[Run],
    *,
    jobs: int = 2,
    done: Callable[[int, Result], None] = lambda _i, _r: None,
) -> list[Result]:
    """Each run's result, in order; `done(index, result)` is called as each one finishes."""
    if not hasattr(os, "fork"):
        raise InvalidRequest("seeding runs the tests in forked processes: it needs Linux or macOS")
    results: dict[int, Result] = {}
    with tempfile.TemporaryDirectory(prefix="bw-tests-") as tmp:
        outs = [Path(tmp) / f"run-{i}.txt" for i in range(len(runs))]
        spec = [{"src": str(r.src), "args": r.args(), "out": str(o)} for r, o in zip(runs, outs, strict=True)]
        with subprocess.Popen(  # noqa: S603 - our own interpreter running our own runner
            [sys.executable, "-c", RUNNER, orjson.dumps(spec).decode(), str(max(1, jobs)), orjson.dumps(WARM).decode()],
            cwd=root,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        ) as runner:
            assert runner.stdout is not None and runner.stderr is not None
            try:
                for line in runner.stdout:
                    report = orjson.loads(line)
                    index = report["job"]
                    result = Result(report["code"], outs[index].read_text(encoding="utf-8", errors="replace"))
                    if result.code == NOT_THE_COPY:
                        raise InvalidRequest(f"the tests did not import the copy: {result.tail}")
                    results[index] = result
                    done(index, result)
            except BaseException:
                runner.kill()  # its children finish their one test run and exit
                raise
            problem = runner.stderr.read()
        if len(results) != len(runs):
            raise InvalidRequest(f"the test runner stopped early (exit {runner.returncode}): {problem.strip()[-2000:]}")
    return [results[i] for i in range(len(runs))]
