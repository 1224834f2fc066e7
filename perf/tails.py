"""Tails at moderate load: a slow provider, the instrumented server, and what the slowest requests overlapped.

A fleet of its own: the fake provider at `--tails-latency` (500 ms), a fresh bench home with the
same endpoints and `bench/five` (3 members + 2 explorers), served by perf/instrumented_serve.py
(the real app plus probes for event-loop lag, GC pauses and the recorder's commits and writes).
At each of `--tails-concurrency` (16, 64) the driver measures the panels; then every measured
request is lined up with the probes' events by time (both sides use CLOCK_MONOTONIC).

For a request, the window that matters is its overhead: the last `overhead` ms before its reply
was complete (after its slowest seat answered: recording, reply). In that window: the longest
loop lag, the GC pause time and the oldest generation collected, the longest group commit that
overlapped it, and the longest panel write that started in it; and the longest panel-id
reservation that started in the request's first `overhead` ms (it comes before the seats). The
tables compare the slowest 1% and 5% of requests with the middle half; a cause shows as a column
that is high for the slowest and low for the middle. The windows are an approximation: a request's
overhead is not one stretch (some comes before its seats), and an event in its window may have held
another request instead.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from perf.ceiling import Ceilings
from perf.driver import Sample, chat_body, run_load
from perf.fleet import PERF, Bench, run_queue_wait, start_fake
from perf.measure import Result, Scenario, counts, percentile, profile_path, run_scenario_load

COLLECTION = "bench/five"
CHAT = "/v1/chat/completions"


@dataclass
class Events:
    lags: list[float] = field(default_factory=list)  # ms, every sample
    late: list[tuple[float, float, float]] = field(default_factory=list)  # (t, ms, loop thread's CPU ms)
    gc: list[tuple[float, float, int, int]] = field(default_factory=list)  # (start, ms, generation, collected)
    commits: list[tuple[float, float, int, int]] = field(default_factory=list)  # (start, ms, batch, panels)
    writes: list[tuple[float, float]] = field(default_factory=list)  # (start, ms)
    reserves: list[tuple[float, float]] = field(default_factory=list)  # (start, ms)
    hooks: list[str] = field(default_factory=list)


def read_probes(path: Path, start: float, end: float) -> Events:
    """The probes' events between `start` and `end` (monotonic seconds)."""
    events = Events()
    if not path.exists():
        return events
    for raw in path.read_bytes().splitlines():
        line = orjson.loads(raw)
        events.hooks = line.get("hooks") or events.hooks
        if line["t"] < start:
            continue
        if line["t"] - 1.0 <= end:  # a dump covers the interval before it (≤ 1 s)
            events.lags += line.get("lags", [])
        events.late += [(t, ms, cpu) for t, ms, cpu in line["late"] if start <= t <= end]
        events.gc += [tuple(g) for g in line["gc"] if start <= g[0] <= end]  # type: ignore[misc]
        events.commits += [tuple(c) for c in line["commits"] if start <= c[0] <= end]  # type: ignore[misc]
        events.writes += [(t, ms) for t, ms in line["writes"] if start <= t <= end]
        events.reserves += [(t, ms) for t, ms in line.get("reserves", []) if start <= t <= end]
    return events


def _overlap(a0: float, a1: float, b0: float, b1: float) -> float:
    return max(0.0, min(a1, b1) - max(a0, b0))


def attribute(sample: Sample, events: Events) -> dict[str, Any]:
    """What happened in this request's overhead window (the end of it, after its slowest seat)."""
    overhead = sample.wall - max(sample.seats)
    end = sample.started + sample.wall
    start = end - max(overhead, 0.0)
    lags = [(ms, cpu) for t, ms, cpu in events.late if start <= t <= end]
    worst = max(lags, default=(0.0, 0.0))
    gcs = [(t, ms, gen) for t, ms, gen, _ in events.gc if _overlap(start, end, t, t + ms / 1000) > 0]
    commits = [ms for t, ms, _, _ in events.commits if _overlap(start, end, t, t + ms / 1000) > 0]
    writes = [ms for t, ms in events.writes if start <= t <= end]
    # Its reservation came before its seats: if the overhead was spent there, it is in the first `overhead` ms.
    reserves = [ms for t, ms in events.reserves if sample.started <= t <= sample.started + max(overhead, 0.0)]
    return {
        "started": round(sample.started, 4),
        "overhead_ms": round(overhead * 1000, 2),
        "max_lag_ms": worst[0],
        "max_lag_cpu_ms": worst[1],
        "gc_ms": round(sum(_overlap(start, end, t, t + ms / 1000) for t, ms, _ in gcs) * 1000, 2),
        "gc_gen": max((gen for _, _, gen in gcs), default=-1),
        "commit_ms": max(commits, default=0.0),
        "write_ms": max(writes, default=0.0),
        "reserve_ms": max(reserves, default=0.0),
    }


def _mean(values: list[float]) -> float | None:
    return round(sum(values) / len(values), 2) if values else None


def _share(flags: list[bool]) -> str:
    return f"{100 * sum(flags) / len(flags):.0f}%" if flags else "-"


def groups(rows: list[dict[str, Any]]) -> list[list[Any]]:
    """The slowest 1% and 5% against the middle half, column by column."""
    ordered = sorted(rows, key=lambda r: r["overhead_ms"], reverse=True)
    n = len(ordered)
    if not n:
        return []
    picks = {
        "slowest 1%": ordered[: max(1, n // 100)],
        "slowest 5%": ordered[: max(1, n // 20)],
        "middle half": ordered[n // 4 : n - n // 4] or ordered,
    }
    out = []
    for name, group in picks.items():
        out.append(
            [
                name,
                len(group),
                _mean([r["overhead_ms"] for r in group]),
                _mean([r["max_lag_ms"] for r in group]),
                _mean([r["max_lag_cpu_ms"] for r in group]),
                _share([r["max_lag_ms"] >= 5 for r in group]),
                _mean([r["gc_ms"] for r in group]),
                _share([r["gc_gen"] >= 0 for r in group]),
                _share([r["gc_gen"] == 2 for r in group]),
                _mean([r["commit_ms"] for r in group]),
                _mean([r["write_ms"] for r in group]),
                _mean([r["reserve_ms"] for r in group]),
            ]
        )
    return out


GROUP_HEADERS = [
    "requests",
    "n",
    "overhead ms (mean)",
    "max loop lag ms (mean)",
    "loop thread's CPU in it ms (mean)",
    "lag ≥ 5 ms",
    "GC ms in window (mean)",
    "any GC",
    "gen-2 GC",
    "longest commit overlapping ms (mean)",
    "longest write started in window ms (mean)",
    "longest reservation in first overhead ms (mean)",
]


def summary(events: Events) -> dict[str, Any]:
    """The probes over the whole measured part: lag, GC, commits, writes."""

    def pct(values: list[float], p: float) -> float | None:
        found = percentile(values, p)
        return None if found is None else round(found, 2)

    gc_ms = [ms for _, ms, _, _ in events.gc]
    commit_ms = [ms for _, ms, _, _ in events.commits]
    write_ms = [ms for _, ms in events.writes]
    reserve_ms = [ms for _, ms in events.reserves]
    return {
        "lag_p50_ms": pct(events.lags, 50),
        "lag_p99_ms": pct(events.lags, 99),
        "lag_max_ms": pct(events.lags, 100),
        "lags_over_5ms": sum(ms >= 5 for ms in events.lags),
        "lags_over_20ms": sum(ms >= 20 for ms in events.lags),
        # Late wake-ups whose thread ran for under half the lag: it waited for a core or in a system call.
        "lags_not_running": sum(ms >= 5 and cpu < ms / 2 for _, ms, cpu in events.late),
        "gc_by_gen": [sum(g[2] == gen for g in events.gc) for gen in (0, 1, 2)],
        "gc_total_ms": round(sum(gc_ms), 1),
        "gc_max_ms": pct(gc_ms, 100),
        "gen2_max_ms": pct([ms for _, ms, gen, _ in events.gc if gen == 2], 100),
        "commits": len(commit_ms),
        "commit_p50_ms": pct(commit_ms, 50),
        "commit_p99_ms": pct(commit_ms, 99),
        "commit_max_ms": pct(commit_ms, 100),
        "batch_mean": _mean([float(c[2]) for c in events.commits]),
        "write_p50_ms": pct(write_ms, 50),
        "write_p99_ms": pct(write_ms, 99),
        "write_max_ms": pct(write_ms, 100),
        "reserve_p50_ms": pct(reserve_ms, 50),
        "reserve_p99_ms": pct(reserve_ms, 99),
        "reserve_max_ms": pct(reserve_ms, 100),
        "hooks": events.hooks,
    }


INSTRUMENTED = "benchwarmers (instrumented)"
PLAIN = "benchwarmers (plain serve)"


async def tails(args: argparse.Namespace, logs: Path, progress: Any) -> dict[str, Any]:
    """The tails scenarios on a fleet of their own; rows, probe summaries, group tables, slowest requests.

    With `--tails-baseline` the same rows run first on plain `benchwarmers serve` over the same home,
    so the probes' own cost (the 1 ms sampler, mostly) shows as the difference.
    """
    here = logs / "tails"
    here.mkdir(parents=True, exist_ok=True)
    probes = here / "probes.jsonl"
    fake, fake_port = start_fake(args.tails_latency, args.endpoints, here, args.tails_jitter)
    bench = Bench(here)
    ceilings = Ceilings(fake, fake_port, args.tails_latency, quick=args.quick, count=None)
    results: list[Result] = []
    details: list[dict[str, Any]] = []
    instrumented = [sys.executable, str(PERF / "instrumented_serve.py"), "--out", str(probes)]
    instrumented += ["--lag-interval", str(args.lag_interval), "--lag-floor", str(args.lag_floor / 1000)]
    servers: list[tuple[str, list[str] | None]] = [(PLAIN, None)] if args.tails_baseline else []
    servers.append((INSTRUMENTED, instrumented))
    try:
        bench.configure(fake_port, args.endpoints)
        for target, serve in servers:
            bench.start(serve=serve)
            assert bench.process is not None
            await run_load("127.0.0.1", bench.port, CHAT, chat_body(COLLECTION), count=64, concurrency=16)
            for stream in [mode == "stream" for mode in args.tails_modes]:
                for concurrency in args.tails_concurrency:
                    measured, warmup = counts(concurrency, args.quick, args.tails_count)
                    if not args.tails_count:
                        measured = max(8 * concurrency, 160) if args.quick else max(20 * concurrency, 400)
                    name = f"five: 3 members + 2 explorers, {args.tails_latency * 1000:g} ms provider"
                    if args.tails_jitter:
                        name += f" ± {args.tails_jitter:.0%}"
                    scenario = Scenario(name, COLLECTION, concurrency, measured, warmup, stream, 5)
                    waited = run_queue_wait(bench.process.pid)
                    result, load = await run_scenario_load(
                        scenario,
                        port=bench.port,
                        path=CHAT,
                        make_body=chat_body(COLLECTION, stream=stream),
                        latency=args.tails_latency,
                        target=target,
                        server=bench.process,
                        upstream=fake,
                        profile=profile_path(args, scenario, "tails" if serve else "tails-plain"),
                    )
                    waited = run_queue_wait(bench.process.pid) - waited
                    result.extra["runq_ms_per_s"] = round(1000 * waited / result.seconds, 1) if result.seconds else None
                    await ceilings.mark(result)
                    results.append(result)
                    if serve is not None:
                        details.append(await _probed(args, result, load.samples, probes))
                    progress(result)
            bench.stop()
    finally:
        bench.stop()
        fake.stop()
        if not args.keep:
            bench.remove()
    return {"results": results, "details": details, "ceilings": ceilings.all()}


async def _probed(args: argparse.Namespace, result: Result, samples: list[Sample], probes: Path) -> dict[str, Any]:
    """Line the requests up with the probes' events; the summary goes into `result.extra`."""
    await asyncio.sleep(1.2)  # the probes' next dump covers the end of the run
    good = [s for s in samples if s.error is None and s.seats]
    start = min((s.started for s in good), default=0.0)
    end = max((s.started + s.wall for s in good), default=0.0)
    events = read_probes(probes, start, end)
    rows = [attribute(s, events) for s in good]
    probe = summary(events)
    result.extra.update(probe)
    return {
        "concurrency": result.concurrency,
        "mode": "stream" if result.stream else "json",
        "groups": groups(rows),
        "slowest": sorted(rows, key=lambda r: r["overhead_ms"], reverse=True)[: args.tails_top],
        "probes": probe,
    }
