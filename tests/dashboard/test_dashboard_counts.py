"""The dashboard's cheap counts agree with the full computations they stand in for: standings from
grouped counts match the evidence leaderboard, and the owed count matches the panels' own."""

from __future__ import annotations

import httpx2

from benchwarmers.bench.evidence.board import leaderboard
from benchwarmers.bench.evidence.standings import standings
from benchwarmers.bench.services import Bench
from benchwarmers.store import calls, counts
from tests.support.panels import ask, collection

COMPARED = ("alias", "seats", "verdicts", "useful", "low", "high", "maturity", "awaiting", "errors", "empties",
            "last_seated", "last_judged", "error_kinds", "median_seconds", "p90_seconds", "rank_range")  # fmt: skip


def test_standings_from_counts_match_the_evidence_leaderboard(bench_with_roster, client, fake):
    fake.script("phi-4", status=500)
    fake.script("gemma-3-27b", empty=True)
    collection(bench_with_roster, "review", ["llama-3.3-70b", "phi-4", "gemma-3-27b"], shape="review")
    collection(bench_with_roster, "open", ["qwen3-32b"])
    seats = []
    for i in range(6):
        seats += ask(client, "bench/review" if i % 2 else "bench/open", f"question {i}").bench["seats"]
    verdict = f"{bench_with_roster.url}/bench/verdict"
    # Failed seats take no verdict (a 400): the rest are judged, the empty ones included.
    answered = [s for s in seats if s["status"] != "error"]
    for n, seat in enumerate(answered[:12]):
        httpx2.post(verdict, json={"call": seat["call"], "useful": n % 3 != 0}).raise_for_status()
    httpx2.post(verdict, json={"call": answered[1]["call"], "useful": False}).raise_for_status()  # a replaced one

    async def both(bench: Bench) -> tuple[list, list, int, int]:
        full = await leaderboard(bench.state)
        quick = await standings(bench.state)
        async with bench.state.read() as conn:
            owed = await counts.owed_count(conn)
            panels = await calls.list_panels(conn, limit=100)
        return full, quick, owed, sum(p["owed"] for p in panels)

    full, quick, owed, owed_per_panel = bench_with_roster.admin(both)
    assert [b.shape for b in quick] == [b.shape for b in full] == ["general", "review"]
    for fast, slow in zip(quick, full, strict=True):
        assert fast.primary == slow.primary
        assert [[getattr(s, f) for f in COMPARED] for s in fast.standings] == [
            [getattr(s, f) for f in COMPARED] for s in slow.standings
        ]
    assert owed == owed_per_panel > 0
