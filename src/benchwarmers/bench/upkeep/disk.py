"""The data folder's free space: the low-disk alert raised before the disk fills, and the reason
`/readyz` gives while it is full.

The watch checks the space every minute (bench/upkeep/watch.py): under BENCHWARMERS_DISK_ALERT_MB
it raises one `low_disk` alert, which the bench resolves once the space is back above it (a new one
is raised the next time it falls under). Writes are never refused for low space: only a write that
finds no room at all is (503 storage_full, store/disk.py), and the next one after room is made
succeeds.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from benchwarmers.store import alerts as alert_rows
from benchwarmers.store.changes import record_change
from benchwarmers.store.disk import free_bytes, size_text

if TYPE_CHECKING:
    from benchwarmers.bench.state import BenchState

KIND = "low_disk"
MB = 10**6
# /readyz says "not ready" under this much free space: a panel's rows can take megabytes (every
# answer up to answer_cap_kb), and SQLite's log grows between checkpoints.
FLOOR_BYTES = 32 * MB
# ... and for this long after a write found the disk full (one that succeeds ends it sooner), so a
# balancer that stopped sending requests sends them again once the space may be back.
FULL_SECONDS = 5.0


def readiness(state: BenchState) -> str | None:
    """Why the disk makes the bench not ready (None: it does not). `/readyz` is open in every mode:
    the reason names no path (the log and the alert do)."""
    if state.last_full is not None and time.monotonic() - state.last_full[0] < FULL_SECONDS:
        return "full: writes are refused with 503 storage_full until there is room"
    free = free_bytes(state.data_folder)
    if free is not None and free < FLOOR_BYTES:
        return f"nearly full: {size_text(free)} free, under {size_text(FLOOR_BYTES)}"
    return None


async def check_disk(state: BenchState, now: float | None = None) -> str | None:
    """Raise or resolve the low-disk alert; "raised", "resolved", or None when nothing changed."""
    now = time.time() if now is None else now
    threshold = state.settings.disk_alert_mb * MB
    free = free_bytes(state.data_folder)
    if free is None:
        return None
    subject = str(state.data_folder)
    async with state.read() as conn:
        unresolved = await alert_rows.unresolved_alerts(conn, KIND, subject)
    if free < threshold and not unresolved:
        message = (
            f"Only {size_text(free)} free on the disk of the data folder {subject} (the alert is raised under "
            f"BENCHWARMERS_DISK_ALERT_MB={state.settings.disk_alert_mb}). Free space there or move the data "
            'to a larger disk (docs/DEPLOY.md "A full disk"): once it is full, panels, verdicts and config '
            "changes are refused with 503 storage_full until there is room again."
        )
        async with state.write() as conn:
            await alert_rows.raise_alert(conn, kind=KIND, subject=subject, message=message, now=now)
        return "raised"
    if free >= threshold and unresolved:
        ids = [a["id"] for a in unresolved]
        async with state.write() as conn:
            await alert_rows.resolve(conn, ids, now)
            await record_change(
                conn, actor="bench", subject="alert", name=subject, action="resolve", after={"kind": KIND, "ids": ids}
            )
        return "resolved"
    return None
