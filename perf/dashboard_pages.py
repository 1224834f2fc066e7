"""How long each dashboard page takes with a long call log (the issue's bar: under 300 ms with
100,000 recorded seats).

    python -m perf.dashboard_pages                 # 100,000 seats, 20 loads a page
    python -m perf.dashboard_pages --seats 300000  # more

A fresh home is seeded straight into the database (panels of five seats, answers of about
1.5 KB, a third of the answered seats judged, 40 models on one endpoint), then `benchwarmers
serve` runs in its own process and each page is fetched: the HTML, and for the Collections page
also the two requests its script makes first (`/api/panels/head`, `/api/panels`). Times are
wall-clock from this process over loopback: median, 95th percentile and the first (cold) load.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx2

from benchwarmers.bench.services import Bench
from benchwarmers.settings import Settings
from benchwarmers.store import roster
from benchwarmers.store.schema import collections, panels, seats, verdicts
from perf.fleet import free_port, wait_for_port  # perf/ is on the path when this file runs

BUDGET_MS = 300.0
SEATS_PER_PANEL = 5
MODELS = 40
SHAPES = ("general", "review", "code", "design")
ANSWER = "The function divides by the length without checking it, so an empty list raises. " * 18
PAGES = {
    "collections": ["/", "/api/panels/head", "/api/panels?limit=20"],
    "models": ["/models"],
    "leaderboard": ["/leaderboard"],
    "discover": ["/discover?free=1"],
    "settings": ["/settings"],
    "gateway card, page 50": ["/api/panels?limit=20&before={old}"],
}


async def seed(home: Path, total: int) -> float:
    """Write `total` seats; returns a panel time about 1,000 panels back (for an older page)."""
    rng = random.Random(7)
    async with Bench(Settings(home=home), actor="perf") as bench:
        async with bench.state.write() as conn:
            endpoint = await roster.insert_endpoint(
                conn, name="fake", base_url="http://127.0.0.1:9/v1", kind="openai", free_tier=True, enabled=True
            )
            for i in range(MODELS):
                pk = await roster.insert_model(
                    conn, alias=f"fake/model-{i}", endpoint_id=endpoint, model_id=f"model-{i}"
                )
                await roster.set_fact(conn, pk, "context_window", "listing", 8_000 * (1 + i % 16))
            now = time.time()
            await conn.execute(
                collections.insert().values(
                    name="core", description="perf", tags=[], members=["fake/model-0", "fake/model-1"],
                    reply="all", created_at=now, updated_at=now,
                )
            )  # fmt: skip
        start = time.time() - total * 20
        panel_rows, seat_rows, verdict_rows = [], [], []
        panel_count = total // SEATS_PER_PANEL
        for p in range(panel_count):
            pid = f"p{p:09d}"
            created = start + p * 100
            shape = rng.choice(SHAPES)
            panel_rows.append(
                {"id": pid, "created_at": created, "collection": "core", "reply": "all", "shape": shape,
                 "shape_by": "set on the collection", "caller": "local",
                 "request": {"messages": [{"role": "user", "content": f"question {p}"}]},
                 "request_hash": f"{p:064x}", "idempotency_key": None, "skipped": [], "note": None,
                 "seconds": 1.0, "response": None}
            )  # fmt: skip
            for s in range(SEATS_PER_PANEL):
                call = f"{pid}.{'member' if s < 2 else 'explorer'}{s + 1}"
                status = rng.choice(("ok",) * 8 + ("empty", "error"))
                seat_rows.append(
                    {"call": call, "panel_id": pid, "position": s, "seat": "member" if s < 2 else "explorer",
                     "alias": f"fake/model-{rng.randrange(MODELS)}", "endpoint": "fake", "shape": shape,
                     "status": status, "seconds": 1.5, "answer": ANSWER if status == "ok" else "",
                     "error": "boom" if status == "error" else "", "error_kind": None, "usage": None,
                     "caller": "local", "created_at": created + 1}
                )  # fmt: skip
                if status != "error" and rng.random() < 1 / 3:
                    verdict_rows.append(
                        {"call": call, "useful": rng.random() < 0.6, "note": "", "real": [], "false": [],
                         "caller": "local", "created_at": created + 2, "current": True}
                    )  # fmt: skip
            if len(seat_rows) >= 10_000 or p == panel_count - 1:
                async with bench.state.write() as conn:
                    await conn.execute(panels.insert(), panel_rows)
                    await conn.execute(seats.insert(), seat_rows)
                    if verdict_rows:
                        await conn.execute(verdicts.insert(), verdict_rows)
                panel_rows, seat_rows, verdict_rows = [], [], []
        return start + (panel_count - 1000) * 100


def measure(base: str, paths: list[str], loads: int) -> tuple[float, float, float]:
    """Median, 95th percentile and first load, in ms, of fetching `paths` one after another."""
    times = []
    with httpx2.Client(base_url=base, timeout=30) as client:
        for _ in range(loads + 1):
            started = time.perf_counter()
            for path in paths:
                client.get(path).raise_for_status()
            times.append((time.perf_counter() - started) * 1000)
    first, rest = times[0], sorted(times[1:])
    return statistics.median(rest), rest[max(0, round(0.95 * len(rest)) - 1)], first


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seats", type=int, default=100_000)
    parser.add_argument("--loads", type=int, default=20)
    args = parser.parse_args()
    home = Path(tempfile.mkdtemp(prefix="bw-pages-"))
    try:
        began = time.perf_counter()
        old = asyncio.run(seed(home, args.seats))
        print(f"seeded {args.seats:,} seats in {time.perf_counter() - began:.1f} s")
        port = free_port()
        env = {**os.environ, "BENCHWARMERS_HOME": str(home), "BENCH_BIND": f"127.0.0.1:{port}"}
        server = subprocess.Popen(
            [sys.executable, "-c", "from benchwarmers.cli.app import main; main()", "serve"],
            env=env,
            stdout=subprocess.DEVNULL,
        )
        try:
            wait_for_port(port, server, "benchwarmers serve")
            print(f"{'page':<24}{'median ms':>12}{'p95 ms':>10}{'first ms':>10}")
            worst = 0.0
            for name, paths in PAGES.items():
                median, p95, first = measure(f"http://127.0.0.1:{port}", [p.format(old=old) for p in paths], args.loads)
                worst = max(worst, p95)
                print(f"{name:<24}{median:>12.1f}{p95:>10.1f}{first:>10.1f}")
            print(
                f"worst p95 {worst:.1f} ms: {'within' if worst < BUDGET_MS else 'OVER'} the {BUDGET_MS:.0f} ms budget"
            )
            return 0 if worst < BUDGET_MS else 1
        finally:
            server.terminate()
            server.wait(timeout=15)
    finally:
        shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
