"""Measure the bench's own cost per panel and per seat: one command, tables at the end.

    python -m perf.run --quick          # about a minute: every main scenario, few requests
    python -m perf.run                  # the full run, LiteLLM and Portkey side by side included
    python -m perf.run --markdown       # also print the tables as markdown for docs/BENCHMARKS.md
    python -m perf.run --scaling        # only: cost against seats per panel and prompt size
    python -m perf.run --tails          # only: tails at a 500 ms provider, with the server's probes

A fixed-latency fake provider (perf/upstream.py) and `benchwarmers serve` each run in their own
process; this process is the load driver (perf/driver.py). Nothing here is part of the test suite.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import os
import shutil
import sys
import time
from pathlib import Path
from typing import Any

from perf.ceiling import Ceilings
from perf.driver import chat_body, image_body, run_load
from perf.fleet import PERF, Bench, Process, alias, start_fake
from perf.goals import goals
from perf.measure import MB, Result, Scenario, counts, profile_path, run_scenario
from perf.printout import print_tables
from perf.report import (
    console,
    machine,
    save,
    show_pairs,
)
from perf.scaling import configure as scaling_collections
from perf.scaling import scaling
from perf.side_by_side import side_by_side
from perf.spy import by_package, hot
from perf.tails import tails
from perf.upstream import MODELS

COLLECTIONS = {"solo": ("solo: 1 member + 0 explorers", 1), "five": ("five: 3 members + 2 explorers", 5)}
CHAT = "/v1/chat/completions"


def data_url(size: int) -> str:
    """A data URL of about `size` characters (random bytes: no compression can shrink it)."""
    raw = os.urandom(size * 3 // 4)
    return "data:image/jpeg;base64," + base64.b64encode(raw).decode()


def progress(result: Result) -> None:
    over = result.overhead_ms.get("p50")
    console.print(
        f"  {result.scenario:<30} c={result.concurrency:<4} {'stream' if result.stream else 'json  '} "
        f"{result.panels_per_s:>8.1f} panels/s  overhead p50 {over if over is not None else '-'} ms  "
        f"errors {result.errors}" + (f" (+{result.seat_errors} seats)" if result.seat_errors else ""),
        highlight=False,
    )


async def load_scenarios(args: argparse.Namespace, bench: Bench, fake: Process) -> list[Result]:
    assert bench.process is not None
    results = []
    for name in args.collections:
        label, seats = COLLECTIONS[name]
        for stream in [mode == "stream" for mode in args.modes]:
            for concurrency in args.concurrency:
                count, warmup = counts(concurrency, args.quick, args.count)
                scenario = Scenario(label, f"bench/{name}", concurrency, count, warmup, stream, seats)
                result = await run_scenario(
                    scenario,
                    port=bench.port,
                    path=CHAT,
                    make_body=chat_body(scenario.model, stream=stream),
                    latency=args.latency,
                    target="benchwarmers",
                    server=bench.process,
                    upstream=fake,
                    profile=profile_path(args, scenario),
                )
                report_row(result)
                results.append(result)
    return results


def report_row(result: Result) -> None:
    """The progress line, and where the CPU went when the row was profiled."""
    progress(result)
    if result.extra.get("profile"):
        show_hot(result)


def show_hot(result: Result) -> None:
    path = Path(result.extra["profile"])
    rows = [[name, f"{own:.1f}", f"{total:.1f}"] for name, own, total in hot(path)]
    where = f"{result.scenario}, c={result.concurrency}, {'stream' if result.stream else 'json'}"
    show_pairs(f"Where the gateway's CPU went: {where} ({path})", ["function", "self %", "total %"], rows)
    packages = [[name, f"{share:.1f}"] for name, share in by_package(path) if share >= 0.5]
    show_pairs("Self time by package", ["package", "self %"], packages)


async def image_scenario(args: argparse.Namespace, bench: Bench, fake: Process) -> Result:
    """A fresh server, warmed up; then 15 MB image panels of five seats against its idle memory."""
    bench.stop()
    bench.start()
    assert bench.process is not None
    await run_load("127.0.0.1", bench.port, CHAT, chat_body("bench/five"), count=100, concurrency=8)
    idle = bench.process.usage().rss
    url = data_url(int(args.image_mb * MB) - 300)
    make = image_body("bench/five", url)
    body_size = len(make(0))
    count = args.image_count or (3 if args.quick else 10)
    scenario = Scenario(f"{args.image_mb:g} MB image, 5 seats", "bench/five", args.image_concurrency, count, 0, seats=5)
    result = await run_scenario(
        scenario,
        port=bench.port,
        path=CHAT,
        make_body=make,
        latency=args.latency,
        target="benchwarmers",
        server=bench.process,
        upstream=fake,
        profile=args.results / f"profile-{time.strftime('%Y%m%d-%H%M%S')}-image.txt" if args.profile else None,
    )
    peak = (result.peak_rss_mb or 0.0) * MB
    added = result.added_ms.get("p50")
    result.extra = {
        **result.extra,
        "body_mb": round(body_size / MB, 2),
        "idle_rss_mb": round(idle / MB, 1),
        "peak_over_body": round((peak - idle) / body_size, 2),
        "wall_p50_ms": None if added is None else round(added + args.latency * 1000, 3),
    }
    progress(result)
    if result.extra.get("profile"):
        show_hot(result)
    return result


def _ints(text: str) -> list[int]:
    return [int(x) for x in text.split(",")]


def _words(text: str) -> list[str]:
    return text.split(",")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="Measure the bench's own cost per panel and per seat against a fixed-latency fake provider "
        "(each in its own process). Prints tables; writes JSON to perf/results/.",
    )
    add = parser.add_argument
    add("--quick", action="store_true", help="few requests per scenario, no side-by-side run (about a minute)")
    add("--latency", type=float, default=0.05, help="the fake provider's fixed latency in seconds (0.05)")
    add(
        "--jitter",
        type=float,
        default=0.0,
        help="the provider's latency varies by ± this share (0: fixed; 0.1: 45-55 ms); see BENCHMARKS.md on why",
    )
    add(
        "--endpoints",
        type=int,
        default=len(MODELS),
        help="endpoints the 8 fake models are spread over (8: one each; 1: all behind one endpoint's cap)",
    )
    add("--concurrency", type=_ints, default="1,16,64,256", help="connections, comma-separated (1,16,64,256)")
    add(
        "--collections",
        type=_words,
        default="solo,five",
        help="solo = 1 member + 0 explorers, five = 3 members + 2 explorers (solo,five)",
    )
    add("--modes", type=_words, default="json,stream", help="json, stream or both (json,stream)")
    add(
        "--count",
        type=int,
        default=None,
        help="measured requests per scenario (default: 25 per connection, "
        "300 to 6,400; quick: 6 per connection, 60 to 1,536)",
    )
    add(
        "--main",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="the main scenarios, image and side by side (default: on, unless --scaling or --tails is given)",
    )
    add("--image-mb", type=float, default=15.0, help="size of the image request in MB, 0 to skip (15)")
    add("--image-count", type=int, default=None, help="image panels measured (10; quick: 3)")
    add("--image-concurrency", type=int, default=1, help="image panels at once (1)")
    add(
        "--litellm",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="side by side with LiteLLM's proxy from perf/.venv-litellm (default: on in a full main run)",
    )
    add("--litellm-venv", type=Path, default=PERF / ".venv-litellm", help="the virtualenv holding LiteLLM")
    add(
        "--portkey",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="side by side with Portkey's gateway from perf/.portkey (default: on in a full main run)",
    )
    add("--portkey-prefix", type=Path, default=PERF / ".portkey", help="the npm prefix holding Portkey's gateway")
    add(
        "--portkey-install",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="npm-install Portkey's gateway into --portkey-prefix when it is missing (default: on)",
    )
    add(
        "--side-concurrency",
        "--litellm-concurrency",
        type=_ints,
        default="1,16,64",
        help="side-by-side concurrencies (1,16,64)",
    )
    add("--side-modes", "--litellm-modes", type=_words, default="json,stream", help="side-by-side modes (json,stream)")
    add("--rounds", type=int, default=2, help="rounds per gateway and concurrency in the side-by-side run (2)")
    add("--scaling", action="store_true", help="seat calls/s and overhead against seats per panel and prompt size")
    add("--scaling-concurrency", type=_ints, default="1,16,64", help="scaling concurrencies (1,16,64)")
    add("--scaling-modes", type=_words, default="json", help="scaling modes (json)")
    add(
        "--scaling-megabytes",
        type=float,
        default=None,
        help="prompt megabytes per large-prompt row at most (200; quick: 60)",
    )
    add("--tails", action="store_true", help="tails at a slow provider with the instrumented server")
    add("--tails-latency", type=float, default=0.5, help="the tails fleet's provider latency in seconds (0.5)")
    add(
        "--tails-jitter",
        type=float,
        default=0.0,
        help="the tails provider's latency varies by ± this share (0: fixed; 0.1: 450-550 ms)",
    )
    add("--tails-concurrency", type=_ints, default="16,64", help="tails concurrencies (16,64)")
    add("--tails-modes", type=_words, default="json", help="tails modes (json)")
    add(
        "--tails-count",
        type=int,
        default=None,
        help="measured panels per tails row (20 per connection, at least 400; quick: 8, at least 160)",
    )
    add("--tails-top", type=int, default=8, help="slowest requests listed per tails row (8)")
    add(
        "--tails-baseline",
        action="store_true",
        help="also run the tails rows on plain `benchwarmers serve` first (what the probes cost)",
    )
    add("--lag-interval", type=float, default=0.001, help="the loop-lag sampler's sleep in seconds (0.001)")
    add("--lag-floor", type=float, default=2.0, help="loop lags kept with their time from this many ms (2)")
    add(
        "--profile",
        action="store_true",
        help="sample the gateway with py-spy during the measured part (writes collapsed stacks to perf/results/; "
        "the sampler takes CPU, so profiled figures read a little worse)",
    )
    add("--profile-at", type=_ints, default="64", help="concurrencies to profile at (64)")
    add("--markdown", action="store_true", help="also print the tables as markdown (for docs/BENCHMARKS.md)")
    add("--results", type=Path, default=PERF / "results", help="where JSON, logs and profiles go (perf/results)")
    add("--keep", action="store_true", help="keep the bench home and the process logs")
    args = parser.parse_args(argv)
    for name in args.collections:
        if name not in COLLECTIONS:
            parser.error(f"unknown collection {name!r}; choose from {', '.join(COLLECTIONS)}")
    if args.main is None:
        args.main = not (args.scaling or args.tails)
    for peer in ("litellm", "portkey"):
        if getattr(args, peer) is None:
            setattr(args, peer, args.main and not args.quick)
    return args


async def measure(args: argparse.Namespace, logs: Path) -> dict[str, Any]:
    started = time.perf_counter()
    payload: dict[str, Any] = {"machine": machine(), "options": {k: str(v) for k, v in vars(args).items()}}
    results: list[Result] = []
    image = side = scaled = tails_found = None
    idle = 0.0
    if args.main or args.scaling or args.litellm or args.portkey:
        fake, fake_port = start_fake(args.latency, args.endpoints, logs, args.jitter)
        bench = Bench(logs)
        ceilings = Ceilings(fake, fake_port, args.latency, quick=args.quick, count=args.count)
        try:
            console.print(f"configuring a bench in {bench.home} over the fake provider on port {fake_port} ...")
            bench.configure(fake_port, args.endpoints)
            names = scaling_collections(bench, args.endpoints) if args.scaling else {}
            bench.start()
            assert bench.process is not None
            await run_load("127.0.0.1", bench.port, CHAT, chat_body("bench/five"), count=200, concurrency=8)
            idle = bench.process.usage().rss / MB
            console.print(f"gateway pid {bench.process.pid}, idle RSS after warm-up {idle:.1f} MB")
            if args.main:
                results = await load_scenarios(args, bench, fake)
                for result in results:
                    await ceilings.mark(result)
            if args.scaling:
                scaled = await scaling(args, bench, fake, ceilings, names, report_row)
            for concurrency in args.concurrency if args.main else []:
                await ceilings.at(concurrency)
            if args.main and args.image_mb > 0:
                image = await image_scenario(args, bench, fake)
            if args.litellm or args.portkey:
                for concurrency in args.side_concurrency:
                    await ceilings.at(concurrency)
                side = await side_by_side(args, bench, fake_port, logs, model_alias=alias(0, args.endpoints))
        finally:
            bench.stop()
            fake.stop()
            if not args.keep:
                bench.remove()
        ceiling = ceilings.all()
    else:
        ceiling = []
    if args.tails:
        tails_found = await tails(args, logs, report_row)
        ceiling += tails_found["ceilings"]
    payload.update(
        idle_rss_mb=round(idle, 1),
        results=[r.as_dict() for r in results],
        ceiling=[r.as_dict() for r in ceiling],
        image=image.as_dict() if image else None,
        side_by_side=side,
        scaling={k: [r.as_dict() for r in v] for k, v in scaled.items()} if scaled else None,
        tails={**tails_found, "results": [r.as_dict() for r in tails_found["results"]], "ceilings": None}
        if tails_found
        else None,
        goals=goals(results, image, idle, side, tails_found["results"] if tails_found else []),
        seconds=round(time.perf_counter() - started, 1),
    )
    payload["_objects"] = (results, ceiling, image, scaled, tails_found)
    return payload


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    logs = args.results / f"logs-{time.strftime('%Y%m%d-%H%M%S')}"
    logs.mkdir(parents=True, exist_ok=True)
    try:
        import uvloop

        runner: Any = uvloop.run
    except ImportError:
        runner = asyncio.run
    payload = runner(measure(args, logs))
    print_tables(payload, args.markdown)
    path = save(args.results, payload)
    console.print(f"\nresults: {path} (took {payload['seconds']:.0f} s)")
    if not args.keep:
        shutil.rmtree(logs, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
