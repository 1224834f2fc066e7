"""The drain: every new alert sent once to every notification target, off the request path.

Alerts are raised in many places (the catalog refresh, the watch, a seat's failure streak, the CLI);
none of them sends anything. The drain, run by `serve` every BENCHWARMERS_NOTIFY_EVERY seconds (`NotifyJob`) and by the
one-shot upkeep, queues a delivery for each new (alert, target), claims the due ones atomically
(store/notify.py: a worker or host that claims the same moment gets none of them), sends them
through Apprise with a timeout, and records each: sent, or failed and due again later (ATTEMPTS in
all, then given up). A process that dies between sending and recording leaves its claim to lapse, so
such a delivery may be sent twice: at least once, never silently lost.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from benchwarmers.bench.admin.alerts import LABELS
from benchwarmers.bench.core.background import BackgroundJob
from benchwarmers.bench.notify import apprise_send
from benchwarmers.errors import BenchError
from benchwarmers.store import notify as notify_rows

if TYPE_CHECKING:
    from benchwarmers.bench.state import BenchState

log = logging.getLogger("benchwarmers.notify")

ATTEMPTS = 5
RETRY_AFTER = (60.0, 300.0, 1800.0, 7200.0)  # seconds after the 1st, 2nd, 3rd, 4th failure
BATCH = 20  # deliveries sent at once, each within apprise_send.SEND_TIMEOUT
LEASE = 2 * apprise_send.SEND_TIMEOUT + 60.0  # a claim outlives its sends; a dead sender's lapses
Sender = Callable[..., Awaitable[str | None]]


@dataclass
class Drained:
    queued: int = 0
    sent: int = 0
    retrying: int = 0
    gave_up: int = 0

    def describe(self) -> str:
        """One line for `notify drain` and the upkeep run's report."""
        return f"{self.sent} sent, {self.retrying} to retry later, {self.gave_up} given up ({self.queued} new)"


def message(row: dict[str, Any], public_url: str | None) -> tuple[str, str]:
    """The title and body of an alert's notification (what `benchwarmers alerts` shows, and how to act)."""
    label = LABELS.get(row["kind"], row["kind"])
    where = f"{public_url.rstrip('/')}/settings#alerts" if public_url else "the dashboard's Settings page"
    body = (
        f"{row['message']}\n\nAlert {row['alert_id']}: acknowledge it on {where} "
        f"or with `benchwarmers alerts --ack {row['alert_id']}`."
    )
    return f"Benchwarmers: {label}: {row['subject']}", body


async def drain(
    state: BenchState, *, clock: Callable[[], float] = time.time, send: Sender = apprise_send.send
) -> Drained:
    """Queue, claim and send what is due once; what happened."""
    done = Drained()
    async with state.read() as conn:
        if not await notify_rows.list_targets(conn):
            return done
    claim = secrets.token_hex(8)
    async with state.write() as conn:
        done.queued = await notify_rows.queue_new(conn, clock())
        claimed = await notify_rows.claim_due(conn, claim, clock(), lease=LEASE, limit=BATCH)
    if not claimed:
        return done
    errors = await asyncio.gather(*(_send_one(state, row, send) for row in claimed))
    now = clock()
    async with state.write() as conn:
        for row, error in zip(claimed, errors, strict=True):
            if error is None:
                await notify_rows.mark_sent(conn, row["id"], claim, now)
                done.sent += 1
                continue
            retry_at = now + RETRY_AFTER[row["attempts"] - 1] if row["attempts"] < ATTEMPTS else None
            await notify_rows.mark_failed(conn, row["id"], claim, error=error, retry_at=retry_at, now=now)
            then = "given up" if retry_at is None else f"next try in {retry_at - now:.0f} s"
            # The label only: the URL holds the target's secrets.
            log.warning(
                "notification of alert %s to %s (%s) failed, attempt %s of %s (%s): %s",
                row["alert_id"], row["target"], row["label"], row["attempts"], ATTEMPTS, then, error,
            )  # fmt: skip
            if retry_at is None:
                done.gave_up += 1
            else:
                done.retrying += 1
    return done


async def _send_one(state: BenchState, row: dict[str, Any], send: Sender) -> str | None:
    title, body = message(row, state.settings.public_url)
    url = state.secrets.decrypt(row["url_enc"])
    if url is None:
        return "its URL was sealed with another secret.key: remove the target and add it again"
    try:
        return await send(url, title=title, body=body)
    except BenchError as exc:  # Apprise not installed, say
        return str(exc)[:200]
    except Exception as exc:  # whatever a service's client raises must not lose the others' records
        return f"{type(exc).__name__} while sending"


class NotifyJob(BackgroundJob):
    """The drain inside `serve`, every BENCHWARMERS_NOTIFY_EVERY seconds; nothing it meets stops it or the server."""

    task_name = "benchwarmers-notify"

    def __init__(
        self,
        state: BenchState,
        *,
        sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
    ) -> None:
        self.state = state
        self.tick = state.settings.notify_every
        self.sleep = sleep
        self.rounds = 0
        self.failures = 0

    async def run(self) -> None:
        while True:
            try:
                await drain(self.state)
            except Exception as exc:  # the database away for a moment: the next round tries again
                self.failures += 1
                log.warning("notification drain failed (%s); next try in %.0f s", type(exc).__name__, self.tick)
            self.rounds += 1
            await self.sleep(self.tick)
