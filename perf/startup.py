"""How long the CLI takes to start: CPU and wall time of a few commands that do little else.

    python -m perf.startup               # 15 runs of each command
    python -m perf.startup --runs 30 --benchwarmers OTHER/.venv/bin/benchwarmers

Each command runs as its own process in one fresh home (`BENCHWARMERS_HOME`, migrated by a first
`collection list` that is not counted), stdout piped as a script would. As after `pip install`, the
modules are read compiled from `__pycache__`: PYTHONDONTWRITEBYTECODE is dropped for the children and
each command runs once uncounted first. The CPU is the child's user +
system time (`resource.getrusage(RUSAGE_CHILDREN)` before and after each run); wall time is
`time.perf_counter` around it. Medians per command.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

COMMANDS: tuple[tuple[str, ...], ...] = (
    ("--version",),
    ("--help",),
    ("collection", "list"),
    ("model", "list"),
    ("endpoint", "list"),
)


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def measure(command: list[str], env: dict[str, str]) -> tuple[float, float]:
    """One run: (CPU seconds, wall seconds)."""
    cpu, wall = children_cpu(), time.perf_counter()
    subprocess.run(command, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return children_cpu() - cpu, time.perf_counter() - wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=15, help="runs of each command (default 15)")
    parser.add_argument("--benchwarmers", default=None, help="the executable (default: the one beside this python)")
    args = parser.parse_args()
    executable = args.benchwarmers or str(Path(sys.executable).with_name("benchwarmers"))
    home = Path(tempfile.mkdtemp(prefix="bw-startup-"))
    env = {**os.environ, "BENCHWARMERS_HOME": str(home)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    try:
        measure([executable, "collection", "list"], env)  # creates and migrates the store, not counted
        for words in COMMANDS:
            measure([executable, *words], env)  # compiles what it imports, not counted
        print(f"{'command':<28} {'CPU ms (user+sys)':>18} {'wall ms':>9}   median of {args.runs}")
        for words in COMMANDS:
            runs = [measure([executable, *words], env) for _ in range(args.runs)]
            cpu = statistics.median(r[0] for r in runs) * 1000
            wall = statistics.median(r[1] for r in runs) * 1000
            print(f"{'benchwarmers ' + ' '.join(words):<28} {cpu:>18.0f} {wall:>9.0f}")
    finally:
        shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    main()
