"""Probing retired models: a one-token call to each whose turn has come, and back it comes when it
answers (see bench/evidence/retirement.py for the rules).

An answer is any reply the provider serves, empty included: one token is too few for some models
to say anything, and the probe asks whether the model is served, not whether it is good. A probe
that fails waits twice as long as the last (10 minutes at first, a day at most); each is logged in
the changes log, so every process sees when the next one is due.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

import orjson

from benchwarmers.bench.core.outcomes import SeatOutcome
from benchwarmers.bench.evidence.retirement import probe_delay, restore
from benchwarmers.bench.panels.prepare import scrub_outcome
from benchwarmers.bench.panels.run import call_model
from benchwarmers.store import roster
from benchwarmers.store.calls import ANSWERED
from benchwarmers.store.changes import record_change

if TYPE_CHECKING:
    from benchwarmers.bench.snapshot import Snapshot
    from benchwarmers.bench.state import BenchState

PROBE_TOKENS = 32
PROBE_PROMPT = "Reply with the single word OK."
ERROR_KEPT = 300  # characters of a failed probe's error written to the log


@dataclass(frozen=True)
class Probed:
    alias: str
    answered: bool
    error: str = ""
    next_probe_at: float | None = None


def probe_body(model_id: str) -> bytes:
    return orjson.dumps(
        {
            "model": model_id,
            "messages": [{"role": "user", "content": PROBE_PROMPT}],
            "max_tokens": 1,
            "stream": False,
        }
    )


def _secrets(state: BenchState, snapshot: Snapshot) -> list[str]:
    """What no error may carry: every endpoint's key and the admin token (as a panel scrubs them)."""
    found = [e.ref.api_key for e in snapshot.endpoints.values() if e.ref.api_key]
    return [*found, state.settings.admin_token] if state.settings.admin_token else found


async def _ask(state: BenchState, snapshot: Snapshot, alias: str, seat_timeout: float) -> SeatOutcome:
    outcome = await call_model(
        state.clients,
        state.pacer,
        snapshot,
        alias=alias,
        call=f"probe:{alias}",
        kind="probe",
        body=probe_body(snapshot.models[alias].model_id),
        seat_timeout=seat_timeout,
        tokens=PROBE_TOKENS,  # a one-token question: paced like any call, never much of a budget
    )
    scrub_outcome(outcome, _secrets(state, snapshot))
    return outcome


async def probe_due(state: BenchState, now: float | None = None) -> list[Probed]:
    """Probe every retired model whose next probe is due (all at once); restore those that answer."""
    now = time.time() if now is None else now
    snapshot = await state.snapshot()
    async with state.read() as conn:
        due = [row for row in await roster.due_probes(conn, now) if row["alias"] in snapshot.models]
    if not due:
        return []
    state.upstream.configure(int(snapshot.gateway["endpoint_concurrency"]))
    timeout = float(snapshot.gateway["seat_timeout"])
    outcomes = await asyncio.gather(*(_ask(state, snapshot, row["alias"], timeout) for row in due))
    probed: list[Probed] = []
    async with state.write() as conn:
        for row, outcome in zip(due, outcomes, strict=True):
            alias = row["alias"]
            if outcome.status in ANSWERED:
                await restore(conn, row["id"], alias, actor="probe", by="probe", now=now)
                probed.append(Probed(alias, answered=True))
                continue
            failed = row["probes"] + 1
            next_at = now + probe_delay(failed)
            error = outcome.error[:ERROR_KEPT]
            await roster.probe_failed(conn, row["id"], probes=failed, next_probe_at=next_at, error=error)
            await record_change(
                conn,
                actor="probe",
                subject="model",
                name=alias,
                action="probe",
                after={"answered": False, "error": error, "probes": failed, "next_probe_at": next_at},
            )
            probed.append(Probed(alias, answered=False, error=error, next_probe_at=next_at))
    return probed
