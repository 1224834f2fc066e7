"""What is left today (and this month) of each model's allowances: the day and month windows it is
paced by, its own and its endpoint's, as the pacer counts them (bench/pacing.py). Shown by
`check`, `model show`, the Models page and `/metrics`."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from benchwarmers.bench.pacing import Allowance, scopes_of
from benchwarmers.bench.snapshot import Snapshot
from benchwarmers.bench.state import BenchState


def allowance_public(allowance: Allowance) -> dict[str, Any]:
    limit = allowance.limit
    resets_at = allowance.resets_at
    return {
        "scope": f"{allowance.scope.kind} {allowance.scope.name}",
        "window": limit.window,
        "amount": limit.amount,
        "used": allowance.used,
        "left": allowance.left,
        "resets": limit.reset_text(),
        "resets_at": resets_at,
        "resets_at_iso": datetime.fromtimestamp(resets_at, UTC).isoformat() if resets_at is not None else None,
        "text": allowance.describe(),
    }


def _allowanced(snapshot: Snapshot, aliases: Iterable[str]) -> list[str]:
    """The aliases paced by a day or month window (their own or their endpoint's)."""
    found = []
    for alias in aliases:
        model = snapshot.models[alias]
        limits = (*model.limits, *snapshot.endpoints[model.endpoint].limits)
        if any(limit.period >= 86400 for limit in limits):
            found.append(alias)
    return found


async def model_allowances(state: BenchState, aliases: Iterable[str] | None = None) -> dict[str, list[dict[str, Any]]]:
    """alias → what is left of each of its day and month windows (models without one are left out)."""
    snapshot = await state.snapshot()
    found: dict[str, list[dict[str, Any]]] = {}
    for alias in _allowanced(snapshot, snapshot.models if aliases is None else aliases):
        found[alias] = [allowance_public(a) for a in await state.pacer.allowances(scopes_of(snapshot, alias))]
    return found


async def remaining_by_scope(state: BenchState) -> dict[tuple[str, str], int]:
    """(scope, window) → what is left, once per scope (an endpoint's windows are its models' too): `/metrics`."""
    remaining: dict[tuple[str, str], int] = {}
    for allowances in (await model_allowances(state)).values():
        for allowance in allowances:
            remaining[(allowance["scope"], allowance["window"])] = allowance["left"]
    return remaining
