"""The one evidence rule: how models are ordered on a shape, who is best, and whether that best is
separated from the rest or tied with it.

Every place that names or uses a best (the router's pick, the merger's choice among members, the
pick reply's order among seated answers, `report`, `advise`, the leaderboard's "best for" lines)
orders models with `order_key` and describes the top with `best_of`, so they cannot disagree.

The order is by the lower end of the 95% Wilson interval, then the rate, then the evidence: a
model is ahead when we are confident it is at least that good. It needs no verdict gate (a model
at 21/26 is ahead of one at 33/80 however few verdicts it has) and it favours more evidence only
where the rates are close. Ties are said, never hidden: the best is *separated* when its interval
lies wholly above every other's; otherwise every model whose interval overlaps it is in the tied
set. `prob_best` gives the posterior probability of being best (uniform Beta priors), for the
places a person reads; it costs a few milliseconds, so the per-panel paths use the intervals.

Pure: counts in, numbers out; chance arrives as a seeded `random.Random`.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from benchwarmers.bench.evidence.stats import wilson

Counts = tuple[int, int]  # (useful, verdicts)
Key = tuple[str, str]  # (alias, shape)
DRAWS = 4000  # posterior draws for P(best): the probability's error is under 0.01
SEPARATED_P = 0.95  # a best whose P(best) is at least this is "separated" where P(best) is known


def order_key(useful: int, verdicts: int) -> tuple[float, float, int]:
    """Sort key, best first: the interval's lower end, then the rate, then the verdicts."""
    low, _ = wilson(useful, verdicts)
    rate = useful / verdicts if verdicts else 0.0
    return (-low, -rate, -verdicts)


def ranked(counts: Mapping[str, Counts]) -> list[str]:
    """Aliases best first by the rule; unjudged models last, in alias order."""
    return sorted(counts, key=lambda alias: (*order_key(*counts[alias]), alias))


@dataclass(frozen=True)
class Best:
    """The top of a shape by the rule, and how sure that is."""

    alias: str
    separated: bool  # its interval lies above every other judged model's (or P(best) >= SEPARATED_P)
    tied: tuple[str, ...] = ()  # the others that could be best: intervals overlapping the best's
    p_best: float | None = None  # posterior probability of being best, where it was computed

    @property
    def tie(self) -> bool:
        return not self.separated and bool(self.tied)

    def describe(self) -> str:
        """`X` when separated; `X (P(best) = 0.83; tied with Y, Z)` when not."""
        if not self.tie:
            return self.alias if self.p_best is None else f"{self.alias} (P(best) = {self.p_best:.2f})"
        parts = [f"P(best) = {self.p_best:.2f}"] if self.p_best is not None else []
        parts.append("tied with " + ", ".join(self.tied))
        return f"{self.alias} ({'; '.join(parts)})"

    def as_json(self) -> dict[str, object]:
        return {"alias": self.alias, "separated": self.separated, "tied": list(self.tied), "p_best": self.p_best}


def best_of(
    counts: Mapping[str, Counts],
    *,
    rng: random.Random | None = None,
    draws: int = DRAWS,
) -> Best | None:
    """The best judged model of `counts` (alias → (useful, verdicts)) and its ties; None when no
    model has a verdict. With `rng`, P(best) is computed too and a best at P >= SEPARATED_P counts
    as separated even where intervals touch (a few hundred verdicts each make the intervals
    conservative)."""
    judged = {alias: c for alias, c in counts.items() if c[1] > 0}
    if not judged:
        return None
    order = ranked(judged)
    top = order[0]
    low, _ = wilson(*judged[top])
    tied = tuple(alias for alias in order[1:] if wilson(*judged[alias])[1] >= low)
    p_best = prob_best(judged, rng, draws)[top] if rng is not None and len(judged) > 1 else None
    separated = not tied or (p_best is not None and p_best >= SEPARATED_P)
    return Best(top, separated, () if separated else tied, p_best)


def prob_best(counts: Mapping[str, Counts], rng: random.Random | None = None, draws: int = DRAWS) -> dict[str, float]:
    """alias → posterior probability that its useful rate is the highest (Beta(1+useful,
    1+not useful) for each, by Monte Carlo). Deterministic for a given `rng` seed (default 0)."""
    if not counts:
        return {}
    rng = rng if rng is not None else random.Random(0)
    aliases = sorted(counts)
    params = [(counts[a][0] + 1, counts[a][1] - counts[a][0] + 1) for a in aliases]
    wins = [0] * len(aliases)
    beta = rng.betavariate
    for _ in range(draws):
        values = [beta(a, b) for a, b in params]
        wins[values.index(max(values))] += 1
    return {alias: wins[i] / draws for i, alias in enumerate(aliases)}


def best_among(candidates: Iterable[str], counts: Mapping[str, Counts]) -> list[str]:
    """`candidates` ordered by the rule (the merger's members, a panel's valid seats); those with
    no verdict keep their given order, after the judged ones."""
    given = list(dict.fromkeys(candidates))
    position = {alias: i for i, alias in enumerate(given)}
    judged = [a for a in given if counts.get(a, (0, 0))[1] > 0]
    unjudged = [a for a in given if counts.get(a, (0, 0))[1] == 0]
    judged.sort(key=lambda a: (*order_key(*counts[a]), position[a]))
    return judged + unjudged


def tie_note(order: Sequence[str], counts: Mapping[str, Counts]) -> str:
    """For a reason line: '' when the first of `order` is separated from the others judged, else
    '; tied with X, Y (intervals overlap)'."""
    best = best_of({a: counts.get(a, (0, 0)) for a in order})
    if best is None or not best.tie or best.alias != (order[0] if order else None):
        return ""
    return f"; tied with {', '.join(best.tied)} (intervals overlap)"


def router_pick(counts: Mapping[str, Counts], pinned: str | None = None) -> str | None:
    """The primary model for a shape: the user's pin, else the best by the rule (no verdict gate)."""
    if pinned:
        return pinned
    best = best_of(counts)
    return best.alias if best is not None else None


def from_history(counts: Mapping[Key, tuple[int, int]], shape: str, aliases: Iterable[str]) -> dict[str, Counts]:
    """alias → (useful, verdicts) on `shape` for `aliases`, from the seat history's (useful, not
    useful) counts (SeatHistory.current: the current epoch's): the per-panel paths' reading."""
    found: dict[str, Counts] = {}
    for alias in aliases:
        good, bad = counts.get((alias, shape), (0, 0))
        found[alias] = (good, good + bad)
    return found


def _log_beta(a: float, b: float) -> float:
    return math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)


def prob_better(a: Counts, b: Counts) -> float:
    """Posterior probability that a's useful rate is above b's (uniform Beta priors), exactly:
    P(X > Y) for X ~ Beta(1 + useful_a, 1 + not_a), Y ~ Beta(1 + useful_b, 1 + not_b), by the
    closed form for integer parameters (a sum of one term per useful verdict of a)."""
    alpha_x, beta_x = a[0] + 1, a[1] - a[0] + 1
    alpha_y, beta_y = b[0] + 1, b[1] - b[0] + 1
    base = _log_beta(alpha_y, beta_y)
    total = 0.0
    for i in range(alpha_x):
        total += math.exp(
            _log_beta(alpha_y + i, beta_x + beta_y) - math.log(beta_x + i) - _log_beta(1 + i, beta_x) - base
        )
    return min(1.0, max(0.0, total))


def epoch_verdicts(counts: Mapping[Key, tuple[int, int]]) -> dict[Key, Counts]:
    """(alias, shape) → (useful, verdicts) from the seat history's (useful, not useful) counts, the
    judged ones only: what the router's primary and `advise` weigh (the current epoch's evidence)."""
    return {key: (good, good + bad) for key, (good, bad) in counts.items() if good + bad}
