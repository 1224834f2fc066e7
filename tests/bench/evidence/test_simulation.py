"""A simulated bench: does staleness + epsilon-Thompson seating find each shape's best model?

20 free models (5 families of 4) with hidden useful rates on 4 shapes. Every panel has
no members and 4 explorer seats filled by `plan_seats`; each seat's verdict is drawn
from its hidden rate. The bench must end up ranking the true best model near the top
for every shape, without starving anyone of explorer seats.
"""

from __future__ import annotations

import random
from collections import Counter

from benchwarmers.bench.evidence.stats import SETTLED_FROM, Cell
from benchwarmers.bench.panels.seating import Candidate, plan_seats

FAMILIES = ["alpha", "beta", "gamma", "delta", "omega"]
MODELS = [f"{family}-{i}" for family in FAMILIES for i in range(4)]
SHAPES = ["code", "review", "design", "general"]
# One distinct best model per shape, each from a different family.
BEST = {"code": "alpha-1", "review": "beta-2", "design": "gamma-0", "general": "delta-3"}
BEST_RATE = 0.75
PANELS = 1500
SEATS = 4
EPSILON = 0.2


def hidden_rates(rng: random.Random) -> dict[tuple[str, str], float]:
    rates = {(m, s): rng.uniform(0.30, 0.60) for m in MODELS for s in SHAPES}
    for shape, best in BEST.items():
        rates[(best, shape)] = BEST_RATE
    return rates


def test_simulated_bench_finds_best_per_shape() -> None:
    world = random.Random(2026)  # hidden rates and verdicts
    seating_rng = random.Random(17)  # the bench's own chance
    rates = hidden_rates(world)

    useful: Counter[tuple[str, str]] = Counter()
    verdicts: Counter[tuple[str, str]] = Counter()
    last_seated: dict[tuple[str, str], float] = {}
    panels_per_shape: Counter[str] = Counter()
    settled_at: dict[str, int] = {}

    now = 1_800_000_000.0
    for n in range(PANELS):
        shape = SHAPES[n % len(SHAPES)]
        now += 60.0
        pool = [
            Candidate(
                alias,
                family=alias.split("-")[0],
                free=True,
                last_seated=last_seated.get((alias, shape)),
                useful=useful[(alias, shape)],
                not_useful=verdicts[(alias, shape)] - useful[(alias, shape)],
            )
            for alias in MODELS
        ]
        plan = plan_seats(
            [],
            [],
            pool,
            estimate=2_000,
            images=False,
            max_explorers=SEATS,
            max_calls=SEATS,
            now=now,
            rng=seating_rng,
            epsilon=EPSILON,
        )
        assert len(plan.seats) == SEATS
        assert len({s.alias.split("-")[0] for s in plan.seats}) == SEATS  # no two of one family
        panels_per_shape[shape] += 1
        for seat in plan.seats:
            key = (seat.alias, shape)
            last_seated[key] = now
            verdicts[key] += 1
            useful[key] += world.random() < rates[key]
        best_key = (BEST[shape], shape)
        if shape not in settled_at and verdicts[best_key] >= SETTLED_FROM:
            settled_at[shape] = panels_per_shape[shape]

    print()
    for shape in SHAPES:
        cells = [Cell.of(m, shape, useful[(m, shape)], verdicts[(m, shape)]) for m in MODELS]
        ranked = sorted(cells, key=lambda c: c.low, reverse=True)
        top3 = [c.alias for c in ranked[:3]]
        total = sum(c.verdicts for c in cells)
        fair = total / len(MODELS)
        fewest = min(cells, key=lambda c: c.verdicts)
        best_cell = next(c for c in cells if c.alias == BEST[shape])
        print(
            f"{shape:8s} panels={panels_per_shape[shape]} settled best after {settled_at.get(shape)} panels; "
            f"best {best_cell.alias} {best_cell.useful}/{best_cell.verdicts} "
            f"low={best_cell.low:.3f}; top3={top3}; seats fair={fair:.0f} "
            f"min={fewest.verdicts} ({fewest.alias}) max={max(c.verdicts for c in cells)}"
        )
        assert BEST[shape] in top3, f"{shape}: true best {BEST[shape]} not in top 3 {top3}"
        assert shape in settled_at
        for cell in cells:
            assert cell.verdicts >= fair / 2, f"{shape}: {cell.alias} got {cell.verdicts} seats of fair {fair}"
