"""Sample the gateway with py-spy while a scenario runs, and say where its time went.

py-spy reads the process from outside (no code in the gateway changes) and writes collapsed stacks:
one line per distinct stack, `frame;frame;frame count`. `hot` folds them into the functions that
held the CPU themselves (self) and those on the stack at all (total), as shares of the samples.
The raw file loads into speedscope or `flamegraph.pl` for the whole picture.

py-spy leaves out threads that sleep in the kernel, but not a worker thread blocked in a queue's
`get()` (aiosqlite's connection threads spend most of their life there): samples whose innermost
line is such a wait are dropped here, by reading that line of source.
"""

from __future__ import annotations

import linecache
import re
import shutil
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path


def py_spy() -> str | None:
    return shutil.which("py-spy", path=str(Path(sys.executable).parent)) or shutil.which("py-spy")


class Profile:
    def __init__(self, pid: int, out: Path, rate: int = 250) -> None:
        executable = py_spy()
        if executable is None:
            raise RuntimeError("py-spy is not installed (pip install py-spy)")
        self.out = out
        argv = [executable, "record", "--pid", str(pid), "--rate", str(rate), "--format", "raw", "--nonblocking"]
        self.process = subprocess.Popen(
            [*argv, "--full-filenames", "--output", str(out)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            stdin=subprocess.DEVNULL,
        )

    def stop(self) -> Path:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=5)
        return self.out


_TRIM = re.compile(r"^.*(site-packages/|/src/|/lib/python3\.\d+/)")
_WAIT = re.compile(r"\.get\(\)|\.wait\(|\.acquire\(")


def _where(frame: str) -> tuple[str, str, int]:
    # py-spy frames read `function (/full/path/module.py:line)`.
    name, _, where = frame.partition(" (")
    path, _, line = where.rstrip(")").rpartition(":")
    return name, path, int(line) if line.isdigit() else 0


def _function(frame: str) -> str:
    """`function (package/module.py)`: no line, no install prefix."""
    name, path, _ = _where(frame)
    return f"{name} ({_TRIM.sub('', path)})"


def _waiting(frame: str) -> bool:
    _, path, line = _where(frame)
    return bool(line) and bool(_WAIT.search(linecache.getline(path, line)))


def _stacks(raw: Path) -> list[tuple[list[str], int]]:
    stacks = []
    for line in raw.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        frames = [f for f in stack.split(";") if f and not f.startswith(("process ", "thread "))]
        if frames and not _waiting(frames[-1]):
            stacks.append(([_function(f) for f in frames], int(count)))
    return stacks


def hot(raw: Path, top: int = 15) -> list[tuple[str, float, float]]:
    """(function, self %, total %) for the functions with the most self time."""
    own: Counter[str] = Counter()
    anywhere: Counter[str] = Counter()
    samples = 0
    for frames, n in _stacks(raw):
        samples += n
        own[frames[-1]] += n
        for name in set(frames):
            anywhere[name] += n
    if not samples:
        return []
    return [(name, 100 * n / samples, 100 * anywhere[name] / samples) for name, n in own.most_common(top)]


def _package(function: str) -> str:
    # `name (package/module.py)` → the top-level package (`asyncio`, `benchwarmers`, `sqlalchemy`).
    where = function.rsplit(" (", 1)[-1].rstrip(")")
    return where.split("/", 1)[0].removesuffix(".py") if "/" in where else where.removesuffix(".py")


def by_package(raw: Path) -> list[tuple[str, float]]:
    """Self time per top-level package, as shares of the samples: which layer holds the CPU."""
    own: Counter[str] = Counter()
    for frames, n in _stacks(raw):
        own[_package(frames[-1])] += n
    samples = sum(own.values())
    return [(name, 100 * n / samples) for name, n in own.most_common()] if samples else []
