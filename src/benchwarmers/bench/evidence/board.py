"""Evidence that learns: per model × shape standings, pairwise strengths, and the router's pick.

Only seated seats count (member, nominee, explorer): a merger answers a different question (merge
these answers) and a decision model labels prompts. A standing's useful rate carries a 95% Wilson
interval; pairwise Bradley–Terry strengths (a useful answer beats a not-useful one in the same
panel; among useful ones, fewer false claims wins) are reported beside it, never instead of it.

The router's pick for a shape is the best by the one evidence rule (bench/evidence/posterior.py:
the interval's lower end, no verdict gate), among models that could sit today (on the roster,
enabled, not retiring), with its ties said. A user's pinned primary (`roles`: role "primary",
shape, alias) wins while that model can sit.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import random
import statistics
import time
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import orjson

from benchwarmers.bench.bounds import PRIMARY
from benchwarmers.bench.core.epochs import replay
from benchwarmers.bench.evidence.identity import ListingChange, flagged
from benchwarmers.bench.evidence.posterior import Best, best_of, order_key
from benchwarmers.bench.evidence.stats import (
    Cell,
    Judged,
    bootstrap_bt,
    bradley_terry,
    nearest_rank,
    pairwise_outcomes,
    rank_ranges,
    wilson,
)
from benchwarmers.bench.evidence.stats import maturity as maturity_of
from benchwarmers.bench.names import unknown_shape
from benchwarmers.bench.snapshot import Snapshot
from benchwarmers.errors import InvalidRequest
from benchwarmers.store import evidence as store

if TYPE_CHECKING:
    from benchwarmers.bench.state import BenchState

HUMAN = "human"  # a verdict's source when a person gave it (the suite's is "suite")
BOOTSTRAP_SAMPLES = 200
SEED = 0  # a fixed seed: the same evidence always shows the same intervals
DAY = 86_400.0
FAILING_SHARE = 0.5  # of a standing's seats failed or answered empty: the leaderboard marks it failing


@dataclass(frozen=True)
class Standing:
    """One model's evidence on one shape."""

    alias: str
    shape: str
    seats: int
    verdicts: int
    useful: int
    low: float
    high: float
    maturity: str
    real_per_answer: float | None
    false_per_answer: float | None
    awaiting: int  # seats with a real (ok) answer and no verdict yet: empty answers are not owed
    errors: int
    empties: int
    median_seconds: float | None  # over ok seats: how long a real answer takes
    last_seated: float | None
    last_judged: float | None
    strength: float | None = None  # Bradley–Terry log-strength; None without pairwise games
    strength_low: float | None = None
    strength_high: float | None = None
    sources: tuple[tuple[str, int], ...] = ()  # verdicts by source (human, suite)
    error_kinds: tuple[tuple[str, int], ...] = ()  # (failure class, seats), most first
    p90_seconds: float | None = None  # over ok seats
    rank_range: tuple[int, int] | None = None  # shared ranks where intervals overlap; None without verdicts
    truncated: int = 0  # answers that stopped at their token limit (finish_reason: length), counted apart
    # The current epoch (bench/core/epochs.py) beside the all-time record above: None = the same.
    current_useful: int | None = None
    current_verdicts: int | None = None
    changed_at: float | None = None  # when the current epoch's first verdict was given
    changed_why: str | None = None  # e.g. "recent 6/25 against 160/200 before"
    listing_changed: ListingChange | None = None  # its listing's identity changed (bench/evidence/identity.py)

    @property
    def error_rate(self) -> float | None:
        return self.errors / self.seats if self.seats else None

    @property
    def failing(self) -> bool:
        """Half or more of its seats gave no answer: an error, or an empty answer (never owed a verdict)."""
        return bool(self.seats) and (self.errors + self.empties) / self.seats >= FAILING_SHARE

    @property
    def rank_text(self) -> str:
        if self.rank_range is None:
            return "–"
        best, worst = self.rank_range
        return str(best) if best == worst else f"{best}–{worst}"

    @property
    def errors_text(self) -> str:
        """`18 of 18 (100%): 12 upstream_error, 6 timeout`, or `none`."""
        if not self.errors:
            return "none"
        kinds = ", ".join(f"{n} {kind}" for kind, n in self.error_kinds)
        return f"{self.errors} of {self.seats} ({round(100 * self.errors / self.seats)}%)" + (
            f": {kinds}" if kinds else ""
        )

    @property
    def rate(self) -> float | None:
        return self.useful / self.verdicts if self.verdicts else None

    @property
    def current(self) -> tuple[int, int]:
        """(useful, verdicts) of the current epoch: what seating weighs now."""
        if self.current_verdicts is None or self.current_useful is None:
            return self.useful, self.verdicts
        return self.current_useful, self.current_verdicts

    def current_public(self) -> dict[str, Any]:
        useful, verdicts = self.current
        low, high = wilson(useful, verdicts)
        return {
            "useful": useful,
            "verdicts": verdicts,
            "rate": _round(useful / verdicts if verdicts else None, 4),
            "interval": [round(low, 4), round(high, 4)],
        }

    def cell(self) -> Cell:
        return Cell(self.alias, self.shape, self.verdicts, self.useful, self.low, self.high, self.maturity)

    def public(self, rank: int | None) -> dict[str, Any]:
        return {
            "rank": rank,
            "alias": self.alias,
            "seats": self.seats,
            "verdicts": self.verdicts,
            "sources": dict(self.sources),
            "useful": self.useful,
            "rate": _round(self.rate, 4),
            "interval": [round(self.low, 4), round(self.high, 4)],
            "maturity": self.maturity,
            "real_per_answer": _round(self.real_per_answer, 3),
            "false_per_answer": _round(self.false_per_answer, 3),
            "awaiting": self.awaiting,
            "errors": self.errors,
            "error_rate": _round(self.error_rate, 4),
            "errors_by_kind": dict(self.error_kinds),
            "empties": self.empties,
            "truncated": self.truncated,
            "median_seconds": _round(self.median_seconds, 3),
            "p90_seconds": _round(self.p90_seconds, 3),
            "rank_range": None if self.rank_range is None else list(self.rank_range),
            "last_seated": self.last_seated,
            "last_judged": self.last_judged,
            "strength": _round(self.strength, 3),
            "strength_interval": (
                None
                if self.strength_low is None or self.strength_high is None
                else [round(self.strength_low, 3), round(self.strength_high, 3)]
            ),
            "current": self.current_public(),
            "changed": None if self.changed_at is None else {"at": self.changed_at, "why": self.changed_why},
            "listing_changed": None if self.listing_changed is None else self.listing_changed.public(),
        }


@dataclass(frozen=True)
class Board:
    """One shape's leaderboard: standings ranked by lower bound, and who the router would use."""

    shape: str
    standings: tuple[Standing, ...]
    panels: int
    judged_panels: int
    comparisons: int  # pairwise outcomes behind the strengths
    pick: str | None  # the evidence's choice
    pinned: str | None  # the user's pin, whether or not it can be used today
    primary: str | None  # what the router uses: a usable pin, else the pick
    best: Best | None = None  # the pick with its ties and P(best), among models that can sit

    @property
    def primary_by(self) -> str | None:
        if self.primary is None:
            return None
        return "pinned" if self.primary == self.pinned else "evidence"

    def public(self) -> dict[str, Any]:
        return {
            "shape": self.shape,
            "primary": self.primary,
            "primary_by": self.primary_by,
            "pick": self.pick,
            "best": None if self.best is None else self.best.as_json(),
            "pinned": self.pinned,
            "panels": self.panels,
            "judged_panels": self.judged_panels,
            "comparisons": self.comparisons,
            "models": [s.public(rank) for rank, s in numbered(self.standings)],
        }


def numbered(standings: Sequence[Standing]) -> list[tuple[int | None, Standing]]:
    """Each standing with its place among the ranked ones (1, 2, …); None for one without a rank."""
    ranked = (s for s in standings if s.rank_range is not None)
    places = {id(s): place for place, s in enumerate(ranked, start=1)}
    return [(places.get(id(s)), s) for s in standings]


UNJUDGED = {"useful": None, "real": None, "false_claims": None, "judge": None, "judged_at": None, "source": None}


def _round(value: float | None, digits: int) -> float | None:
    return None if value is None else round(value, digits)


def rank_key(standing: Standing) -> tuple[bool, float, float, int, str]:
    """The router's order (posterior.order_key): judged first, then the interval's lower end, the
    rate, the verdicts; alias last so the order is stable."""
    return (standing.verdicts == 0, *order_key(standing.useful, standing.verdicts), standing.alias)


def standing_of(alias: str, shape: str, rows: Sequence[Mapping[str, Any]]) -> Standing:
    """Summarise one model's seats on one shape (rows from `store.evidence.seat_evidence`)."""
    judged = [r for r in rows if r["useful"] is not None]
    useful = sum(1 for r in judged if r["useful"])
    low, high = wilson(useful, len(judged))
    in_order = sorted((r for r in judged if r["judged_at"] is not None), key=lambda r: r["judged_at"])
    track = replay((bool(r["useful"]), r["judged_at"]) for r in in_order)
    change = track.changes[-1] if track.changes else None
    ok_seconds = [r["seconds"] for r in rows if r["status"] == "ok" and r["seconds"] is not None]
    kinds = Counter(r.get("error_kind") or "error" for r in rows if r["status"] == "error")
    return Standing(
        alias=alias,
        shape=shape,
        seats=len(rows),
        verdicts=len(judged),
        useful=useful,
        low=low,
        high=high,
        maturity=maturity_of(len(judged)),
        real_per_answer=sum(len(r["real"] or []) for r in judged) / len(judged) if judged else None,
        false_per_answer=sum(len(r["false_claims"] or []) for r in judged) / len(judged) if judged else None,
        awaiting=sum(1 for r in rows if r["useful"] is None and r["status"] == "ok"),
        errors=sum(1 for r in rows if r["status"] == "error"),
        empties=sum(1 for r in rows if r["status"] == "empty"),
        truncated=sum(1 for r in rows if r.get("truncated") == "length"),
        median_seconds=statistics.median(ok_seconds) if ok_seconds else None,
        last_seated=max(r["created_at"] for r in rows),
        last_judged=max((r["judged_at"] for r in judged), default=None),
        error_kinds=error_kinds(kinds),
        p90_seconds=nearest_rank(ok_seconds, 0.9),
        sources=tuple(sorted(Counter(r.get("source") or HUMAN for r in judged).items())),
        current_useful=track.good if change else None,
        current_verdicts=track.n if change else None,
        changed_at=change.at if change else None,
        changed_why=change.describe() if change else None,
    )


def error_kinds(kinds: Mapping[str, int]) -> tuple[tuple[str, int], ...]:
    return tuple(sorted(kinds.items(), key=lambda item: (-item[1], item[0])))


def with_ranks(standings: Sequence[Standing]) -> list[Standing]:
    """The standings (already in rank order) with their shared rank ranges. A rank comes from evidence
    against other models': a model without verdicts has none, and neither has the only model with
    some, or a 0/1 would be "rank 1" merely because the others are unjudged (as --human-only makes
    every model the suite alone judged)."""
    intervals = [(s.low, s.high) if s.verdicts else None for s in standings]
    judged = sum(interval is not None for interval in intervals)
    ranges = rank_ranges(intervals) if judged >= 2 else [None] * len(standings)
    return [replace(s, rank_range=r) for s, r in zip(standings, ranges, strict=True)]


def panel_judgements(rows: Iterable[Mapping[str, Any]]) -> dict[str, list[list[Judged]]]:
    """shape → the judged seats of each panel, for pairwise comparison within a panel."""
    panels: dict[tuple[str, str], list[Judged]] = defaultdict(list)
    for r in rows:
        if r["useful"] is not None:
            judged = Judged(r["alias"], bool(r["useful"]), len(r["false_claims"] or []))
            panels[(r["shape"], r["panel_id"])].append(judged)
    by_shape: dict[str, list[list[Judged]]] = defaultdict(list)
    for (shape, _panel), seated in panels.items():
        by_shape[shape].append(seated)
    return by_shape


@functools.lru_cache(maxsize=64)
def _strengths(
    outcomes: tuple[tuple[str, str], ...], seed: int
) -> tuple[dict[str, float], dict[str, tuple[float, float]]]:
    # Cached on the outcomes themselves: a leaderboard reread with no new verdict costs nothing.
    point = bradley_terry(outcomes)
    intervals = bootstrap_bt(outcomes, random.Random(seed), samples=BOOTSTRAP_SAMPLES)
    return point, intervals


def build_board(
    shape: str,
    rows: Sequence[Mapping[str, Any]],
    *,
    pickable: frozenset[str] | set[str],
    pinned: str | None = None,
    seed: int = SEED,
    listing_changes: Mapping[str, ListingChange] | None = None,
) -> Board:
    """One shape's board from its seat rows (pure; the bootstrap is seeded)."""
    by_alias: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for r in rows:
        by_alias[r["alias"]].append(r)
    # Sorted: the intervals then depend on the evidence, not on the order panels were read in.
    outcomes = tuple(sorted(pairwise_outcomes(panel_judgements(rows).get(shape, []))))
    point, intervals = _strengths(outcomes, seed) if outcomes else ({}, {})
    standings = []
    for alias, own in by_alias.items():
        standing = replace(standing_of(alias, shape, own), listing_changed=(listing_changes or {}).get(alias))
        if alias in point:
            low, high = intervals[alias]
            standing = replace(standing, strength=point[alias], strength_low=low, strength_high=high)
        standings.append(standing)
    standings = with_ranks(sorted(standings, key=rank_key))
    # The current epoch's evidence (Standing.current): the pick follows a model that changed.
    counts = {s.alias: s.current for s in standings if s.alias in pickable}
    # Seeded: the same evidence always shows the same P(best).
    best = best_of(counts, rng=random.Random(seed))
    pick = best.alias if best is not None else None
    return Board(
        shape=shape,
        standings=tuple(standings),
        panels=len({r["panel_id"] for r in rows}),
        judged_panels=len({r["panel_id"] for r in rows if r["useful"] is not None}),
        comparisons=len(outcomes),
        pick=pick,
        pinned=pinned,
        primary=pinned if pinned in pickable else pick,
        best=best,
    )


def pickable(snapshot: Snapshot) -> frozenset[str]:
    """Models the router may choose today: on the roster, enabled, not retiring."""
    return frozenset(m.alias for m in snapshot.models.values() if m.enabled and not m.retiring)


def board_shapes(snapshot: Snapshot, seen: Iterable[str]) -> list[str]:
    """Shapes with evidence or a pin, in the configured order, unknown ones after."""
    seen = set(seen)
    known = [s for s in snapshot.shapes if s in seen]
    return known + sorted(seen - set(known))


def check_shape(snapshot: Snapshot, shape: str, seen: Iterable[str] = ()) -> None:
    if shape not in snapshot.shapes and shape not in set(seen):
        raise InvalidRequest(unknown_shape(shape, snapshot.shapes), param="shape")


def since_days(days: float | None, now: float | None = None) -> float | None:
    if days is None:
        return None
    if days <= 0:
        raise InvalidRequest("days must be a positive number", param="days")
    return (time.time() if now is None else now) - days * DAY


async def primary_pins(state: BenchState) -> dict[str, str]:
    async with state.read() as conn:
        return {r["shape"]: r["alias"] for r in await store.list_roles(conn) if r["role"] == PRIMARY}


async def leaderboard(
    state: BenchState, shape: str | None = None, days: float | None = None, human_only: bool = False
) -> list[Board]:
    """Boards for every shape with evidence or a pin (or just `shape`), over the last `days` days;
    with `human_only`, verdicts the suite gave count as none."""
    since = since_days(days)
    snapshot = await state.snapshot()
    async with state.read() as conn:
        rows = await store.seat_evidence(conn, since)
        listing_changes = await flagged(conn, time.time())
    if human_only:
        rows = [r if (r["source"] or HUMAN) == HUMAN else {**r, **UNJUDGED} for r in rows]
    pins = await primary_pins(state)
    by_shape: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        by_shape[r["shape"]].append(r)
    if shape is not None:
        check_shape(snapshot, shape, by_shape)
        shapes = [shape]
    else:
        shapes = board_shapes(snapshot, [*by_shape, *pins])
    usable = pickable(snapshot)

    def build() -> list[Board]:
        return [
            build_board(s, by_shape.get(s, []), pickable=usable, pinned=pins.get(s), listing_changes=listing_changes)
            for s in shapes
        ]

    # The bootstrap is CPU work: keep the event loop serving panels meanwhile.
    return await asyncio.to_thread(build)


# -- export -----------------------------------------------------------------------------------


def prompt_hash(request: Mapping[str, Any] | None) -> str:
    """sha256 of the stored (redacted) request's messages, keys sorted: the same prompt, the same hash."""
    messages = (request or {}).get("messages") or []
    return hashlib.sha256(orjson.dumps(messages, option=orjson.OPT_SORT_KEYS)).hexdigest()


def evidence_line(row: Mapping[str, Any]) -> dict[str, Any]:
    """One judged seat as `export evidence` writes it (rows from `store.evidence.iter_judged`)."""
    return {
        "panel": row["panel_id"],
        "prompt_hash": prompt_hash(row["request"]),
        "shape": row["shape"],
        "call": row["call"],
        "seat": row["seat"],
        "alias": row["alias"],
        "status": row["status"],
        "answer": row["answer"],
        "verdict": "useful" if row["useful"] else "not useful",
        "source": row.get("source") or HUMAN,
        "note": row["note"],
        "claims": {"real": row["real"] or [], "false": row["false_claims"] or []},
        "judged_at": row["judged_at"],
    }
