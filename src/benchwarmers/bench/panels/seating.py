"""Who sits on a panel: members, then nominees, then explorers (a floor of seats by staleness, the
rest by top-two Thompson sampling on the current evidence), and the spares that take an
explorer's seat when its model has no free slot (bench/pacing.py). In a collection that opted in,
a member that is cooling or retired gets a stand-in: the best model by the one evidence rule
(bench/evidence/posterior.py) among those an explorer seat could take, not already on the panel;
the next best are kept as reserves for a member the pacer turns away when the panel runs.

Pure: the catalog's facts arrive as `Candidate`s, the clock as `now`, chance as `rng`.
"""

from __future__ import annotations

import heapq
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from benchwarmers.bench.core.seats import explorer_count
from benchwarmers.bench.evidence.posterior import order_key
from benchwarmers.bench.evidence.stats import thompson_draw


@dataclass(frozen=True)
class Candidate:
    """What seating needs to know about one model, for one shape."""

    alias: str
    family: str | None = None
    free: bool | None = None  # None = unknown (not free for explorers)
    enabled: bool = True
    retiring: bool = False
    retired: bool = False  # kept failing: not asked until a probe or the user restores it
    went_paid: bool = False  # unacknowledged went-paid alert
    cooldown_until: float | None = None  # epoch seconds
    window: int | None = None  # None = unknown
    prompt: int | None = None  # this model's own estimate of the prompt (its learned ratio); None = the panel's
    vision: bool | None = None  # None = unknown
    last_seated: float | None = None  # last time seated on this shape; None = never
    useful: int = 0  # verdicts on this shape
    not_useful: int = 0
    tags: frozenset[str] = frozenset()  # its provider's traits (`trains-on-prompts`): collections' tag rules


@dataclass(frozen=True)
class TagRules:
    """A collection's tag rules: a seated model carries every `require` tag and no `exclude` tag."""

    require: frozenset[str] = frozenset()
    exclude: frozenset[str] = frozenset()


def tag_gap(tags: Iterable[str], require: Iterable[str], exclude: Iterable[str]) -> str | None:
    """Why a model carrying `tags` may not sit under these rules, or None."""
    carried = set(tags)
    excluded = sorted(carried & set(exclude))
    if excluded:
        return f"it carries the tag {', '.join(excluded)}, which this collection excludes"
    missing = sorted(set(require) - carried)
    if missing:
        return f"it lacks the tag {', '.join(missing)}, which this collection requires"
    return None


@dataclass(frozen=True)
class Seat:
    kind: str  # "member" | "nominee" | "explorer" | "standin"
    index: int  # 1-based per kind
    alias: str
    retired: bool = False  # shown as `retired`, not asked
    family: str = ""  # explorers and spares: no two seated explorers share one
    stands_in_for: str | None = None  # a stand-in: the member whose place it takes on this panel


@dataclass(frozen=True)
class Skipped:
    seat: str  # the kind the model would have sat as: "member" | "nominee"
    alias: str
    why: str


@dataclass(frozen=True)
class SeatPlan:
    seats: tuple[Seat, ...]
    skipped: tuple[Skipped, ...]
    # Eligible explorers not chosen, stalest first, none of a member's or nominee's family: tried in
    # turn when a chosen explorer's model has no free slot.
    spares: tuple[Seat, ...] = ()
    # A stand-in collection's other eligible models, none seated, in no order: ranked (`best_first`)
    # only when the pacer turns a member away while the panel runs, which few panels see.
    reserves: tuple[Candidate, ...] = ()


SPARES = 8  # spares a panel may try; beyond them an explorer seat stays empty


def too_small(members: Sequence[Candidate], estimate: int) -> list[Candidate]:
    """Members whose known window cannot hold the prompt (unknown windows never refuse)."""
    return [m for m in members if not fits(m, estimate)]


def prompt_of(c: Candidate, estimate: int) -> int:
    """The prompt's tokens for this model: its own estimate where it has one, else the panel's."""
    return estimate if c.prompt is None else c.prompt


def fits(c: Candidate, estimate: int) -> bool:
    """Whether the prompt fits the model's known window (an unknown window always does)."""
    return c.window is None or c.window >= prompt_of(c, estimate)


def family_of(candidate: Candidate) -> str:
    """A model's family for exclusion; without one, the model is its own family."""
    family = (candidate.family or "").strip()
    return (family or candidate.alias).casefold()


def _vision_gap(candidate: Candidate) -> str | None:
    if candidate.vision is True:
        return None
    return "cannot take images" if candidate.vision is False else "not known to take images"


def cooling(c: Candidate, now: float) -> bool:
    return c.cooldown_until is not None and c.cooldown_until > now


def best_first(pool: Iterable[Candidate], count: int) -> list[Candidate]:
    """The `count` best of `pool` by the one evidence rule (posterior.order_key on the shape's current
    counts), ordered as posterior.best_among orders them: the judged first, then the unjudged by alias.
    A partial sort: a stand-in needs the best one or two of a roster of hundreds."""

    def key(c: Candidate) -> tuple[bool, float, float, int, str]:
        verdicts = c.useful + c.not_useful
        return (verdicts == 0, *order_key(c.useful, verdicts), c.alias)

    return heapq.nsmallest(count, pool, key=key)


def _eligible(c: Candidate, *, estimate: int, images: bool, now: float) -> bool:
    return (
        c.enabled
        and c.free is True
        and not c.went_paid
        and not c.retiring
        and not c.retired
        and (c.cooldown_until is None or c.cooldown_until <= now)
        and fits(c, estimate)
        and (not images or c.vision is True)
    )


def eligible(c: Candidate, *, estimate: int, images: bool, now: float, rules: TagRules = TagRules()) -> bool:
    """Whether `c` may sit an explorer seat (a stand-in too): free, in use, cool, big enough, seeing when the
    prompt has images, and within the collection's tag rules."""
    within = tag_gap(c.tags, rules.require, rules.exclude) is None
    return within and _eligible(c, estimate=estimate, images=images, now=now)


def _staleness_order(pool: Sequence[Candidate], draws: dict[str, float] | None, rng: random.Random) -> list[Candidate]:
    """Never seated first, then oldest last seating; ties by draw (higher first) or at random."""
    # Sorted by alias first so the outcome depends on the seed, not the pool's order.
    ordered = sorted(pool, key=lambda c: c.alias)
    tiebreak = {c.alias: (-draws[c.alias] if draws is not None else rng.random()) for c in ordered}
    return sorted(
        ordered,
        key=lambda c: (
            c.last_seated is not None,
            c.last_seated if c.last_seated is not None else 0.0,
            tiebreak[c.alias],
        ),
    )


def _draw(pool: Sequence[Candidate], rng: random.Random) -> dict[str, float]:
    """One Thompson draw per candidate from the Beta posterior of its counts, in alias order."""
    return {c.alias: thompson_draw(c.useful, c.not_useful, rng) for c in pool}


def _best(pool: Sequence[Candidate], draws: dict[str, float]) -> Candidate:
    return max(pool, key=lambda c: (draws[c.alias], c.alias))


def _challenger(remaining: list[Candidate], leaders: list[Candidate], rng: random.Random) -> Candidate:
    """Top-two Thompson's challenger: the best of a fresh draw when that is not a leader, else the
    best of the rest by it (one re-draw: each costs a draw per candidate, on every panel)."""
    contenders = list(dict.fromkeys(remaining + leaders))
    draws = _draw(contenders, rng)
    top = _best(contenders, draws)
    if top not in leaders:
        return top
    return _best([c for c in remaining if c not in leaders] or remaining, draws)


def _pick_explorers(
    pool: Sequence[Candidate],
    slots: int,
    taken_families: set[str],
    *,
    rng: random.Random,
    epsilon: float,
    floor: float = 1.0,
) -> list[Candidate]:
    open_pool = [c for c in pool if family_of(c) not in taken_families]
    if slots <= 0 or not open_pool:
        return []
    ordered = sorted(open_pool, key=lambda c: c.alias)  # the outcome depends on the seed, not the pool's order
    # Which seats are the floor's (stalest first) and which focus; floor 1 draws nothing for it.
    focus = [floor < 1.0 and rng.random() >= floor for _ in range(slots)]
    # One draw serves the stalest-first seats (epsilon's picks, staleness ties) and the focus leader.
    # Evidence enters the stalest-first rule only when epsilon > 0: 0 is pure staleness plus chance.
    draws = _draw(ordered, rng) if epsilon > 0 or any(focus) else None
    stale = _staleness_order(ordered, draws, rng)
    # One focus seat alone is the leader or a challenger, even odds (top-two Thompson's beta = 1/2).
    lead_first = sum(focus) != 1 or rng.random() < 0.5
    chosen: list[Candidate] = []
    leaders: list[Candidate] = []
    families = set(taken_families)
    for by_focus in focus:
        remaining = [c for c in stale if family_of(c) not in families]
        if not remaining:
            break
        if by_focus and draws is not None:
            if lead_first and not leaders:
                pick = _best(remaining, draws)
            else:
                pick = _challenger(remaining, leaders or [_best(remaining, draws)], rng)
            leaders.append(pick)
        elif draws is not None and rng.random() < epsilon:
            pick = _best(remaining, draws)
        else:
            pick = remaining[0]
        chosen.append(pick)
        families.add(family_of(pick))
    return chosen


def plan_seats(
    members: Sequence[Candidate],
    nominees: Sequence[Candidate],
    pool: Sequence[Candidate],
    *,
    estimate: int,
    images: bool,
    max_explorers: int,
    max_calls: int,
    now: float,
    rng: random.Random,
    epsilon: float = 0.0,
    floor: float = 1.0,
    rules: TagRules = TagRules(),
    stand_ins: bool = False,
) -> SeatPlan:
    """Seat members, then nominees, then explorers from `pool` for one request. A retired member or
    nominee keeps its seat, marked `retired`, and leaves its call to an explorer. No seat, of any kind,
    goes to a model the collection's tag `rules` keep off (a member or nominee so kept is `skipped`).
    With `stand_ins` (the collection opted in), a retired or cooling member's call goes to its stand-in,
    seated right after it, the best eligible model by the evidence on the shape.

    Each explorer seat is the floor's with probability `floor`: stalest first (`epsilon` of those
    by a Thompson draw), so no eligible model is starved; the others are focus seats, by top-two
    Thompson sampling on the candidates' counts. `floor` 1 is the stalest-first rule alone."""
    if not 0.0 <= epsilon <= 1.0:
        raise ValueError("epsilon must be in [0, 1]")
    if not 0.0 <= floor <= 1.0:
        raise ValueError("floor must be in [0, 1]")
    seats: list[Seat] = []
    skipped: list[Skipped] = []
    # Every alias already considered, seated or skipped, so it is seated or listed once.
    considered: set[str] = set()
    families: set[str] = set()
    for kind, group in (("member", members), ("nominee", nominees)):
        index = 0
        for cand in group:
            if cand.alias in considered:
                continue
            considered.add(cand.alias)
            gap = _vision_gap(cand) if images else None
            if gap is None and kind == "nominee" and not fits(cand, estimate):
                # Members this small refuse the request (413) before seating; a nominee is the caller's
                # extra, skipped rather than called into a context error.
                gap = f"its context window ({cand.window:,} tokens) is smaller than the prompt "
                gap += f"(about {prompt_of(cand, estimate):,} tokens)"
            refused = tag_gap(cand.tags, rules.require, rules.exclude)
            if refused:
                gap = refused  # the collection's rule first: the model may not sit, whatever the prompt
            if gap:
                skipped.append(Skipped(kind, cand.alias, gap))
                continue
            index += 1
            seats.append(Seat(kind, index, cand.alias, retired=cand.retired))
            families.add(family_of(cand))

    # A retired member keeps its place (and its family out of the explorers) but takes no call.
    called_members = [s for s in seats if s.kind == "member" and not s.retired]
    allowed: dict[str, Candidate] = {}
    for cand in pool:
        if cand.alias in considered or cand.alias in allowed:
            continue
        if eligible(cand, estimate=estimate, images=images, now=now, rules=rules):
            allowed[cand.alias] = cand
    if stand_ins:
        seats = _stand_in(seats, members, allowed, now)
        for seat in seats:
            if seat.kind == "standin":  # on the panel now: not an explorer too, nor one of its family
                allowed.pop(seat.alias, None)
                families.add(seat.family)
    # A stand-in takes its member's call: a cooling member's is counted above, a retired one's is not.
    retired = {s.alias for s in seats if s.retired}
    called = len(called_members) + sum(s.stands_in_for in retired for s in seats)
    slots = explorer_count(called, max_explorers, max_calls)
    explorers = _pick_explorers(list(allowed.values()), slots, families, rng=rng, epsilon=epsilon, floor=floor)
    seats.extend(Seat("explorer", i, c.alias, family=family_of(c)) for i, c in enumerate(explorers, start=1))
    spares = _spares(allowed.values(), explorers, families) if slots > 0 else []
    reserves: tuple[Candidate, ...] = ()
    if stand_ins:
        chosen = {c.alias for c in explorers}
        reserves = tuple(c for c in allowed.values() if c.alias not in chosen)
    return SeatPlan(tuple(seats), tuple(skipped), tuple(spares), reserves)


def _stand_in(seats: list[Seat], members: Sequence[Candidate], allowed: dict[str, Candidate], now: float) -> list[Seat]:
    """`seats` with a stand-in after each retired or cooling member: the best eligible models, in
    the members' order (none eligible: the member's seat stands alone, as without stand-ins)."""
    absent = [c.alias for c in members if c.retired or cooling(c, now)]
    if not absent:
        return seats
    best = iter(best_first(allowed.values(), len(absent)))
    placed: list[Seat] = []
    for seat in seats:
        placed.append(seat)
        if seat.kind == "member" and seat.alias in absent and (pick := next(best, None)) is not None:
            index = sum(s.kind == "standin" for s in placed) + 1
            placed.append(Seat("standin", index, pick.alias, family=family_of(pick), stands_in_for=seat.alias))
    return placed


def _spares(eligible: Iterable[Candidate], chosen: Sequence[Candidate], families: set[str]) -> list[Seat]:
    """Who may take a chosen explorer's seat: stalest first (no draw: the chosen ones had theirs)."""
    taken = {c.alias for c in chosen}
    pool = [c for c in eligible if c.alias not in taken and family_of(c) not in families]
    pool.sort(key=lambda c: (c.last_seated is not None, c.last_seated or 0.0, c.alias))
    return [Seat("explorer", 0, c.alias, family=family_of(c)) for c in pool[:SPARES]]
