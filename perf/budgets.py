"""What a daily budget costs a request: the admission check alone, on a real SQLite store.

    python -m perf.budgets                 # 2,000 admissions each way, over 20,000 panels recorded today
    python -m perf.budgets --panels 100000 --admits 5000

Three cases: no budget (nothing to do), a budget far from its end (the process's tally, a store
count every 5 s at most), and a budget near its end (a store count on every admission, as it must
be to be right with several processes). Prints microseconds per admission and the store counts made.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

from benchwarmers.bench.budgets import Budgets
from benchwarmers.bench.caller import Caller
from benchwarmers.bench.services import Bench
from benchwarmers.settings import Settings
from benchwarmers.store import budgets as budget_rows
from benchwarmers.store import calls


async def main(panels: int, admits: int) -> None:
    with tempfile.TemporaryDirectory() as home:
        async with Bench(Settings(home=Path(home))) as bench:
            now = time.time()
            rows = [
                {
                    "id": f"p{i}",
                    "created_at": now - i * 0.001,
                    "collection": "solo",
                    "reply": "all",
                    "shape": "",
                    "shape_by": "",
                    "caller": "app",
                    "request": {},
                    "request_hash": f"h{i}",
                    "skipped": [],
                }
                for i in range(panels)
            ]
            async with bench.state.write() as conn:
                for start in range(0, panels, 1000):
                    await calls.reserve_panels(conn, rows[start : start + 1000])
            counted = 0
            real_spent = budget_rows.spent

            async def spent(*args, **kwargs):  # type: ignore[no-untyped-def]
                nonlocal counted
                counted += 1
                return await real_spent(*args, **kwargs)

            budget_rows.spent = spent  # type: ignore[assignment]
            collection = {"name": "solo"}
            cases = {
                "no budget": Caller(name="app"),
                "far from its end": Caller(name="app", daily_panels=panels * 10),
                "near its end": Caller(name="app", daily_panels=panels + admits + 1),
            }
            print(f"{panels:,} panels recorded today; {admits:,} admissions per case")
            print(f"{'case':<18} {'µs/admission':>13} {'store counts':>13}")
            for label, caller in cases.items():
                budgets = Budgets(bench.state)
                counted = 0
                started = time.perf_counter()
                for _ in range(admits):
                    charged = await budgets.admit(collection, caller)
                    budgets.released(charged)  # no row written: the count stays where it is
                took = (time.perf_counter() - started) / admits * 1e6
                print(f"{label:<18} {took:>13.1f} {counted:>13,}")
            budget_rows.spent = real_spent  # type: ignore[assignment]


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--panels", type=int, default=20_000)
    parser.add_argument("--admits", type=int, default=2_000)
    args = parser.parse_args()
    asyncio.run(main(args.panels, args.admits))
