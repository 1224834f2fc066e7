"""The router's primary per shape, cheap enough to ask on every panel: a usable pinned primary
(role "primary"), else the evidence's best by the one rule (bench/evidence/posterior.py) with its
ties, from the judged counts; cached until the config or the verdicts move.
"""

from __future__ import annotations

import weakref
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from benchwarmers.bench.bounds import PRIMARY
from benchwarmers.bench.evidence.board import pickable
from benchwarmers.bench.evidence.posterior import Best, Counts, best_of, epoch_verdicts
from benchwarmers.store import evidence as store

if TYPE_CHECKING:
    from benchwarmers.bench.state import BenchState


@dataclass(frozen=True)
class Primary:
    """Who the router uses for a shape, and on what grounds."""

    alias: str
    pinned: bool
    best: Best | None  # the evidence's best among models that can sit (interval-based: cheap)

    @property
    def tie_note(self) -> str:
        """'; tied with Y, Z (intervals overlap)' when the evidence's best is not separated, else ''."""
        if self.pinned or self.best is None or not self.best.tie:
            return ""
        return f"; tied with {', '.join(self.best.tied)} (intervals overlap)"

    def describe(self) -> str:
        """`X (pinned)`, `X (evidence)`, or `X (evidence; tied with Y, Z (intervals overlap))`."""
        return f"{self.alias} ({'pinned' if self.pinned else 'evidence'}{self.tie_note})"


@dataclass(frozen=True)
class _Primaries:
    key: tuple[int, int, float]  # (config version, newest verdict id, when the history was read)
    by_shape: dict[str, Primary | None]


_PRIMARIES: weakref.WeakKeyDictionary[BenchState, _Primaries] = weakref.WeakKeyDictionary()


def primary_map(
    counts: Mapping[tuple[str, str], Counts], pins: Mapping[str, str], usable: frozenset[str] | set[str]
) -> dict[str, Primary | None]:
    """shape → Primary from (alias, shape) → (useful, verdicts) counts and the pins (pure)."""
    by_shape: dict[str, dict[str, Counts]] = defaultdict(dict)
    for (alias, shape), found in counts.items():
        if alias in usable:
            by_shape[shape][alias] = found
    found_primaries: dict[str, Primary | None] = {}
    for shape in set(by_shape) | set(pins):
        best = best_of(by_shape.get(shape, {}))
        pin = pins.get(shape)
        if pin is not None and pin in usable:
            found_primaries[shape] = Primary(pin, True, best)
        else:
            found_primaries[shape] = Primary(best.alias, False, best) if best is not None else None
    return found_primaries


def primaries(
    counts: Mapping[tuple[str, str], Counts], pins: Mapping[str, str], usable: frozenset[str] | set[str]
) -> dict[str, str | None]:
    """shape → primary alias (see `primary_map`)."""
    return {shape: p.alias if p else None for shape, p in primary_map(counts, pins, usable).items()}


async def primary_of(state: BenchState, shape: str) -> Primary | None:
    """The model the router uses for `shape` and why: a usable pinned primary, else the evidence's
    best. Recomputed only when the config or the verdicts move (two cheap queries otherwise)."""
    snapshot = await state.snapshot()
    async with state.read() as conn:
        history = await state.fresh_history()
        # The history is re-read from the log every few seconds: a verdict another process wrote
        # reaches the primary with that re-read (loaded_at), one written here at once (its id).
        key = (snapshot.version, await store.newest_verdict(conn), history.loaded_at)
        cached = _PRIMARIES.get(state)
        if cached is None or cached.key != key:
            # The current epoch's evidence (bench/core/epochs.py): who is best now.
            counts = epoch_verdicts(history.current)
            pins = {r["shape"]: r["alias"] for r in await store.list_roles(conn) if r["role"] == PRIMARY}
            cached = _Primaries(key, primary_map(counts, pins, pickable(snapshot)))
            _PRIMARIES[state] = cached
    return cached.by_shape.get(shape)


async def primary_for(state: BenchState, shape: str) -> str | None:
    """The alias of `primary_of`; None when nothing is known."""
    found = await primary_of(state, shape)
    return found.alias if found is not None else None
