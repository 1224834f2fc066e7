"""What the notification drain costs: a round with nothing to send (what `serve` does every
BENCHWARMERS_NOTIFY_EVERY seconds), and sending a backlog of alerts to webhooks on loopback.

    python -m perf.notify_drain                      # 1 target, 200 alerts
    python -m perf.notify_drain --targets 3 --alerts 500

Prints the median milliseconds of an idle round (no targets; targets and nothing new) and the
seconds and notifications a second of draining the backlog (BATCH at a time, sent concurrently).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path

from benchwarmers.bench.notify.drain import drain
from benchwarmers.bench.services import Bench
from benchwarmers.settings import Settings
from benchwarmers.store import alerts as alert_rows
from tests.fakes.webhook import WebhookReceiver


async def idle_ms(bench: Bench, rounds: int = 50) -> float:
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        await drain(bench.state)
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


async def main(targets: int, alerts: int) -> None:
    with tempfile.TemporaryDirectory() as home, WebhookReceiver() as hook:
        async with Bench(Settings(home=Path(home)), actor="perf") as bench:
            no_targets = await idle_ms(bench)
            for n in range(targets):
                await bench.notify.add(hook.apprise_url(f"/t{n}"), f"t{n}")
            async with bench.state.write() as conn:
                for n in range(alerts):
                    await alert_rows.raise_alert(conn, kind="failing", subject=f"fake/m{n}", message="m", now=1.0)
            started = time.perf_counter()
            sent = 0
            while done := (await drain(bench.state)).sent:
                sent += done
            seconds = time.perf_counter() - started
            nothing_new = await idle_ms(bench)
    print(f"idle round, no targets:            {no_targets:.2f} ms (median of 50)")
    print(f"idle round, {targets} target(s), all sent:  {nothing_new:.2f} ms (median of 50)")
    print(f"backlog: {sent} notifications ({alerts} alerts x {targets}) in {seconds:.2f} s = {sent / seconds:.0f}/s")
    print(f"webhook received {len(hook.received)} posts")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--targets", type=int, default=1)
    parser.add_argument("--alerts", type=int, default=200)
    args = parser.parse_args()
    asyncio.run(main(args.targets, args.alerts))
