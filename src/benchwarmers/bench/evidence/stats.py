"""Evidence arithmetic: intervals, maturity, pairwise strengths (who is best: posterior.py).

Everything here is pure: counts in, numbers out. Randomness comes in as a
`random.Random` so results are reproducible for a given seed.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

Z95 = 1.959964
PRELIMINARY_BELOW = 10
SETTLED_FROM = 30
# Strengths are floored here so a model that never won stays finite when prior=0.
_FLOOR = 1e-12
_TOLERANCE = 1e-10


def wilson(successes: int, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion; 0 trials → (0.0, 1.0)."""
    if n < 0 or successes < 0 or successes > n:
        raise ValueError(f"need 0 <= successes <= n, got {successes}/{n}")
    if n == 0:
        return (0.0, 1.0)
    p = successes / n
    z2 = z * z
    denom = 1 + z2 / n
    centre = (p + z2 / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


def maturity(n: int) -> str:
    """How much a cell's verdict count can be trusted."""
    if n <= 0:
        return "none"
    if n < PRELIMINARY_BELOW:
        return "preliminary"
    if n < SETTLED_FROM:
        return "provisional"
    return "settled"


@dataclass(frozen=True)
class Judged:
    """One judged seat of a panel, as the pairwise comparison needs it."""

    alias: str
    useful: bool
    false_claims: int = 0


def _beats(a: Judged, b: Judged) -> bool:
    if a.useful != b.useful:
        return a.useful
    # Two not-useful answers are not ranked against each other: both failed the caller.
    return a.useful and a.false_claims < b.false_claims


def pairwise_outcomes(panel_judgements: Sequence[Sequence[Judged]]) -> list[tuple[str, str]]:
    """(winner, loser) pairs, compared only within a panel (same prompt, same judge)."""
    outcomes: list[tuple[str, str]] = []
    for panel in panel_judgements:
        for i, a in enumerate(panel):
            for b in panel[i + 1 :]:
                if a.alias == b.alias:
                    continue
                if _beats(a, b):
                    outcomes.append((a.alias, b.alias))
                elif _beats(b, a):
                    outcomes.append((b.alias, a.alias))
    return outcomes


def bradley_terry(
    outcomes: Sequence[tuple[str, str]],
    iterations: int = 200,
    prior: float = 0.5,
    models: Iterable[str] | None = None,
) -> dict[str, float]:
    """Bradley–Terry log-strengths by Hunter's (2004) MM algorithm.

    Each model also plays `prior` virtual wins and `prior` virtual losses against a
    fixed opponent of strength 1, which keeps strengths finite for models that never
    lost or never won. The result is normalised to geometric mean 1 (log mean 0).
    `models` adds models that may have no outcomes (they sit at the prior).
    """
    if prior < 0:
        raise ValueError("prior must be >= 0")
    names = sorted({*(models or ()), *(w for w, _ in outcomes), *(lo for _, lo in outcomes)})
    if not names:
        return {}
    wins = dict.fromkeys(names, 0.0)
    games: dict[tuple[str, str], int] = {}
    for winner, loser in outcomes:
        if winner == loser:
            continue
        wins[winner] += 1
        key = (winner, loser) if winner < loser else (loser, winner)
        games[key] = games.get(key, 0) + 1
    opponents: dict[str, list[tuple[str, int]]] = {name: [] for name in names}
    for (a, b), count in games.items():
        opponents[a].append((b, count))
        opponents[b].append((a, count))

    strength = dict.fromkeys(names, 1.0)
    for _ in range(iterations):
        updated: dict[str, float] = {}
        for name in names:
            denom = sum(count / (strength[name] + strength[other]) for other, count in opponents[name])
            denom += 2 * prior / (strength[name] + 1.0)
            numer = wins[name] + prior
            # No games at all (prior 0, no outcomes): nothing to learn, stay average.
            updated[name] = max(_FLOOR, numer / denom) if denom > 0 else 1.0
        change = max(abs(math.log(updated[n]) - math.log(strength[n])) for n in names)
        strength = updated
        if change < _TOLERANCE:
            break

    logs = {name: math.log(value) for name, value in strength.items()}
    mean = sum(logs.values()) / len(logs)
    return {name: value - mean for name, value in logs.items()}


def _percentile(sorted_values: Sequence[float], q: float) -> float:
    """Linear-interpolated percentile of already sorted values, q in [0, 1]."""
    pos = q * (len(sorted_values) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def bootstrap_bt(
    outcomes: Sequence[tuple[str, str]],
    rng: random.Random,
    samples: int = 200,
    level: float = 0.95,
    iterations: int = 200,
    prior: float = 0.5,
) -> dict[str, tuple[float, float]]:
    """Percentile bootstrap intervals for Bradley–Terry log-strengths.

    Outcomes are resampled with replacement; every model seen in `outcomes` is kept
    in every resample (at the prior if it drew no games), so each gets an interval.
    """
    if not 0 < level < 1:
        raise ValueError("level must be in (0, 1)")
    names = sorted({*(w for w, _ in outcomes), *(lo for _, lo in outcomes)})
    if not names or samples <= 0:
        return {}
    draws: dict[str, list[float]] = {name: [] for name in names}
    n = len(outcomes)
    for _ in range(samples):
        resample = [outcomes[rng.randrange(n)] for _ in range(n)]
        fitted = bradley_terry(resample, iterations=iterations, prior=prior, models=names)
        for name in names:
            draws[name].append(fitted[name])
    tail = (1 - level) / 2
    intervals: dict[str, tuple[float, float]] = {}
    for name, values in draws.items():
        values.sort()
        intervals[name] = (_percentile(values, tail), _percentile(values, 1 - tail))
    return intervals


@dataclass(frozen=True)
class Cell:
    """One model's evidence on one shape."""

    alias: str
    shape: str
    verdicts: int
    useful: int
    low: float
    high: float
    maturity: str

    @property
    def not_useful(self) -> int:
        return self.verdicts - self.useful

    @property
    def rate(self) -> float | None:
        return self.useful / self.verdicts if self.verdicts else None

    @classmethod
    def of(cls, alias: str, shape: str, useful: int, verdicts: int) -> Cell:
        """Build a cell from counts, deriving its interval and maturity."""
        low, high = wilson(useful, verdicts)
        return cls(alias, shape, verdicts, useful, low, high, maturity(verdicts))


def nearest_rank(values: Iterable[float], q: float) -> float | None:
    """The q-quantile (0 < q ≤ 1) by nearest rank: a value that was observed; None without values."""
    ordered = sorted(values)
    if not ordered:
        return None
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


def rank_ranges(intervals: Sequence[tuple[float, float] | None]) -> list[tuple[int, int] | None]:
    """Shared ranks from 95% intervals, as LMArena ranks: a model's best rank is one plus the models
    whose interval lies wholly above its own; its worst is the count of models whose interval does not
    lie wholly below it. Models whose intervals overlap share ranks. None (no verdicts): no rank."""
    judged = [i for i in intervals if i is not None]
    ranges: list[tuple[int, int] | None] = []
    for own in intervals:
        if own is None:
            ranges.append(None)
            continue
        low, high = own
        above = sum(1 for other_low, _ in judged if other_low > high)
        below = sum(1 for _, other_high in judged if other_high < low)
        ranges.append((1 + above, len(judged) - below))
    return ranges


def thompson_draw(useful: int, not_useful: int, rng: random.Random) -> float:
    """One draw from the Beta(useful+1, not_useful+1) posterior of a useful rate."""
    return rng.betavariate(useful + 1, not_useful + 1)
