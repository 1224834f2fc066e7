"""What the free-tier file costs a catalog refresh: parsing and validating the shipped file (once per
file version: load() caches it), and looking up each listed model's free tier (once per model per
refresh). Prints the figures for docs/BENCHMARKS.md, "Free tiers".

    python -m perf.free_tiers
"""

from __future__ import annotations

import statistics
import time
from importlib.resources import files

import orjson

from benchwarmers.catalog import free_tiers


def per_call(run, repeats: int) -> float:
    """Median microseconds a call, over five rounds of `repeats` calls."""
    rounds = []
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(repeats):
            run()
        rounds.append((time.perf_counter() - start) / repeats * 1e6)
    return statistics.median(rounds)


def main() -> None:
    raw = files("benchwarmers.catalog").joinpath("free_tiers.json").read_bytes()
    data = orjson.loads(raw)
    tiers = free_tiers.shipped()
    ids = [f"vendor/model-{i}:free" for i in range(250)] + [f"model-{i}" for i in range(250)]
    parse = per_call(lambda: free_tiers.parse(orjson.loads(raw)), 200)
    lookup = per_call(lambda: [tiers.lookup(i, "openrouter") for i in ids], 20) / len(ids)
    facts = per_call(lambda: tiers.lookup("x/y:free", "openrouter").facts(), 2000)  # type: ignore[union-attr]
    print(f"shipped file: {len(raw):,} bytes, {len(data['providers'])} providers, {len(tiers.tiers())} entries")
    print("| step | µs (median of 5 rounds) |")
    print("|---|---|")
    print(f"| parse and validate the file (once per file version) | {parse:,.1f} |")
    print(f"| look up one model (exact ids, then patterns) | {lookup:,.2f} |")
    print(f"| one model's free_tier facts (summary, UTC reset) | {facts:,.1f} |")


if __name__ == "__main__":
    main()
