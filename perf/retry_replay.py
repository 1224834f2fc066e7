"""What openai-python's own retries get from a panel slower than its timeout (docs/GATEWAY.md, "Replays").

    python -m perf.retry_replay                    # each timeout × slowest seat, 3 runs each
    python -m perf.retry_replay --runs 5 --timeouts 1 2 --seats 1.5 3 5

A real bench server (in this process's thread, as tests/support/benchserver.py runs it) and the fake provider:
a collection of two members, one answering at once and one after `seat` seconds. The SDK is
`OpenAI(timeout=T)` with its default retries (2). Per combination: how many runs got every seat's
answer, the attempts the SDK made (mean), the provider calls (mean; 2 = each model once), the
panels recorded (one a run, even when the SDK gave up first), and the wall time until the SDK
returned or gave up (median), against the slowest seat's own latency.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import httpx2
from openai import APITimeoutError, DefaultHttpxClient, OpenAI

from benchwarmers.bench.services import Bench
from benchwarmers.store import calls
from tests.fakes.upstream import FakeUpstream
from tests.support.benchserver import BenchServer, add_fake_endpoint, listed

SLOW, FAST = "phi-4", "kimi-k2"


def one_run(server: BenchServer, fake: FakeUpstream, timeout: float, seat: float, text: str) -> dict[str, float]:
    fake.script(SLOW, latency=seat)
    fake.script(FAST, latency=0.02)
    before = len(fake.chat_requests)
    attempts: list[str] = []

    def count(request: httpx2.Request) -> None:
        attempts.append(request.headers["x-stainless-retry-count"])

    client = OpenAI(
        base_url=server.v1,
        api_key="not-needed-on-loopback",
        timeout=timeout,
        http_client=DefaultHttpxClient(event_hooks={"request": [count]}),
    )
    started = time.perf_counter()
    complete = 0.0
    try:
        reply = client.chat.completions.create(model="bench/retry", messages=[{"role": "user", "content": text}])
        complete = float(all(s["status"] == "ok" for s in reply.bench["seats"]))
    except APITimeoutError:
        pass
    wall = time.perf_counter() - started
    return {
        "complete": complete,
        "attempts": float(len(attempts)),
        "calls": float(len(fake.chat_requests) - before),
        "wall": wall,
    }


def panels_recorded(server: BenchServer, at_least: int = 0, wait: float = 0.0) -> int:
    """Panels recorded so far; with `wait`, once there are `at_least` (a panel whose SDK gave up is
    recorded when its slowest seat is back), or when `wait` seconds have passed."""

    async def count(bench: Bench) -> int:
        async with bench.state.read() as conn:
            return len(await calls.list_panels(conn, limit=10_000))

    deadline = time.monotonic() + wait
    while True:
        found = server.admin(count)
        if found >= at_least or time.monotonic() > deadline:
            return found
        time.sleep(0.1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3, help="runs of each combination (default 3)")
    parser.add_argument("--timeouts", type=float, nargs="+", default=[1.0, 2.0], help="the SDK's timeout, seconds")
    parser.add_argument("--seats", type=float, nargs="+", default=[1.5, 3.0, 5.0], help="the slowest seat, seconds")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bw-retry-") as home, FakeUpstream() as fake:
        server = BenchServer(Path(home) / "home").start()
        try:
            add_fake_endpoint(server, fake, models=[listed(SLOW), listed(FAST)])
            retry = {"name": "retry", "members": [f"fake/{SLOW}", f"fake/{FAST}"], "description": "retry work"}
            server.admin(lambda bench: bench.collections.add_collection({**retry, "tags": [], "max_explorers": 0}))
            print(
                "| SDK timeout s | slowest seat s | every seat answered | attempts | provider calls | panels | wall s |"
            )
            print("|---|---|---|---|---|---|---|")
            for timeout in args.timeouts:
                for seat in args.seats:
                    panels = panels_recorded(server)
                    runs = [one_run(server, fake, timeout, seat, f"q-{timeout}-{seat}-{i}") for i in range(args.runs)]
                    made = panels_recorded(server, panels + args.runs, wait=seat + 5) - panels
                    print(
                        f"| {timeout:g} | {seat:g} | {sum(r['complete'] for r in runs):.0f}/{len(runs)} "
                        f"| {statistics.mean(r['attempts'] for r in runs):.1f} "
                        f"| {statistics.mean(r['calls'] for r in runs):.1f} | {made}/{len(runs)} "
                        f"| {statistics.median(r['wall'] for r in runs):.2f} |"
                    )
        finally:
            server.stop()


if __name__ == "__main__":
    main()
