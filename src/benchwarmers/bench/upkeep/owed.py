"""The verdicts-owed alert: raised when `owed_after` or more seats await a verdict, or the oldest
has waited more than `owed_days` days (gateway settings; 0 turns either off), and resolved by the
bench once neither holds.

Checked every few minutes by the server's watch (bench/upkeep/watch.py), not on every panel: two
reads of the owed count's covering index. An alert the user acknowledged stays quiet while the
verdicts are still owed; once they are caught up it is resolved, and the next fall behind raises a
new one.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from benchwarmers.store import alerts as alert_rows
from benchwarmers.store import counts
from benchwarmers.store.changes import record_change

if TYPE_CHECKING:
    from benchwarmers.bench.state import BenchState

KIND = "owed"
SUBJECT = "verdicts"
DAY = 86_400.0


def owed_reasons(owed: int, oldest: float | None, now: float, owed_after: int, owed_days: int) -> list[str]:
    """Why the alert is due (empty: it is not): the count, the age, or both."""
    reasons = []
    if owed_after and owed >= owed_after:
        reasons.append(f"{owed} seats await a verdict ({owed_after} or more)")
    if owed_days and oldest is not None and now - oldest > owed_days * DAY:
        since = time.strftime("%Y-%m-%d", time.gmtime(oldest))
        reasons.append(f"the oldest has waited since {since} (more than {owed_days} days)")
    return reasons


async def check_owed(state: BenchState, now: float | None = None) -> str | None:
    """Raise or resolve the verdicts-owed alert; "raised", "resolved", or None when nothing changed."""
    now = time.time() if now is None else now
    gateway = (await state.snapshot()).gateway
    async with state.read() as conn:
        owed = await counts.owed_count(conn)
        oldest = await counts.oldest_owed(conn) if owed else None
        unresolved = await alert_rows.unresolved_alerts(conn, KIND, SUBJECT)
    reasons = owed_reasons(owed, oldest, now, gateway.owed_after, gateway.owed_days)
    if reasons and not unresolved:
        said = "; ".join(reasons)
        message = (
            f"{said[0].upper()}{said[1:]}. Verdicts are the evidence that ranks models and picks explorers: "
            "GET /bench/panels?owed=1 lists the panels waiting (the dashboard marks their seats), and "
            "POST /bench/verdict judges each seat."
        )
        async with state.write() as conn:
            await alert_rows.raise_alert(conn, kind=KIND, subject=SUBJECT, message=message, now=now)
        return "raised"
    if not reasons and unresolved:
        ids = [a["id"] for a in unresolved]
        async with state.write() as conn:
            await alert_rows.resolve(conn, ids, now)
            await record_change(
                conn,
                actor="bench",
                subject="alert",
                name=SUBJECT,
                action="resolve",
                after={"kind": KIND, "ids": ids, "owed": owed},
            )
        return "resolved"
    return None
