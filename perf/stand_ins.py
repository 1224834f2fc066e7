"""What stand-ins cost seating: `plan_seats` for a four-member collection over a roster of N free
models with evidence, without stand-ins, with them and no member absent (the reserves are still
ranked), and with two members cooling. Prints microseconds per plan (pure: no I/O, no server).

    python -m perf.stand_ins --roster 300 --plans 2000
"""

from __future__ import annotations

import argparse
import random
import time

from benchwarmers.bench.panels.seating import Candidate, plan_seats

NOW = 1_800_000_000.0


def roster(size: int, rng: random.Random) -> list[Candidate]:
    return [
        Candidate(
            alias=f"ep/model-{i:04d}",
            family=f"family-{i % 40}",
            free=True,
            last_seated=NOW - rng.uniform(0, 86_400) if rng.random() < 0.8 else None,
            useful=(useful := rng.randint(0, 40)),
            not_useful=rng.randint(0, 40 - useful),
        )
        for i in range(size)
    ]


def micros(members: list[Candidate], pool: list[Candidate], plans: int, stand_ins: bool) -> float:
    rng = random.Random(1)
    started = time.perf_counter()
    for _ in range(plans):
        plan_seats(
            members,
            [],
            pool,
            estimate=500,
            images=False,
            max_explorers=2,
            max_calls=6,
            now=NOW,
            rng=rng,
            epsilon=0.2,
            floor=0.5,
            stand_ins=stand_ins,
        )
    return (time.perf_counter() - started) / plans * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--roster", type=int, default=300)
    parser.add_argument("--plans", type=int, default=2000)
    args = parser.parse_args()
    pool = roster(args.roster, random.Random(0))
    members = pool[:4]
    cooling = [
        Candidate(m.alias, m.family, m.free, cooldown_until=NOW + 60) if i < 2 else m for i, m in enumerate(members)
    ]
    pool_cooling = [*cooling, *pool[4:]]
    print(f"plan_seats, {args.roster} models, 4 members, {args.plans} plans (µs per plan)")
    print(f"  without stand-ins:              {micros(members, pool, args.plans, False):8.1f}")
    print(f"  stand-ins, nobody absent:       {micros(members, pool, args.plans, True):8.1f}")
    print(f"  stand-ins, two members cooling: {micros(cooling, pool_cooling, args.plans, True):8.1f}")


if __name__ == "__main__":
    main()
