"""Alerts as the user sees them, and acknowledging one (logged in the changes like any config change).

Kinds: `went_paid` (a free model now has a price: it stays out of explorer seats until acknowledged),
`retiring` (deprecated or gone from its listing), `failing` (its last seats all failed, so it is
retired until a probe or the user restores it: resolved then), `owed` (verdicts fall behind: resolved
once they are caught up), `possibly_changed` (its listing's identity changed: bench/evidence/identity.py),
`low_disk` (the data folder's free space fell under BENCHWARMERS_DISK_ALERT_MB: bench/upkeep/disk.py).
An alert is open until the user acknowledges it or the bench resolves it.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from benchwarmers.errors import NotFound
from benchwarmers.store import alerts as alert_rows
from benchwarmers.store.changes import record_change

if TYPE_CHECKING:
    from benchwarmers.bench.state import BenchState

LABELS = {
    "went_paid": "went paid",
    "retiring": "retiring",
    "failing": "failing",
    "owed": "verdicts owed",
    "possibly_changed": "possibly changed",
    "low_disk": "disk space low",
}


def alert_public(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": row["id"],
        "kind": row["kind"],
        "label": LABELS.get(row["kind"], row["kind"]),
        "subject": row["subject"],
        "message": row["message"],
        "created_at": row["created_at"],
        "acknowledged_at": row["acknowledged_at"],
        "resolved_at": row["resolved_at"],
    }


async def list_alerts(state: BenchState, *, include_acknowledged: bool = False) -> list[dict[str, Any]]:
    async with state.read() as conn:
        rows = await alert_rows.list_alerts(conn, include_acknowledged=include_acknowledged)
    return [alert_public(row) for row in rows]


async def acknowledge(state: BenchState, alert_id: int, *, actor: str | None = None) -> dict[str, Any]:
    """Acknowledge one alert; acknowledging again changes nothing. A went-paid model returns to the
    explorer pool (while it is free): the change record makes every process reload its snapshot."""
    async with state.write() as conn:
        # An id no database row can have (SQLite and PostgreSQL keep 64-bit ids) is simply not found.
        row = await alert_rows.get_alert(conn, alert_id) if 0 < alert_id < 2**63 else None
        if row is None:
            open_ids = [a["id"] for a in await alert_rows.list_alerts(conn)]
            listed = f" Open alerts: {', '.join(map(str, open_ids))}." if open_ids else " There are no open alerts."
            raise NotFound(f"no alert {alert_id}.{listed}", param="id", code="alert_not_found")
        if row["acknowledged_at"] is not None:
            return alert_public(row)
        now = time.time()
        await alert_rows.acknowledge(conn, alert_id, now)
        await record_change(
            conn,
            actor=actor or state.actor,
            subject="alert",
            name=row["subject"],
            action="acknowledge",
            before=alert_public(row),
            after={"id": alert_id, "kind": row["kind"], "acknowledged_at": now},
        )
        return alert_public({**row, "acknowledged_at": now})
