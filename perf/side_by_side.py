"""The bench and other gateways side by side: the same fake provider, the same load, rotating rounds.

Each gateway is a `Target`: a process we started, the port it listens on, the model name a
request carries and any headers it needs. At each mode and concurrency every target is warmed up,
then the targets take turns (A/B/C/A/B/C with `--rounds 2`), so drift on a shared machine falls on
all of them. A gateway's CPU is its process's user + system time from /proc over its own turns.
Added latency = wall time − the fake's fixed latency, since no peer reports seat times.

`perf/litellm_peer.py` and `perf/portkey_peer.py` start the peers; `compare` here
measures them against the bench's `bench/solo` and returns the rows, and the ratios against each
peer in one table (`ratio_headers`, `ratio_rows`).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from perf.driver import Load, chat_body, run_load
from perf.fleet import Bench, Usage
from perf.measure import Scenario, summarise
from perf.target import PATH, Target

OURS = "benchwarmers"

RESULT_HEADERS = [
    "gateway",
    "conc",
    "mode",
    "requests/s",
    "added p50 ms",
    "p95",
    "p99",
    "CPU ms/request",
    "idle RSS MB",
    "errors",
]
# Per peer, in the combined ratio table: ours ÷ theirs (below 1 is better for all but throughput).
RATIO_KEYS = (
    ("added_p50_ratio", "added p50"),
    ("added_p99_ratio", "added p99"),
    ("throughput_ratio", "throughput"),
    ("cpu_ratio", "CPU/request"),
)


def _combine(loads: list[Load]) -> Load:
    return Load(
        samples=[s for load in loads for s in load.samples],
        seconds=sum(load.seconds for load in loads),
        driver_cpu=sum(load.driver_cpu for load in loads),
    )


def _ratio(ours: float | None, theirs: float | None) -> float | None:
    return None if ours is None or not theirs else round(ours / theirs, 2)


def count_for(concurrency: int, quick: bool) -> int:
    """Measured requests per round: the slowest peer (LiteLLM, ~100/s) must finish a round in seconds."""
    return min(max(4 * concurrency, 40), 512) if quick else min(max(12 * concurrency, 150), 1600)


async def warm(target: Target, count: int = 50, concurrency: int = 4) -> None:
    """A first load (not counted), then the idle RSS the tables report."""
    await run_load(
        "127.0.0.1",
        target.port,
        PATH,
        chat_body(target.model),
        count=count,
        concurrency=concurrency,
        headers=target.headers,
    )
    target.idle_rss = target.process.usage().rss


async def _round(target: Target, stream: bool, count: int, concurrency: int, latency: float) -> tuple[Load, float]:
    before = target.process.usage().cpu
    load = await run_load(
        "127.0.0.1",
        target.port,
        PATH,
        chat_body(target.model, stream=stream),
        count=count,
        concurrency=concurrency,
        stream=stream,
        headers=target.headers,
        stagger=latency,
    )
    return load, target.process.usage().cpu - before


async def compare(args: argparse.Namespace, targets: list[Target]) -> dict[str, Any]:
    """Rotate rounds over `targets` (ours first) at each mode and concurrency; rows and ratios."""
    ours, peers = targets[0], targets[1:]
    rows: list[list[Any]] = []
    ratios: list[dict[str, Any]] = []
    raw: list[dict[str, Any]] = []
    for mode in args.side_modes:
        stream = mode == "stream"
        for concurrency in args.side_concurrency:
            count = count_for(concurrency, args.quick)
            for target in targets:  # warm-up at this concurrency, not counted
                await _round(target, stream, max(2 * concurrency, 20), concurrency, args.latency)
            loads: dict[str, list[Load]] = {t.name: [] for t in targets}
            cpu = dict.fromkeys(loads, 0.0)
            for _ in range(args.rounds):
                for target in targets:
                    load, spent = await _round(target, stream, count, concurrency, args.latency)
                    loads[target.name].append(load)
                    cpu[target.name] += spent
            summary = {}
            for target in targets:
                load = _combine(loads[target.name])
                scenario = Scenario(target.name, target.model, concurrency, len(load.samples), 0, stream)
                now = target.process.usage()
                usage = (target.process, Usage(0.0, 0, 0), Usage(cpu[target.name], now.rss, now.peak))
                result = summarise(scenario, target.name, load, args.latency, usage, None)
                summary[target.name] = result
                raw.append(result.as_dict())
                rows.append(
                    [
                        target.name,
                        concurrency,
                        mode,
                        f"{result.panels_per_s:,.1f}",
                        *(f"{result.added_ms.get(p) or 0:.2f}" for p in ("p50", "p95", "p99")),
                        f"{result.server_cpu_ms_per_panel or 0:.2f}",
                        f"{target.idle_rss / 1e6:.1f}",
                        result.errors,
                    ]
                )
            mine = summary[ours.name]
            for peer in peers:
                theirs = summary[peer.name]
                ratio = {
                    "peer": peer.name,
                    "concurrency": concurrency,
                    "mode": mode,
                    "added_p50_ratio": _ratio(mine.added_ms.get("p50"), theirs.added_ms.get("p50")),
                    "added_p99_ratio": _ratio(mine.added_ms.get("p99"), theirs.added_ms.get("p99")),
                    "throughput_ratio": _ratio(mine.panels_per_s, theirs.panels_per_s),
                    "cpu_ratio": _ratio(mine.server_cpu_ms_per_panel, theirs.server_cpu_ms_per_panel),
                }
                ratios.append(ratio)
                print(
                    f"  side by side c={concurrency} {mode}: ours ÷ {peer.name} added p50 {ratio['added_p50_ratio']}, "
                    f"p99 {ratio['added_p99_ratio']}, throughput {ratio['throughput_ratio']}, "
                    f"CPU/request {ratio['cpu_ratio']}",
                    flush=True,
                )
    names = [p.name for p in peers]
    ratio_headers = ["conc", "mode", *(f"{label} ÷ {name}" for name in names for _, label in RATIO_KEYS)]
    ratio_rows = []
    for mode in args.side_modes:
        for concurrency in args.side_concurrency:
            row: list[Any] = [concurrency, mode]
            for name in names:
                found = next(
                    r for r in ratios if r["peer"] == name and r["concurrency"] == concurrency and r["mode"] == mode
                )
                row += ["-" if found[key] is None else found[key] for key, _ in RATIO_KEYS]
            ratio_rows.append(row)
    return {
        "versions": {t.name: t.version for t in peers},
        "headers": RESULT_HEADERS,
        "rows": rows,
        "ratio_headers": ratio_headers,
        "ratio_rows": ratio_rows,
        "ratios": ratios,
        "results": raw,
    }


def overall(ratios: list[dict[str, Any]], peer: str, key: str) -> float | None:
    """The mean of one ratio over every row against `peer` (None when there is none)."""
    values = [r[key] for r in ratios if r["peer"] == peer and r.get(key) is not None]
    return round(sum(values) / len(values), 2) if values else None


async def side_by_side(
    args: argparse.Namespace, bench: Bench, fake_port: int, logs: Path, model_alias: str
) -> dict[str, Any]:
    """Start the peers asked for (`--litellm`, `--portkey`), measure them against bench/solo, stop them."""
    from perf.litellm_peer import start_litellm
    from perf.portkey_peer import start_portkey

    assert bench.process is not None
    started: list[Any] = []
    skipped: dict[str, str] = {}
    try:
        if args.litellm:
            proxy = start_litellm(args, fake_port, logs, model_alias)
            if isinstance(proxy, str):
                skipped["LiteLLM"] = proxy
            else:
                started.append(proxy)
        if args.portkey:
            gateway = await start_portkey(args, fake_port, logs, model_alias)
            if isinstance(gateway, str):
                skipped["Portkey"] = gateway
            else:
                started.append(gateway)
        if not started:
            return {"skipped": skipped}
        targets = [Target(OURS, bench.port, "bench/solo", bench.process), *(peer.target() for peer in started)]
        for target in targets:
            await warm(target)
        result = await compare(args, targets)
    finally:
        for peer in started:
            peer.stop()
    result["skipped"] = skipped
    return result
