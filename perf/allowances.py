"""What a slot costs the pacer (bench/pacing.py) with a fixed daily allowance beside the moving
windows, in memory: microseconds a `take` (best of 5 rounds of 20,000), for a model paced by a
minute's moving window, by a fixed day (resets-day), and by both; and a model's first take of
the day, which reads what the store says was spent (here a seed that answers at once).

    python -m perf.allowances
"""

from __future__ import annotations

import asyncio
import time

from benchwarmers.bench.pacing import Pacer, Scope
from benchwarmers.catalog.pace import DAY, Limit

TAKES = 20_000
MINUTE = Limit("requests", 60, 10**9)
FIXED_DAY = Limit("requests", DAY, 10**9, 0)


async def per_take(limits: tuple[Limit, ...]) -> float:
    best = float("inf")
    for _ in range(5):
        pacer = Pacer()
        scope = Scope("model", "perf/m", limits)
        started = time.perf_counter()
        for _ in range(TAKES):
            await pacer.take([scope], 100)
        best = min(best, (time.perf_counter() - started) / TAKES)
    return best * 1e6


async def first_of_day() -> float:
    async def seed(scope: Scope, limit: Limit, since: float) -> int:
        return 0

    best = float("inf")
    for i in range(200):
        pacer = Pacer(seed=seed)
        scope = Scope("model", f"perf/{i}", (FIXED_DAY,))
        started = time.perf_counter()
        await pacer.take([scope], 100)
        best = min(best, time.perf_counter() - started)
    return best * 1e6


async def main() -> None:
    print("| paced by | µs a take |")
    print("|---|---:|")
    for name, limits in (
        ("a minute (moving)", (MINUTE,)),
        ("a fixed day", (FIXED_DAY,)),
        ("both", (MINUTE, FIXED_DAY)),
    ):
        print(f"| {name} | {await per_take(limits):.1f} |")
    print(f"| a fixed day, first take (seeded) | {await first_of_day():.1f} |")


if __name__ == "__main__":
    asyncio.run(main())
