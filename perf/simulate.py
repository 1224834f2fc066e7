"""Does seating learn? The real seating, history and evidence rule against hidden useful rates.

    python -m perf.simulate                       # every scenario, both policies, 20 seeds
    python -m perf.simulate --seeds 5 --scenario close

Each panel seats one member and two explorers with `plan_seats` (real `Candidate`s built as
bench/panels/prepare.py builds them, from a real `SeatHistory` with its change detector); every
seat gets a verdict right after the panel, useful with its model's hidden rate. "Who is best" is
`best_of` (bench/evidence/posterior.py) on the current epoch's counts of every model on the shape.
In memory: no HTTP, no database, so a few minutes on one core.

Scenarios: `close` (best 0.60, runner-up 0.55, ten more at 0.30-0.50, 3,000 panels), `drift`
(the best 0.80 and a poor 0.30 swap rates after 1,200 panels) and `shapes` (two shapes with
different bests, panels alternating). Policies: `stalest` (explorer_floor 1, epsilon 0.2: the
old rule) and `focus` (the gateway's defaults).
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from benchwarmers.bench.evidence.posterior import best_of
from benchwarmers.bench.history import SeatHistory
from benchwarmers.bench.panels.seating import Candidate, plan_seats
from benchwarmers.nouns.gateway import GATEWAY_DEFAULTS

CHECKPOINTS = (500, 1000, 2000, 3000)
WINDOW = 500  # panels per share window
BAD = 0.35  # a true rate at or below this is clearly bad
MEMBER = "member"
POLICIES = {
    "stalest": {"floor": 1.0, "epsilon": 0.2},
    "focus": {"floor": float(GATEWAY_DEFAULTS["explorer_floor"]), "epsilon": float(GATEWAY_DEFAULTS["epsilon"])},
}


@dataclass
class Scenario:
    name: str
    rates: dict[str, dict[str, float]]  # shape → alias → hidden useful rate (the member included)
    panels: int = 3000
    swap: tuple[str, str, int] | None = None  # two aliases that swap rates after this many panels


def close_rates() -> Scenario:
    rates = {"best": 0.60, "runner": 0.55}
    rates.update({f"m{i:02d}": r for i, r in enumerate((0.50, 0.48, 0.46, 0.44, 0.42, 0.40, 0.38, 0.34, 0.32, 0.30))})
    return Scenario("close", {"general": {MEMBER: 0.45, **rates}})


def drift() -> Scenario:
    rates = {"best": 0.80, "poor": 0.30}
    rates.update({f"m{i:02d}": r for i, r in enumerate((0.60, 0.58, 0.55, 0.52, 0.50, 0.48, 0.45, 0.42, 0.40))})
    return Scenario("drift", {"general": {MEMBER: 0.45, **rates}}, panels=2400, swap=("best", "poor", 1200))


def two_shapes() -> Scenario:
    spread = (0.55, 0.50, 0.48, 0.46, 0.44, 0.42, 0.40, 0.38, 0.34, 0.30)
    review = {"rev": 0.72, "des": 0.45, **{f"m{i:02d}": r for i, r in enumerate(spread)}}
    design = {"rev": 0.45, "des": 0.77, **{f"m{i:02d}": r for i, r in enumerate(reversed(spread))}}
    return Scenario("shapes", {"review": {MEMBER: 0.45, **review}, "design": {MEMBER: 0.45, **design}})


SCENARIOS = {"close": close_rates, "drift": drift, "shapes": two_shapes}


@dataclass
class Run:
    """One seed of one scenario under one policy: what was measured."""

    picks: dict[tuple[str, int], bool] = field(default_factory=dict)  # (shape, checkpoint) → pick = true best
    separated: dict[tuple[str, int], bool] = field(default_factory=dict)
    shares: list[dict[str, float]] = field(default_factory=list)  # per window: alias → multiple of fair share
    follow: int | None = None  # panels after the swap until the pick is the new best (and stays)


def true_best(rates: dict[str, float]) -> str:
    return max(rates, key=lambda a: rates[a])


def candidates(aliases: Sequence[str], shape: str, history: SeatHistory) -> list[Candidate]:
    """As bench/panels/prepare.py's `_candidate`: the current epoch's counts and the last seating."""
    out = []
    for alias in aliases:
        useful, not_useful = history.current.get((alias, shape), (0, 0))
        last = history.last_seated.get((alias, shape))
        out.append(Candidate(alias, family=alias, free=True, last_seated=last, useful=useful, not_useful=not_useful))
    return out


def simulate(scenario: Scenario, policy: dict[str, float], seed: int) -> Run:
    world = random.Random(seed)  # verdicts
    rng = random.Random(10_000 + seed)  # the bench's own chance
    rates = {shape: dict(r) for shape, r in scenario.rates.items()}
    shapes = list(rates)
    history = SeatHistory()
    run = Run()
    window: Counter[str] = Counter()
    followed_at: int | None = None
    now = 1_800_000_000.0
    for n in range(1, scenario.panels + 1):
        shape = shapes[(n - 1) % len(shapes)]
        if scenario.swap and n == scenario.swap[2] + 1:
            a, b, _ = scenario.swap
            for r in rates.values():
                r[a], r[b] = r[b], r[a]
        now += 60.0
        hidden = rates[shape]
        aliases = list(hidden)
        plan = plan_seats(
            candidates([MEMBER], shape, history),
            [],
            candidates(aliases, shape, history),
            estimate=1000,
            images=False,
            max_explorers=2,
            max_calls=3,
            now=now,
            rng=rng,
            epsilon=policy["epsilon"],
            floor=policy["floor"],
        )
        for seat in plan.seats:
            history.seated(seat.alias, shape, now)
            history.judged(seat.alias, shape, world.random() < hidden[seat.alias], at=now)
            if seat.kind == "explorer" and shape == shapes[0]:
                window[seat.alias] += 1
        if n % WINDOW == 0:
            explorers = [a for a in rates[shapes[0]] if a != MEMBER]
            fair = sum(window.values()) / len(explorers)
            run.shares.append({a: window[a] / fair for a in explorers})
            window.clear()
        if scenario.swap and n > scenario.swap[2] and n % 10 == 0:
            best = best_of(_counts(history, shape, aliases))
            on_top = best is not None and best.alias == true_best(hidden)
            followed_at = (followed_at or n) if on_top else None
        if n in CHECKPOINTS or (scenario.swap and n == scenario.panels):
            for s in shapes if n % len(shapes) == 0 else [shape]:
                counts = _counts(history, s, list(rates[s]))
                best = best_of(counts, rng=random.Random(n))
                run.picks[(s, n)] = best is not None and best.alias == true_best(rates[s])
                run.separated[(s, n)] = run.picks[(s, n)] and best is not None and best.separated
    if scenario.swap and followed_at is not None:
        run.follow = followed_at - scenario.swap[2]
    return run


def _counts(history: SeatHistory, shape: str, aliases: Sequence[str]) -> dict[str, tuple[int, int]]:
    """alias → (useful, verdicts) of the current epoch, as `best_of` takes them."""
    out = {}
    for alias in aliases:
        good, bad = history.current.get((alias, shape), (0, 0))
        out[alias] = (good, good + bad)
    return out


def report(name: str, scenario: Scenario, runs: dict[str, list[Run]]) -> list[str]:
    lines = [f"### {name}", "", "| figure | stalest (old) | focus (new) |", "|---|---|---|"]

    def row(label: str, values: dict[str, str]) -> None:
        lines.append(f"| {label} | {values['stalest']} | {values['focus']} |")

    shapes = list(scenario.rates)
    marks = sorted({n for r in runs["focus"] for (_, n) in r.picks})
    for shape in shapes:
        tag = f" ({shape})" if len(shapes) > 1 else ""
        for n in marks:
            row(
                f"P(pick = true best){tag} at {n}",
                {p: _pct([r.picks[(shape, n)] for r in rs]) for p, rs in runs.items()},
            )
        for n in marks:
            row(
                f"P(top two separated){tag} at {n}",
                {p: _pct([r.separated[(shape, n)] for r in rs]) for p, rs in runs.items()},
            )
    rates = scenario.rates[shapes[0]]
    bad = [a for a, r in rates.items() if r <= BAD and a != MEMBER]
    top2 = sorted((a for a in rates if a != MEMBER), key=lambda a: -rates[a])[:2]
    windows = len(runs["focus"][0].shares)
    if bad and not scenario.swap:
        for w in range(windows):
            row(
                f"clearly bad models' share{' (' + shapes[0] + ')' if len(shapes) > 1 else ''}, window {w + 1}",
                {p: _x(statistics.mean(r.shares[w][a] for r in rs for a in bad)) for p, rs in runs.items()},
            )
    if not scenario.swap:
        row(
            "best + runner-up share (mean of the two), all windows",
            {
                p: _x(statistics.mean(r.shares[w][a] for r in rs for w in range(windows) for a in top2))
                for p, rs in runs.items()
            },
        )
    row(
        "lowest share of any model in any window (any seed)",
        {p: _x(min(v for r in rs for s in r.shares for v in s.values())) for p, rs in runs.items()},
    )
    if scenario.swap:
        for p, rs in runs.items():
            follows = sorted(r.follow if r.follow is not None else 10**6 for r in rs)
            within = sum(f <= 500 for f in follows) / len(follows)
            shown = [str(f) if f < 10**6 else "never" for f in follows]
            runs_label = f"median {shown[len(shown) // 2]}, worst {shown[-1]}, within 500: {within:.0%}"
            lines.append(f"| panels until the pick follows the swap, {p} | {runs_label} | |")
    return lines


def _pct(flags: list[bool]) -> str:
    return f"{sum(flags) / len(flags):.0%}"


def _x(value: float) -> str:
    return f"{value:.2f}×"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--scenario", choices=[*SCENARIOS, "all"], default="all")
    parser.add_argument(
        "--floor", type=float, default=None, help="the focus policy's explorer_floor (default: the gateway's)"
    )
    args = parser.parse_args()
    if args.floor is not None:
        POLICIES["focus"]["floor"] = args.floor
    started = time.process_time()
    names = list(SCENARIOS) if args.scenario == "all" else [args.scenario]
    for name in names:
        scenario = SCENARIOS[name]()
        runs = {p: [simulate(scenario, policy, seed) for seed in range(args.seeds)] for p, policy in POLICIES.items()}
        print("\n".join(report(name, scenario, runs)) + "\n", flush=True)
    floor, epsilon = POLICIES["focus"]["floor"], POLICIES["focus"]["epsilon"]
    print(
        f"{args.seeds} seeds; focus = explorer_floor {floor}, epsilon {epsilon}; "
        f"CPU {time.process_time() - started:.0f} s"
    )


if __name__ == "__main__":
    main()
