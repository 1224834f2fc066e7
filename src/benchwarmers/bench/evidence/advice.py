"""Advice that closes the loop: per collection and shape, an explorer the evidence says is better
than a member, a member that keeps failing, and shapes with too little evidence to say.

A swap is advised when P(the explorer's useful rate > the member's) ≥ ADVISE_P, both with at least
MIN_VERDICTS verdicts on the shape (posterior.prob_better: exact, uniform priors). It is decisive,
and a collection with `auto_swap` on makes it itself (bench/evidence/swaps.py), when P ≥ SWAP_P
and both have at least SWAP_MIN_VERDICTS. A member keeps failing when it is retired, or when at
least FAILING_RATE of its seats in the last FAILING_DAYS failed or came back empty (at least
FAILING_MIN_SEATS seats). A shape has too little evidence when a member has fewer than
MIN_VERDICTS verdicts on it.

`advise` is pure; `advice(state)` reads its inputs.
"""

from __future__ import annotations

import shlex
import time
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from benchwarmers.bench.evidence.posterior import Counts, Key, epoch_verdicts, prob_better
from benchwarmers.store import counts as store_counts
from benchwarmers.store.records import CollectionFields

if TYPE_CHECKING:
    from benchwarmers.bench.snapshot import Snapshot
    from benchwarmers.bench.state import BenchState

ADVISE_P = 0.95
MIN_VERDICTS = 10
SWAP_P = 0.99
SWAP_MIN_VERDICTS = 30
FAILING_RATE = 0.5
FAILING_MIN_SEATS = 5
FAILING_DAYS = 7.0
DAY = 86_400.0


@dataclass(frozen=True)
class Advice:
    """One piece of advice: `kind` is swap, failing or thin."""

    kind: str
    collection: str
    shape: str | None
    text: str
    member: str | None = None
    explorer: str | None = None
    p: float | None = None
    verdicts: int | None = None  # the two models' verdicts on the shape together
    command: str | None = None
    decisive: bool = False  # a swap auto_swap would make

    def public(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "collection": self.collection,
            "shape": self.shape,
            "text": self.text,
            "member": self.member,
            "explorer": self.explorer,
            "p": None if self.p is None else round(self.p, 4),
            "verdicts": self.verdicts,
            "command": self.command,
            "decisive": self.decisive,
        }


@dataclass(frozen=True)
class Usage:
    """A model's recent seats, for "keeps failing"."""

    seats: int = 0
    errors: int = 0
    empties: int = 0


def swapped(members: Sequence[str], member: str, explorer: str) -> list[str]:
    """The member list with `member` replaced by `explorer`, in its place."""
    return [explorer if m == member else m for m in members]


def edit_command(name: str, members: Sequence[str]) -> str:
    """The real CLI edit that sets these members (`--member` replaces the list)."""
    flags = [f"--member {shlex.quote(m)}" for m in members]
    return " ".join(["benchwarmers collection edit", shlex.quote(name), *flags])


def collection_shapes(collection: CollectionFields, counts: Mapping[Key, Counts]) -> list[str]:
    """The collection's fixed shape, else every shape its members have verdicts on."""
    if collection["shape"]:
        return [collection["shape"]]
    members = set(collection["members"])
    return sorted({shape for alias, shape in counts if alias in members and counts[(alias, shape)][1] > 0})


def _swaps(collection: CollectionFields, shape: str, counts: Mapping[Key, Counts], can_join: set[str]) -> list[Advice]:
    members = collection["members"]
    explorers = [a for (a, s), c in counts.items() if s == shape and a not in members and a in can_join]
    found = []
    for member in members:
        own = counts.get((member, shape), (0, 0))
        if own[1] < MIN_VERDICTS:
            continue
        enough = [x for x in sorted(explorers) if counts[(x, shape)][1] >= MIN_VERDICTS]
        scored = [(prob_better(counts[(x, shape)], own), x) for x in enough]
        if not scored:
            continue
        p, explorer = max(scored, key=lambda item: (item[0], item[1]))
        if p < ADVISE_P:
            continue
        theirs = counts[(explorer, shape)]
        total = own[1] + theirs[1]
        command = edit_command(collection["name"], swapped(members, member, explorer))
        decisive = p >= SWAP_P and min(own[1], theirs[1]) >= SWAP_MIN_VERDICTS
        text = (
            f"{explorer} beats member {member} on {shape}: P = {p:.2f} over {total} verdicts "
            f"({theirs[0]}/{theirs[1]} against {own[0]}/{own[1]}); swap with `{command}`"
        )
        found.append(Advice("swap", collection["name"], shape, text, member, explorer, p, total, command, decisive))
    return found


def _failing(collection: CollectionFields, usage: Mapping[str, Usage], retired: set[str]) -> list[Advice]:
    found = []
    for member in collection["members"]:
        used = usage.get(member, Usage())
        if member in retired:
            why = "it is retired (it kept failing): it is not asked until a probe or you restore it"
        elif used.seats >= FAILING_MIN_SEATS and (used.errors + used.empties) >= FAILING_RATE * used.seats:
            why = (
                f"{used.errors} errors and {used.empties} empty answers in its last {used.seats} seats "
                f"({FAILING_DAYS:g} days)"
            )
        else:
            continue
        text = f"member {member} keeps failing: {why}; fix its endpoint or replace it (`benchwarmers collection edit`)"
        found.append(Advice("failing", collection["name"], None, text, member=member))
    return found


def _thin(collection: CollectionFields, shape: str, counts: Mapping[Key, Counts]) -> list[Advice]:
    short = [(m, counts.get((m, shape), (0, 0))[1]) for m in collection["members"]]
    short = [(m, n) for m, n in short if n < MIN_VERDICTS]
    if not short:
        return []
    few = ", ".join(f"{m} has {n}" for m, n in short)
    text = f"{shape}: too little evidence to say ({few} verdicts; {MIN_VERDICTS} are needed to compare)"
    return [Advice("thin", collection["name"], shape, text)]


def advise(
    collections: Iterable[CollectionFields],
    counts: Mapping[Key, Counts],
    *,
    can_join: Iterable[str],
    usage: Mapping[str, Usage] | None = None,
    retired: Iterable[str] = (),
) -> list[Advice]:
    """Advice per collection, in name order: swaps, then failing members, then thin shapes.
    `counts` is (alias, shape) → (useful, verdicts); `can_join` the models that could be members
    (on the roster, enabled, not retiring or retired); `usage` recent seats per alias."""
    usage = usage or {}
    retired_set = set(retired)
    join = set(can_join)
    found: list[Advice] = []
    for collection in sorted(collections, key=lambda c: c["name"]):
        shapes = collection_shapes(collection, counts)
        for shape in shapes:
            found += _swaps(collection, shape, counts, join)
        found += _failing(collection, usage, retired_set)
        for shape in shapes:
            found += _thin(collection, shape, counts)
    return found


def usage_of(rows: Iterable[Mapping[str, Any]]) -> dict[str, Usage]:
    totals: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    for r in rows:
        total = totals[r["alias"]]
        total[0] += r["seats"]
        total[1] += r["errors"]
        total[2] += r["empties"]
    return {alias: Usage(*t) for alias, t in totals.items()}


def can_join(snapshot: Snapshot) -> set[str]:
    return {m.alias for m in snapshot.models.values() if m.enabled and not m.retiring and not m.retired}


async def advice(state: BenchState, now: float | None = None) -> list[Advice]:
    """Every piece of advice the evidence gives today."""
    snapshot = await state.snapshot()
    since = (time.time() if now is None else now) - FAILING_DAYS * DAY
    async with state.read() as conn:
        recent = await store_counts.standing_counts(conn, since)
    history = await state.fresh_history()
    retired = {m.alias for m in snapshot.models.values() if m.retired}
    return advise(
        snapshot.collections.values(),
        # The current epoch's evidence (bench/core/epochs.py): a model that changed is judged as it is now.
        epoch_verdicts(history.current),
        can_join=can_join(snapshot),
        usage=usage_of(recent),
        retired=retired,
    )


def thresholds() -> dict[str, Any]:
    return {
        "advise_p": ADVISE_P,
        "min_verdicts": MIN_VERDICTS,
        "swap_p": SWAP_P,
        "swap_min_verdicts": SWAP_MIN_VERDICTS,
        "failing_rate": FAILING_RATE,
        "failing_days": FAILING_DAYS,
    }


async def advice_report(state: BenchState) -> dict[str, Any]:
    """The advice as `advise --json` and `/api/advice` give it, with the thresholds it used and
    which collections have auto_swap on."""
    snapshot = await state.snapshot()
    return {
        "thresholds": thresholds(),
        "auto_swap": sorted(name for name, c in snapshot.collections.items() if c.get("auto_swap")),
        "advice": [a.public() for a in await advice(state)],
    }
