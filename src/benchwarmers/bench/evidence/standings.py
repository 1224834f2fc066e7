"""Standings from counts: each model's useful rate and Wilson interval per shape, ranked as the
router ranks them, from two grouped queries that read indexes (`store/counts.py`).

This is what the dashboard's Leaderboard and Models pages show, so they stay fast however long
the call log grows. The full leaderboard (`bench/evidence/board.py`, `/api/leaderboard`, the CLI) adds
pairwise strengths and claims per answer, at a cost that grows with every seat.
"""

from __future__ import annotations

import statistics
import time
from collections import defaultdict
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from benchwarmers.bench.core.epochs import Track
from benchwarmers.bench.evidence.board import (
    Standing,
    board_shapes,
    error_kinds,
    rank_key,
    since_days,
    with_ranks,
)
from benchwarmers.bench.evidence.identity import flagged
from benchwarmers.bench.evidence.primary import Primary, primary_of
from benchwarmers.bench.evidence.stats import maturity, nearest_rank, wilson
from benchwarmers.store import counts

if TYPE_CHECKING:
    from benchwarmers.bench.state import BenchState


@dataclass(frozen=True)
class ShapeStandings:
    shape: str
    standings: tuple[Standing, ...]
    primary: str | None  # who the router uses for this shape (a usable pin, else the evidence's pick)
    chosen: Primary | None = None  # the same, with why: pinned, or the evidence and its ties

    @property
    def tie_note(self) -> str:
        """'tied with Y, Z (intervals overlap)' when the evidence's best is not separated, else ''."""
        return self.chosen.tie_note.removeprefix("; ") if self.chosen is not None else ""


def standing_of_counts(row: dict[str, Any], figures: dict[str, Any] | None = None) -> Standing:
    low, high = wilson(row["useful"], row["verdicts"])
    seconds = (figures or {}).get("seconds", [])
    return Standing(
        alias=row["alias"],
        shape=row["shape"],
        seats=row["seats"],
        verdicts=row["verdicts"],
        useful=row["useful"],
        low=low,
        high=high,
        maturity=maturity(row["verdicts"]),
        real_per_answer=None,
        false_per_answer=None,
        awaiting=max(0, row["seats"] - row["errors"] - row["empties"] - row["judged_ok"]),
        errors=row["errors"],
        empties=row["empties"],
        median_seconds=statistics.median(seconds) if seconds else None,
        last_seated=row["last_seated"],
        last_judged=row["last_judged"],
        error_kinds=error_kinds((figures or {}).get("error_kinds", {})),
        p90_seconds=nearest_rank(seconds, 0.9),
    )


def with_epoch(standing: Standing, track: Track | None) -> Standing:
    """The standing with its current epoch beside the all-time record, when a change opened one."""
    if track is None or not track.changes:
        return standing
    change = track.changes[-1]
    return replace(
        standing,
        current_useful=track.good,
        current_verdicts=track.n,
        changed_at=change.at,
        changed_why=change.describe(),
    )


async def standings(state: BenchState, days: float | None = None) -> list[ShapeStandings]:
    """Every shape with seats in the window, in the configured order, each ranked best first."""
    since = since_days(days)
    snapshot = await state.snapshot()
    async with state.read() as conn:
        rows = await counts.standing_counts(conn, since)
        figures = await counts.seat_figures(conn, since)
        listing_changes = await flagged(conn, time.time())
    # The current epochs are the seat history's, kept over every verdict: shown for the whole record only.
    tracks = (await state.fresh_history()).tracks if days is None else {}
    by_shape: dict[str, list[Standing]] = defaultdict(list)
    for row in rows:
        standing = standing_of_counts(row, figures.get((row["alias"], row["shape"])))
        standing = replace(standing, listing_changed=listing_changes.get(row["alias"]))
        by_shape[row["shape"]].append(with_epoch(standing, tracks.get((row["alias"], row["shape"]))))
    found = []
    for shape in board_shapes(snapshot, by_shape):
        chosen = await primary_of(state, shape)
        ranked = tuple(with_ranks(sorted(by_shape[shape], key=rank_key)))
        found.append(ShapeStandings(shape, ranked, chosen.alias if chosen else None, chosen))
    return found
