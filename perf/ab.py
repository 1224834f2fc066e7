"""Two builds of the bench side by side in one run: before and after a change.

    python -m perf.ab --before /path/to/other/.venv/bin/benchwarmers            # this tree is "after"
    python -m perf.ab --before OLD --collection solo --concurrency 16 --rounds 5

Both benches get the same fake provider and the same load, in turns (A B A B ...), so the
machine's drift falls on both; the table gives each one's median over the rounds and the ratio.
Make the "before" build with `git worktree add /tmp/before REV` and a venv there.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
from pathlib import Path

from perf.fleet import start_fake
from perf.report import console
from perf.workers import WorkersBench, measure

KEYS = (
    "panels/s",
    "bench CPU ms/panel",
    "overhead p50 ms",
    "overhead p99 ms",
    "p99 ms",
    "machine busy %",
    "failed",
    "failed seats",
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--before", required=True, help="the `benchwarmers` executable of the build to compare against")
    parser.add_argument("--after", default="", help="the other executable (default: this tree's)")
    parser.add_argument("--collection", default="five", choices=("five", "solo"))
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--count", type=int, default=2000, help="measured panels per round (2000)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--latency", type=float, default=0.05)
    args = parser.parse_args()
    logs = Path(tempfile.mkdtemp(prefix="bench-perf-ab-"))
    fake, fake_port = start_fake(args.latency, 8, logs)
    benches: dict[str, WorkersBench] = {}
    rows: dict[str, list[dict[str, float]]] = {"before": [], "after": []}
    try:
        for name, executable in (("before", args.before), ("after", args.after)):
            bench = WorkersBench(logs)
            bench.executable = executable or bench.executable
            bench.configure(fake_port, 8)
            bench.start_workers(1)
            benches[name] = bench
        for _ in range(args.rounds):
            for name, bench in benches.items():
                figures = asyncio.run(
                    measure(
                        bench,
                        args.count,
                        4 * args.concurrency,
                        fake.pid,
                        model=f"bench/{args.collection}",
                        connections=args.concurrency,
                    )
                )
                rows[name].append(figures)
                console.print(f"{name:>6}: " + "  ".join(f"{key} {figures[key]:.2f}" for key in KEYS))
    finally:
        for bench in benches.values():
            bench.stop()
            bench.remove()
        fake.stop()
    console.print(f"\nbench/{args.collection}, {args.concurrency} connections, medians of {args.rounds} rounds")
    console.print(f"{'':<22}{'before':>12}{'after':>12}{'after ÷ before':>16}")
    for key in KEYS:
        before = statistics.median(r[key] for r in rows["before"])
        after = statistics.median(r[key] for r in rows["after"])
        ratio = f"{after / before:.2f}" if before else "-"
        console.print(f"{key:<22}{before:>12.2f}{after:>12.2f}{ratio:>16}")


if __name__ == "__main__":
    main()
