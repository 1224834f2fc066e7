"""One scenario: warm up, rewind the gateway's peak memory, drive a fixed count, account for it.

Overhead per panel = wall time at the client − the slowest seat's time as the gateway measured it
(`bench.seats[].seconds`, taken around the upstream exchange, waiting for a pooled connection
included). Added latency = wall time − the fake provider's fixed latency: everything the caller
waits for beyond the model, so it also counts waits inside the seat timer and the driver's own cost.
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from perf.driver import BodyFactory, Load, run_load
from perf.fleet import Process, machine_busy
from perf.spy import Profile

MB = 1_000_000


@dataclass(frozen=True)
class Scenario:
    name: str
    model: str
    concurrency: int
    count: int
    warmup: int
    stream: bool = False
    seats: int = 1  # seats the collection fills, for the label


@dataclass
class Result:
    """What one scenario measured; times in milliseconds, memory in MB (10^6 bytes)."""

    scenario: str
    target: str
    concurrency: int
    stream: bool
    requests: int
    ok: int
    errors: int
    seat_errors: int
    seconds: float
    panels_per_s: float
    seat_calls_per_s: float
    overhead_ms: dict[str, float | None] = field(default_factory=dict)
    added_ms: dict[str, float | None] = field(default_factory=dict)
    first_byte_ms: float | None = None
    server_cpu_ms_per_panel: float | None = None
    server_cpu_pct: float | None = None
    driver_cpu_pct: float = 0.0
    upstream_cpu_pct: float | None = None
    other_cpu_pct: float | None = None  # CPU of everything else on the machine (other work disturbs)
    peak_rss_mb: float | None = None
    rss_after_mb: float | None = None
    first_error: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def counts(concurrency: int, quick: bool, fixed: int | None) -> tuple[int, int]:
    """(measured, warm-up) requests: enough per connection for stable percentiles, bounded in time."""
    if fixed:
        return fixed, max(2 * concurrency, 10)
    if quick:
        return min(max(6 * concurrency, 60), 1536), max(concurrency, 10)
    return min(max(25 * concurrency, 300), 6400), max(2 * concurrency, 20)


def profile_path(args: Any, scenario: Scenario, label: str = "") -> Path | None:
    """Where a py-spy profile of this scenario goes, when `--profile` asks for its concurrency."""
    if not args.profile or scenario.concurrency not in args.profile_at:
        return None
    model = label or scenario.model.split("/")[-1]
    key = f"{model}-c{scenario.concurrency}-{'stream' if scenario.stream else 'json'}"
    return args.results / f"profile-{time.strftime('%Y%m%d-%H%M%S')}-{key}.txt"


def percentile(values: list[float], p: float) -> float | None:
    """Nearest-rank percentile; None for no values."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, math.ceil(p / 100 * len(ordered)))
    return ordered[rank - 1]


def spread(values: list[float]) -> dict[str, float | None]:
    """p50/p95/p99 and max of seconds, as milliseconds."""
    out: dict[str, float | None] = {}
    for label, p in (("p50", 50.0), ("p95", 95.0), ("p99", 99.0), ("max", 100.0)):
        value = percentile(values, p)
        out[label] = None if value is None else round(value * 1000, 3)
    return out


def summarise(
    scenario: Scenario,
    target: str,
    load: Load,
    latency: float,
    server: tuple[Process, Any, Any] | None,
    upstream: tuple[Process, Any, Any] | None,
    busy: float | None = None,
) -> Result:
    """Turn a finished load and the processes' usage before/after into one result row."""
    good = [s for s in load.samples if s.error is None]
    bad = [s for s in load.samples if s.error is not None]
    seconds = load.seconds
    overhead = [s.wall - max(s.seats) for s in good if s.seats]
    result = Result(
        scenario=scenario.name,
        target=target,
        concurrency=scenario.concurrency,
        stream=scenario.stream,
        requests=len(load.samples),
        ok=len(good),
        errors=len(bad),
        seat_errors=sum(s.seat_errors for s in good),
        seconds=round(seconds, 3),
        panels_per_s=round(len(good) / seconds, 1) if seconds else 0.0,
        seat_calls_per_s=round(sum(len(s.seats) for s in good) / seconds, 1) if seconds else 0.0,
        overhead_ms=spread(overhead) if overhead else {},
        added_ms=spread([s.wall - latency for s in good]),
        driver_cpu_pct=round(100 * load.driver_cpu / seconds, 1) if seconds else 0.0,
        first_error=bad[0].error if bad else None,
    )
    if scenario.stream and good:
        first = percentile([s.first_byte for s in good], 50)
        result.first_byte_ms = None if first is None else round(first * 1000, 3)
    if server is not None:
        _, before, after = server
        cpu = after.cpu - before.cpu
        result.server_cpu_ms_per_panel = round(1000 * cpu / max(1, len(load.samples)), 3)
        result.server_cpu_pct = round(100 * cpu / seconds, 1) if seconds else None
        result.peak_rss_mb = round(after.peak / MB, 1)
        result.rss_after_mb = round(after.rss / MB, 1)
    ours = load.driver_cpu
    if upstream is not None:
        _, before, after = upstream
        ours += after.cpu - before.cpu
        result.upstream_cpu_pct = round(100 * (after.cpu - before.cpu) / seconds, 1) if seconds else None
    if server is not None:
        ours += server[2].cpu - server[1].cpu
    if busy is not None and seconds:
        result.other_cpu_pct = round(max(0.0, 100 * (busy - ours) / seconds), 1)
    return result


async def run_scenario(
    scenario: Scenario,
    *,
    port: int,
    path: str,
    make_body: BodyFactory,
    latency: float,
    target: str,
    server: Process | None,
    upstream: Process | None,
    headers: dict[str, str] | None = None,
    profile: Path | None = None,
) -> Result:
    """Warm up (not counted), then measure `count` requests at the scenario's concurrency."""
    result, _ = await run_scenario_load(
        scenario,
        port=port,
        path=path,
        make_body=make_body,
        latency=latency,
        target=target,
        server=server,
        upstream=upstream,
        headers=headers,
        profile=profile,
    )
    return result


async def run_scenario_load(
    scenario: Scenario,
    *,
    port: int,
    path: str,
    make_body: BodyFactory,
    latency: float,
    target: str,
    server: Process | None,
    upstream: Process | None,
    headers: dict[str, str] | None = None,
    profile: Path | None = None,
) -> tuple[Result, Load]:
    """`run_scenario`, also returning the measured load's samples (perf/tails.py lines them up)."""
    if scenario.warmup:
        await run_load(
            "127.0.0.1",
            port,
            path,
            make_body,
            count=scenario.warmup,
            concurrency=scenario.concurrency,
            stream=scenario.stream,
            headers=headers,
            stagger=latency,
        )
    if server is not None:
        server.reset_peak()
    server_before = server.usage() if server is not None else None
    upstream_before = upstream.usage() if upstream is not None else None
    busy_before = machine_busy()
    profiler = Profile(server.pid, profile) if profile is not None and server is not None else None
    load = await run_load(
        "127.0.0.1",
        port,
        path,
        make_body,
        count=scenario.count,
        concurrency=scenario.concurrency,
        stream=scenario.stream,
        headers=headers,
        stagger=latency,
    )
    busy = machine_busy() - busy_before
    if profiler is not None:
        profiler.stop()
    server_usage = (server, server_before, server.usage()) if server is not None else None
    upstream_usage = (upstream, upstream_before, upstream.usage()) if upstream is not None else None
    result = summarise(scenario, target, load, latency, server_usage, upstream_usage, busy)
    if profiler is not None:
        result.extra["profile"] = str(profiler.out)
    return result, load
