"""Honesty reports: is the evidence fair, and does the bench earn its keep?

All four read the seated seats of one window (default the last 30 days):

- **Exposure.** Each model's and endpoint's share of explorer seats. A model is eligible when it
  could be an explorer today: enabled, free, not retiring, no unacknowledged went-paid alert. Its
  fair share is 1 / (eligible models); an endpoint's is its eligible models / (eligible models).
  An eligible model or endpoint below half its fair share is flagged: it is starved of evidence.
  A model that can explore no collection (a member, or of a member's family, in every collection
  with explorer seats) sits its panels as a member: it is not eligible here, never flagged, and
  its member seats are shown beside.
- **Bench vs best.** Per shape, the share of judged panels (at least one seat judged) where any
  seat was judged useful, against the useful rate of the best single model (the router's pick
  from the same window, by the one evidence rule, posterior.py; `best_detail` says whether it is
  separated, its tied set and P(best)). Both carry 95% Wilson intervals; one is called ahead only when the
  intervals do not overlap.
- **Verdicts per key.** Who judges (`verdicts.caller`). A warning when one key gave more than
  half the verdicts while more than one caller used the bench in the window: the rankings then
  lean on one judge. (A bench with a single caller is not warned about its only judge.)
- **Length bias.** Per shape, judged `ok` answers split at the shape's median length: short
  (≤ median) and long (> median). A warning when both halves have at least 10 verdicts, long
  answers are judged useful at least 15 points more often, and a pooled two-proportion z-test
  gives z ≥ 1.96 (one-sided, about 2.5%). Length can be a real sign of thoroughness, so this is
  a warning to look, not a correction.
"""

from __future__ import annotations

import math
import random
import statistics
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from benchwarmers.bench.bounds import REPORT_DAYS
from benchwarmers.bench.core.seats import explorer_count, seat_limits
from benchwarmers.bench.evidence.board import SEED, board_shapes, pickable, since_days, standing_of
from benchwarmers.bench.evidence.posterior import best_of
from benchwarmers.bench.evidence.stats import wilson
from benchwarmers.bench.snapshot import Snapshot
from benchwarmers.store import evidence as store

if TYPE_CHECKING:
    from benchwarmers.bench.state import BenchState

LENGTH_MIN_VERDICTS = 10
LENGTH_MIN_GAP = 0.15
LENGTH_MIN_Z = 1.96

Row = Mapping[str, Any]


def _pct(value: float) -> str:
    return f"{value:.0%}"


def explorer_eligible(snapshot: Snapshot) -> dict[str, str]:
    """alias → endpoint for every model that could take an explorer seat today (cooldowns aside)."""
    return {
        m.alias: m.endpoint
        for m in snapshot.models.values()
        if m.enabled and m.free is True and not m.retiring and m.alias not in snapshot.went_paid
    }


def explorable(snapshot: Snapshot) -> dict[str, int]:
    """alias → how many collections it could explore: ones with explorer seats where it is not a
    member and not of a member's family (seating never seats those)."""
    found: dict[str, int] = dict.fromkeys(snapshot.models, 0)
    for collection in snapshot.collections.values():
        members = [a for a in collection["members"] if a in snapshot.models]
        max_explorers, max_calls = seat_limits(collection, snapshot.gateway)
        if explorer_count(len(members), max_explorers, max_calls) <= 0:
            continue
        families = {_family(snapshot, a) for a in members}
        for alias in snapshot.models:
            if alias not in members and _family(snapshot, alias) not in families:
                found[alias] += 1
    return found


def _family(snapshot: Snapshot, alias: str) -> str:
    return ((snapshot.models[alias].family or "").strip() or alias).casefold()


def exposure(
    rows: Iterable[Row], eligible: Mapping[str, str], explores: Mapping[str, int] | None = None
) -> dict[str, Any]:
    """Explorer seats per model and endpoint against their fair share. `explores` (alias →
    collections it could explore): a model that can explore none (a member, or of a member's
    family, in every collection with explorer seats) is not starved and takes no share."""
    rows = list(rows)
    explorers = [r for r in rows if r["seat"] == "explorer"]
    members = Counter(r["alias"] for r in rows if r["seat"] == "member")
    total = len(explorers)
    seats = Counter(r["alias"] for r in explorers)
    endpoint_of = {**{r["alias"]: r["endpoint"] for r in explorers}, **eligible}
    can = {a: e for a, e in eligible.items() if explores is None or explores.get(a, 0) > 0}
    fair = 1 / len(can) if can else None
    warnings: list[str] = []
    models = []
    for alias in sorted(set(seats) | set(eligible), key=lambda a: (-seats[a], a)):
        share = seats[alias] / total if total else 0.0
        flagged = bool(total and fair and alias in can and share < fair / 2)
        if flagged:
            warnings.append(
                f"exposure: {alias} got {_pct(share)} of explorer seats, under half its fair share of {_pct(fair or 0)}"
            )
        models.append(
            {
                "alias": alias,
                "endpoint": endpoint_of[alias],
                "seats": seats[alias],
                "share": round(share, 4),
                "eligible": alias in eligible,
                "can_explore": alias in can,
                "member_seats": members[alias],
                "flagged": flagged,
            }
        )
    per_endpoint = Counter(r["endpoint"] for r in explorers)
    eligible_on = Counter(can.values())
    endpoints = []
    for endpoint in sorted(set(per_endpoint) | set(eligible_on), key=lambda e: (-per_endpoint[e], e)):
        share = per_endpoint[endpoint] / total if total else 0.0
        endpoint_fair = eligible_on[endpoint] / len(can) if can else 0.0
        flagged = bool(total and endpoint_fair and share < endpoint_fair / 2)
        if flagged:
            warnings.append(
                f"exposure: endpoint {endpoint} got {_pct(share)} of explorer seats, under half its fair share "
                f"of {_pct(endpoint_fair)}"
            )
        endpoints.append(
            {
                "endpoint": endpoint,
                "eligible_models": eligible_on[endpoint],
                "seats": per_endpoint[endpoint],
                "share": round(share, 4),
                "fair_share": round(endpoint_fair, 4),
                "flagged": flagged,
            }
        )
    return {
        "explorer_seats": total,
        "eligible_models": len(can),
        "fair_share": None if fair is None else round(fair, 4),
        "models": models,
        "endpoints": endpoints,
        "warnings": warnings,
    }


def _compare(a: tuple[float, float], b: tuple[float, float]) -> str:
    if a[0] > b[1]:
        return "bench ahead"
    if a[1] < b[0]:
        return "best model ahead"
    return "no clear difference"


def bench_vs_best(
    rows: Sequence[Row], shapes: Sequence[str], usable: frozenset[str] | set[str]
) -> list[dict[str, Any]]:
    """Per shape: panels where any seat was useful, against the best single model's useful rate."""
    result = []
    for shape in shapes:
        own = [r for r in rows if r["shape"] == shape]
        judged: dict[str, bool] = {}
        for r in own:
            if r["useful"] is not None:
                judged[r["panel_id"]] = judged.get(r["panel_id"], False) or bool(r["useful"])
        by_alias: dict[str, list[Row]] = defaultdict(list)
        for r in own:
            by_alias[r["alias"]].append(r)
        standings = {a: standing_of(a, shape, seats) for a, seats in by_alias.items()}
        found = best_of(
            {a: (s.useful, s.verdicts) for a, s in standings.items() if a in usable}, rng=random.Random(SEED)
        )
        best = found.alias if found is not None else None
        any_useful = sum(judged.values())
        interval = wilson(any_useful, len(judged))
        entry: dict[str, Any] = {
            "shape": shape,
            "judged_panels": len(judged),
            "any_useful": any_useful,
            "rate": round(any_useful / len(judged), 4) if judged else None,
            "interval": [round(interval[0], 4), round(interval[1], 4)],
            "best": best,
            "best_detail": None if found is None else found.as_json(),
            "best_verdicts": None,
            "best_rate": None,
            "best_interval": None,
            "verdict": "not enough evidence",
        }
        if best is not None and judged:
            top = standings[best]
            entry.update(
                best_verdicts=top.verdicts,
                best_rate=round(top.useful / top.verdicts, 4),
                best_interval=[round(top.low, 4), round(top.high, 4)],
                verdict=_compare(interval, (top.low, top.high)),
            )
        result.append(entry)
    return result


def verdicts_by_key(rows: Sequence[Row]) -> dict[str, Any]:
    judges = Counter(r["judge"] for r in rows if r["useful"] is not None)
    total = sum(judges.values())
    callers = {r["caller"] for r in rows} | set(judges)
    keys = [
        {"key": key, "verdicts": n, "share": round(n / total, 4)}
        for key, n in sorted(judges.items(), key=lambda kv: (-kv[1], kv[0]))
    ]
    warnings = []
    if keys and len(callers) > 1 and keys[0]["verdicts"] * 2 > total:
        top = keys[0]
        warnings.append(
            f"verdicts: key {top['key']} gave {_pct(top['share'])} of the verdicts ({top['verdicts']} of {total}); "
            "the rankings lean on one judge"
        )
    return {"verdicts": total, "callers": len(callers), "keys": keys, "warnings": warnings}


def two_proportion_z(successes_a: int, n_a: int, successes_b: int, n_b: int) -> float:
    """Pooled two-proportion z statistic for rate A − rate B (0 when it is undefined)."""
    if n_a == 0 or n_b == 0:
        return 0.0
    pooled = (successes_a + successes_b) / (n_a + n_b)
    se = math.sqrt(pooled * (1 - pooled) * (1 / n_a + 1 / n_b))
    return (successes_a / n_a - successes_b / n_b) / se if se > 0 else 0.0


def _half(rows: Sequence[Row]) -> dict[str, Any]:
    useful = sum(1 for r in rows if r["useful"])
    return {"verdicts": len(rows), "useful": useful, "rate": round(useful / len(rows), 4) if rows else None}


def length_bias(rows: Sequence[Row], shapes: Sequence[str]) -> list[dict[str, Any]]:
    result = []
    for shape in shapes:
        judged = [r for r in rows if r["shape"] == shape and r["useful"] is not None and r["status"] == "ok"]
        if not judged:
            continue
        median = statistics.median(r["length"] for r in judged)
        short = [r for r in judged if r["length"] <= median]
        long = [r for r in judged if r["length"] > median]
        s, lo = _half(short), _half(long)
        gap = (lo["rate"] - s["rate"]) if short and long else None
        z = two_proportion_z(lo["useful"], len(long), s["useful"], len(short))
        warn = bool(
            gap is not None
            and len(short) >= LENGTH_MIN_VERDICTS
            and len(long) >= LENGTH_MIN_VERDICTS
            and gap >= LENGTH_MIN_GAP
            and z >= LENGTH_MIN_Z
        )
        result.append(
            {
                "shape": shape,
                "median_length": median,
                "short": s,
                "long": lo,
                "difference": None if gap is None else round(gap, 4),
                "z": round(z, 3),
                "warning": warn,
            }
        )
    return result


def _length_warnings(entries: Iterable[dict[str, Any]]) -> list[str]:
    return [
        f"length bias on {e['shape']}: long answers judged useful {_pct(e['long']['rate'])} of the time, "
        f"short ones {_pct(e['short']['rate'])} (z = {e['z']:.2f}); judges may be rewarding length"
        for e in entries
        if e["warning"]
    ]


def build_report(rows: Sequence[Row], snapshot: Snapshot, days: float, since: float | None) -> dict[str, Any]:
    """All four reports from one window's seat rows (pure)."""
    shapes = board_shapes(snapshot, {r["shape"] for r in rows})
    shown = exposure(rows, explorer_eligible(snapshot), explorable(snapshot))
    keys = verdicts_by_key(rows)
    lengths = length_bias(rows, shapes)
    return {
        "days": days,
        "since": since,
        "exposure": shown,
        "bench_vs_best": bench_vs_best(rows, shapes, pickable(snapshot)),
        "verdicts_by_key": keys,
        "length_bias": lengths,
        "warnings": [*shown["warnings"], *keys["warnings"], *_length_warnings(lengths)],
    }


async def honesty_report(state: BenchState, days: float = REPORT_DAYS) -> dict[str, Any]:
    since = since_days(days)
    snapshot = await state.snapshot()
    async with state.read() as conn:
        rows = await store.seat_evidence(conn, since)
    return build_report(rows, snapshot, days, since)
