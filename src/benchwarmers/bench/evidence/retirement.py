"""Retiring a model that keeps failing, and bringing it back.

After `failing_after` failed seats in a row (a gateway setting) a model is **retired**: it leaves
the explorer pool, and as a member or nominee it is shown with the status `retired` instead of
being asked. A `failing` alert says so. A background probe (bench/upkeep/probe.py) sends it a
one-token call 10 minutes later, then after 20, 40, ... minutes, at most a day apart, and restores
it when it answers; the user can restore it at once (`benchwarmers model restore ALIAS`). Either
way the alert is resolved and the change is logged.

The rules are pure; `retire` and `restore` write them, inside the caller's transaction.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, cast

from sqlalchemy.ext.asyncio import AsyncConnection

from benchwarmers.store import alerts as alert_rows
from benchwarmers.store import roster
from benchwarmers.store.calls import LAST_ERROR  # retention cuts what follows it in an old alert
from benchwarmers.store.changes import record_change

if TYPE_CHECKING:
    from benchwarmers.bench.snapshot import ModelView

FIRST_PROBE = 600.0  # seconds from retirement to the first probe
MAX_PROBE_GAP = 24 * 3600.0


def probe_delay(failed_probes: int) -> float:
    """Seconds until the next probe after `failed_probes` probes failed: 10 min, doubling, a day at most."""
    return cast(float, min(MAX_PROBE_GAP, FIRST_PROBE * 2 ** max(0, min(failed_probes, 20))))


def _last(streak: int) -> str:
    return "its last seat" if streak == 1 else f"its last {streak} seats in a row"


def _clock(at: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(at))


def retired_note(model: ModelView) -> str:
    """Why a retired member or nominee was not asked, and what brings it back (the seat's `error`)."""
    when = f"; next probe {_clock(model.next_probe_at)}" if model.next_probe_at is not None else ""
    return (
        f"retired: not asked, it failed {_last(model.failure_streak)}{when}; "
        f"`benchwarmers model restore {model.alias}` brings it back now"
    )


async def retire(conn: AsyncConnection, model: ModelView, *, streak: int, error: str, now: float) -> bool:
    """Retire `model` after `streak` failures in a row; False when it already was (nothing written)."""
    next_probe = now + probe_delay(0)
    if not await roster.retire_model(conn, model.pk, now=now, next_probe_at=next_probe):
        return False
    await record_change(
        conn,
        actor="bench",
        subject="model",
        name=model.alias,
        action="retire",
        after={"retired_at": now, "next_probe_at": next_probe, "streak": streak},
    )
    await alert_rows.raise_alert(
        conn,
        kind="failing",
        subject=model.alias,
        message=f"{model.alias} failed {_last(streak)} and is retired: explorers skip it and "
        f"collections show it as retired without asking it, until a probe (every 10 minutes at first, then "
        f"less often) gets an answer or you run `benchwarmers model restore {model.alias}`"
        f"{LAST_ERROR}{error or 'empty answer'}",
        now=now,
    )
    return True


async def restore(conn: AsyncConnection, model_pk: int, alias: str, *, actor: str, by: str, now: float) -> bool:
    """Bring a retired model back (`by`: "probe" or "user"); its failing alerts are resolved.
    False when it was not retired (nothing written)."""
    if not await roster.restore_model(conn, model_pk):
        return False
    alerts = await alert_rows.unresolved_alerts(conn, "failing", alias)
    await alert_rows.resolve(conn, [a["id"] for a in alerts], now)
    await record_change(
        conn,
        actor=actor,
        subject="model",
        name=alias,
        action="restore",
        after={"by": by, "resolved_alerts": [a["id"] for a in alerts]},
    )
    return True
