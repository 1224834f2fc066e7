"""`serve --workers 2` beside `--workers 1` on the same run: five-seat panels at 64 connections.

    python -m perf.workers            # 4000 measured panels per server (about two minutes)
    python -m perf.workers --count 1000

The fake provider (perf/upstream.py, fixed latency) and each bench run in their own processes;
this process is the load driver. The bench's CPU is its process and every worker's (/proc).
Nothing here is part of the test suite; the figures go in docs/BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import re
import subprocess
import tempfile
import time
from collections import Counter
from pathlib import Path

from perf.driver import chat_body, run_load
from perf.fleet import Bench, Process, free_port, http_get, machine_times, start_fake, usage_of, wait_for_port
from perf.measure import percentile
from perf.report import console

CONNECTIONS = 64


class WorkersBench(Bench):
    def start_workers(self, workers: int) -> int:
        self.port = free_port()
        argv = [self.executable, "serve", "--bind", f"127.0.0.1:{self.port}"]
        argv += ["--workers", str(workers)] if workers > 1 else []  # (a bench without the option can be measured)
        self.process = Process("benchwarmers serve", argv, env=self.env, log=self.logs / f"bench-w{workers}.log")
        wait_for_port(self.port, self.process.popen, "benchwarmers serve")
        for _ in range(120):  # the port is bound at once; a worker answers once its app has started
            with contextlib.suppress(OSError):
                if http_get(self.port, "/readyz")[0] == 200:
                    return self.port
            time.sleep(0.5)
        raise RuntimeError("bench not ready")

    def pids(self) -> list[int]:
        """The serve process and its workers."""
        assert self.process is not None
        return [self.process.pid, *children(self.process.pid)]

    def cpu(self) -> float:
        """CPU seconds of the serve process and its workers."""
        return sum(usage_of(pid).cpu for pid in self.pids())


def children(pid: int) -> list[int]:
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        text = (task / "children").read_text().split()
        for child in map(int, text):
            found += [child, *children(child)]
    return found


def connections_per_worker(port: int) -> list[int]:
    """How many of the driver's connections each worker process accepted (from `ss`), largest first."""
    out = subprocess.run(
        ["ss", "-Htnp", "state", "established", f"( sport = :{port} )"], capture_output=True, text=True, check=False
    ).stdout
    per_pid = Counter(re.findall(r"pid=(\d+)", out))
    return sorted(per_pid.values(), reverse=True)


async def measure(
    bench: WorkersBench,
    count: int,
    warmup: int,
    fake_pid: int,
    *,
    model: str = "bench/five",
    connections: int = CONNECTIONS,
    stagger: float = 0.05,
) -> dict[str, float]:
    body = chat_body(model)
    await run_load("127.0.0.1", bench.port, "/v1/chat/completions", body, count=warmup, concurrency=connections)
    before, fake_before, machine_before = bench.cpu(), usage_of(fake_pid).cpu, machine_times()
    running = asyncio.ensure_future(
        run_load(
            "127.0.0.1", bench.port, "/v1/chat/completions", body, count=count, concurrency=connections, stagger=stagger
        )
    )
    await asyncio.sleep(stagger + 1.0)  # every connection is open by now
    spread = await asyncio.to_thread(connections_per_worker, bench.port)
    load = await running
    cpu = bench.cpu() - before
    fake_cpu = usage_of(fake_pid).cpu - fake_before
    machine_after = machine_times()
    elapsed = max(1, machine_after.total - machine_before.total)
    busy = (machine_after.busy - machine_before.busy) / elapsed
    interrupts = (machine_after.interrupts - machine_before.interrupts) / elapsed
    ok = [s for s in load.samples if s.status == 200 and s.error is None]
    overhead = [s.wall - max(s.seats) for s in ok if s.seats]
    walls = [s.wall for s in ok]
    return {
        "panels": len(ok),
        "failed": len(load.samples) - len(ok),
        "failed seats": sum(s.seat_errors for s in ok),
        "panels/s": len(ok) / load.seconds,
        "p50 ms": 1000 * (percentile(walls, 50) or 0),
        "p99 ms": 1000 * (percentile(walls, 99) or 0),
        "overhead p50 ms": 1000 * (percentile(overhead, 50) or 0),
        "overhead p99 ms": 1000 * (percentile(overhead, 99) or 0),
        "bench CPU ms/panel": 1000 * cpu / max(1, len(ok)),
        "driver CPU s": load.driver_cpu,
        # Where the two cores went: the bench, the fake provider, and everything together.
        "bench cores": cpu / load.seconds,
        "fake cores": fake_cpu / load.seconds,
        "driver cores": load.driver_cpu / load.seconds,
        "machine busy %": 100 * busy,
        "of which interrupts %": 100 * interrupts,
        # The driver's connections as the workers accepted them: a busy worker can take most of them.
        "most connections on one worker": float(spread[0]) if spread else 0.0,
    }


def machine_ceiling(one_worker: dict[str, float], cores: int) -> float:
    """The panels/s this machine could give two workers: every core busy with the bench, the fake
    provider and the driver, each at the CPU per panel measured with one worker (the kernel's own
    share left out, so this is an upper bound), and never more than twice one worker."""
    per_panel = (one_worker["bench cores"] + one_worker["fake cores"] + one_worker["driver cores"]) / one_worker[
        "panels/s"
    ]
    return min(2 * one_worker["panels/s"], cores / per_panel)


def print_comparison(rows: dict[int, dict[str, float]], rounds: str = "") -> None:
    """The figures per worker count side by side, the speed-up (`rounds`: each round's, when there
    were several) and what the machine's cores allow."""
    width = max(len(key) for key in next(iter(rows.values()))) + 2
    console.print(f"{'':<{width}}" + "".join(f"{f'--workers {w}':>14}" for w in rows))
    for key in next(iter(rows.values())):
        console.print(f"{key:<{width}}" + "".join(f"{rows[w][key]:>14.1f}" for w in rows))
    if 1 in rows and 2 in rows:
        per_round = f" (rounds: {rounds})" if rounds else ""
        console.print(f"speed-up: {rows[2]['panels/s'] / rows[1]['panels/s']:.2f}x{per_round}")
        ceiling = machine_ceiling(rows[1], os.cpu_count() or 1)
        console.print(
            f"what {os.cpu_count()} cores allow at --workers 1's CPU per panel (bench + fake + driver): "
            f"{ceiling:.0f} panels/s ({ceiling / rows[1]['panels/s']:.2f}x); --workers 2 reached "
            f"{rows[2]['panels/s'] / ceiling:.0%} of it"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--count", type=int, default=4000, help="measured panels per server (4000)")
    parser.add_argument("--latency", type=float, default=0.05, help="the fake provider's latency in seconds")
    parser.add_argument("--workers", default="1,2", help="worker counts to measure, comma-separated (1,2)")
    parser.add_argument(
        "--database-urls",
        default="",
        help="one empty PostgreSQL database URL per worker count, comma-separated (default: SQLite homes)",
    )
    parser.add_argument(
        "--stagger",
        type=float,
        default=0.05,
        help="seconds over which the 64 connections open and send their first request (0.05)",
    )
    args = parser.parse_args()
    databases = [url for url in args.database_urls.split(",") if url]
    logs = Path(tempfile.mkdtemp(prefix="bench-perf-workers-"))
    fake, fake_port = start_fake(args.latency, 8, logs)
    rows: dict[int, dict[str, float]] = {}
    try:
        for index, workers in enumerate(int(w) for w in args.workers.split(",")):
            bench = WorkersBench(logs)
            if databases:
                bench.env["BENCHWARMERS_DATABASE_URL"] = databases[index]
            bench.configure(fake_port, 8)
            bench.start_workers(workers)
            try:
                rows[workers] = asyncio.run(measure(bench, args.count, 4 * CONNECTIONS, fake.pid, stagger=args.stagger))
            finally:
                bench.stop()
                bench.remove()
    finally:
        fake.stop()
    store = "PostgreSQL" if databases else "SQLite"
    console.print(f"five-seat panels, {CONNECTIONS} connections, {args.latency * 1000:.0f} ms provider, {store}")
    print_comparison(rows)
    console.print(f"logs in {logs}")


if __name__ == "__main__":
    main()
