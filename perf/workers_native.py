"""`serve --workers 2` beside `--workers 1` with a load that costs almost nothing: nginx as the fake
provider and wrk as the driver, both in C.

    python -m perf.workers_native                 # 8 rounds of 10 s of five-seat panels per server
    python -m perf.workers_native --seconds 10 --latency 0.05

On two cores, one worker that saturates its core leaves one core for everything else; two workers
want both, so whatever the fake provider and the driver spend comes out of the second worker's
share. `perf/workers.py` measures with the Python fake and driver of every other run (about 0.6
ms of CPU a panel on this machine, a quarter of the bench's own); here the same panels cost nginx
and wrk about a tenth of that, so the figures show how far the workers themselves scale.

nginx answers every chat completion after `--latency` (the echo module's `echo_sleep`) with one
fixed completion, and serves the same model listings as perf/upstream.py. wrk sends five-seat
panels over 64 connections, each body distinct (a counter), for `--seconds` after a warm-up, to
each server in turn: both stay up for all the rounds.
Needs Debian's `nginx-light`, `libnginx-mod-http-echo` and `wrk` (apt; not project dependencies).

nginx and wrk run under the kernel's SCHED_BATCH policy (`--preempt` leaves them as they are). They
stand in for a provider and callers on other machines, yet here they share the two cores with the
workers: at the default policy each of their wake-ups (five seat requests and a reply per panel)
preempts the worker on that core, about 4.4 times a panel with two workers against 0.1 with one,
and every preemption costs the worker its caches. A SCHED_BATCH task never preempts on waking; it
runs when a worker waits or at the next scheduler tick, as it would on a core of its own.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import resource
import shutil
import statistics
import subprocess
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import orjson

from perf.driver import chat_body, run_load
from perf.fleet import Process, free_port, machine_times, usage_of, wait_for_port
from perf.report import console
from perf.upstream import endpoint_models, listing
from perf.workers import CONNECTIONS, WorkersBench, children, connections_per_worker, print_comparison

ENDPOINTS = 8
ECHO_MODULE = Path("/usr/lib/nginx/modules/ngx_http_echo_module.so")
BATCH = ("chrt", "--batch", "0")  # util-linux: the command runs under SCHED_BATCH (see above)
COMPLETION = orjson.dumps(
    {
        "id": "chatcmpl-native",
        "object": "chat.completion",
        "created": 1_796_000_000,
        "model": "answered-by-nginx",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": "an answer from the fake provider"},
                "logprobs": None,
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 12, "completion_tokens": 6, "total_tokens": 18},
    }
).decode()
# Each request's body differs by its counter: identical bodies would be an SDK's retry to the bench.
WRK_SCRIPT = """
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
local n = 0
request = function()
  n = n + 1
  return wrk.format(nil, nil, nil,
    '{"model":"bench/five","max_tokens":64,"messages":[{"role":"user","content":"Name one prime number. (request '
    .. n .. ')"}]}')
end
"""


def nginx_config(folder: Path, port: int, latency: float) -> Path:
    roster = {n: orjson.dumps(listing(endpoint_models(n, ENDPOINTS))).decode() for n in range(1, ENDPOINTS + 1)}
    listings = "\n".join(f"    location = /e{n}/v1/models {{ return 200 '{body}'; }}" for n, body in roster.items())
    config = folder / "nginx.conf"
    config.write_text(f"""
load_module {ECHO_MODULE};
worker_processes 1;
daemon off;
pid {folder}/nginx.pid;
error_log {folder}/nginx-error.log warn;
events {{ worker_connections 4096; }}
http {{
  access_log off;
  keepalive_requests 10000000;
  keepalive_timeout 300s;
  client_body_temp_path {folder}/body;
  server {{
    listen 127.0.0.1:{port} backlog=2048;
    default_type application/json;
    location ~ /chat/completions$ {{
      echo_read_request_body;
      echo_sleep {latency};
      echo -n '{COMPLETION}';
    }}
{listings}
  }}
}}
""")
    return config


def run_wrk(
    port: int, seconds: float, script: Path, sample_at: float = 0.0, policy: Sequence[str] = ()
) -> tuple[str, float, list[int]]:
    """wrk's report, the CPU seconds it used, and (`sample_at` seconds in) how many of its
    connections each worker holds."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    argv = [*policy, "wrk", "-t1", f"-c{CONNECTIONS}", f"-d{round(seconds)}s", "--latency", "-s", str(script)]
    argv.append(f"http://127.0.0.1:{port}/v1/chat/completions")
    with subprocess.Popen(argv, stdout=subprocess.PIPE, text=True) as driver:
        spread: list[int] = []
        if sample_at:
            time.sleep(sample_at)
            spread = connections_per_worker(port)
        report, _ = driver.communicate()
    if driver.returncode != 0:
        raise RuntimeError(f"wrk failed:\n{report}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return report, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), spread


def milliseconds(report: str, label: str) -> float:
    match = re.search(rf"^\s*{label}\s+([\d.]+)(us|ms|s)\b", report, re.MULTILINE)
    if match is None:
        raise RuntimeError(f"no {label!r} in wrk's report:\n{report}")
    return float(match[1]) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[match[2]]


def figure(report: str, pattern: str) -> float:
    match = re.search(pattern, report)
    return float(match[1]) if match else 0.0


def check(bench: WorkersBench) -> None:
    """Panels read whole: every seat answers through nginx (wrk sees only the statuses)."""
    check = asyncio.run(
        run_load("127.0.0.1", bench.port, "/v1/chat/completions", chat_body("bench/five"), count=50, concurrency=4)
    )
    seats = [len(sample.seats) for sample in check.samples if sample.status == 200]
    if len(seats) != 50 or set(seats) != {5} or any(sample.seat_errors for sample in check.samples):
        raise RuntimeError(f"the check's panels did not all seat five answers: {check.samples[:3]}")


def measure(
    bench: WorkersBench, seconds: float, nginx_pids: list[int], script: Path, latency: float, policy: Sequence[str]
) -> dict[str, float]:
    run_wrk(bench.port, 2, script, policy=policy)  # warm-up: every worker is connected and seating panels
    bench_pids = bench.pids()
    before, fake_before, machine_before = bench.cpu(), sum(usage_of(p).cpu for p in nginx_pids), machine_times()
    # How often the workers' event loops (their main threads) were preempted.
    preempted_before = sum(usage_of(p).preempted for p in bench_pids)
    report, driver_cpu, spread = run_wrk(bench.port, seconds, script, sample_at=2.0, policy=policy)
    cpu = bench.cpu() - before
    preempted = sum(usage_of(p).preempted for p in bench_pids) - preempted_before
    fake_cpu = sum(usage_of(p).cpu for p in nginx_pids) - fake_before
    machine_after = machine_times()
    elapsed = max(1, machine_after.total - machine_before.total)
    panels = figure(report, r"(\d+) requests in")
    errors = re.search(r"Socket errors: (.*)", report)
    return {
        "panels": panels,
        "failed (non-2xx)": figure(report, r"Non-2xx or 3xx responses: (\d+)"),
        "socket errors": float(sum(int(n) for n in re.findall(r"\d+", errors[1]))) if errors else 0.0,
        "panels/s": figure(report, r"Requests/sec:\s+([\d.]+)"),
        "p50 ms": milliseconds(report, "50%"),
        "p99 ms": milliseconds(report, "99%"),
        "overhead p50 ms": milliseconds(report, "50%") - 1000 * latency,
        "overhead p99 ms": milliseconds(report, "99%") - 1000 * latency,
        "bench CPU ms/panel": 1000 * cpu / max(1, panels),
        "bench cores": cpu / seconds,
        "fake cores": fake_cpu / seconds,
        "driver cores": driver_cpu / seconds,
        "machine busy %": 100 * (machine_after.busy - machine_before.busy) / elapsed,
        "of which interrupts %": 100 * (machine_after.interrupts - machine_before.interrupts) / elapsed,
        "of which stolen by the host %": 100 * (machine_after.stolen - machine_before.stolen) / elapsed,
        "event loop preempted /panel": preempted / max(1, panels),
        "most connections on one worker": float(spread[0]) if spread else 0.0,
        # A log that checkpoints cannot start over grows, and every page lookup searches all of it.
        "SQLite log MB at the end": sum(log.stat().st_size for log in bench.home.rglob("*.db-wal")) / 1e6,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=int, default=10, help="measured seconds per server and round (10)")
    parser.add_argument("--latency", type=float, default=0.01, help="the fake provider's latency in seconds (0.01)")
    parser.add_argument("--rounds", type=int, default=8, help="rounds, each server in turn (8)")
    parser.add_argument("--workers", default="1,2", help="worker counts to measure, comma-separated (1,2)")
    parser.add_argument(
        "--preempt", action="store_true", help="run nginx and wrk at the default policy, not SCHED_BATCH"
    )
    args = parser.parse_args()
    policy = () if args.preempt else BATCH
    missing = [tool for tool in ("nginx", "wrk") if shutil.which(tool) is None] + (
        [] if ECHO_MODULE.exists() else ["libnginx-mod-http-echo"]
    )
    if missing:
        raise SystemExit(f"needs {', '.join(missing)}: apt-get install nginx-light libnginx-mod-http-echo wrk")
    logs = Path(tempfile.mkdtemp(prefix="bench-perf-native-"))
    script = logs / "panels.lua"
    script.write_text(WRK_SCRIPT)
    fake_port = free_port()
    fake = Process(
        "nginx", [*policy, "nginx", "-c", str(nginx_config(logs, fake_port, args.latency))], log=logs / "nginx.log"
    )
    wait_for_port(fake_port, fake.popen, "nginx")
    nginx_pids = [fake.pid, *children(fake.pid)]
    counts = [int(w) for w in args.workers.split(",")]
    runs: dict[int, list[dict[str, float]]] = {w: [] for w in counts}
    benches: dict[int, WorkersBench] = {}
    try:
        for workers in counts:
            benches[workers] = bench = WorkersBench(logs)
            bench.configure(fake_port, ENDPOINTS)
            bench.start_workers(workers)
            check(bench)
        # Both servers stay up and take the load in turns, seconds apart: this machine's speed drifts
        # by ±15% over minutes, and a ratio of two runs minutes apart carried all of that drift.
        for _ in range(args.rounds):
            for workers, bench in benches.items():
                runs[workers].append(measure(bench, args.seconds, nginx_pids, script, args.latency, policy))
    finally:
        for bench in benches.values():
            bench.stop()
            bench.remove()
        fake.stop()
    rows = {w: {key: statistics.median(run[key] for run in runs[w]) for key in runs[w][0]} for w in counts}
    provider = f"{args.latency * 1000:.0f} ms provider (nginx)"
    tools = "at the default policy" if args.preempt else "under SCHED_BATCH"
    console.print(f"five-seat panels, {CONNECTIONS} connections, {provider}, driver wrk, SQLite; nginx and wrk {tools}")
    console.print(f"medians of {args.rounds} rounds of {args.seconds} s")
    each = zip(runs.get(1, []), runs.get(2, []), strict=False)
    print_comparison(rows, ", ".join(f"{two['panels/s'] / one['panels/s']:.2f}" for one, two in each))
    console.print(f"logs in {logs}")


if __name__ == "__main__":
    main()
