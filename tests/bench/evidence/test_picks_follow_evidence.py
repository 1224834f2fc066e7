"""Picks that follow the evidence, over HTTP: two shapes with different bests, verdicts posted to
/bench/verdict, then `:merged`, `:pick` and the router's pick read each shape's best."""

from __future__ import annotations

import httpx2

from benchwarmers.bench.evidence.primary import primary_for
from tests.support.judging import judge, seats_by_model
from tests.support.panels import ask, collection

LLAMA, QWEN, PHI = "llama-3.3-70b", "qwen3-32b", "phi-4"


def on(shape: str) -> dict:
    return {"extra_body": {"bench": {"shape": shape}}}


def judge_two_shapes(server, client) -> None:
    """review: llama 6/6, phi 10/30 (the most useful verdicts, and settled), qwen 0/6.
    design: qwen 4/4, llama 0/4."""
    collection(server, "trio", [LLAMA, QWEN, PHI], max_explorers=0)
    for i in range(30):
        calls = seats_by_model(ask(client, "bench/trio", **on("review")))
        judge(server, calls[PHI], i < 10)
        if i < 6:
            judge(server, calls[LLAMA], True)
            judge(server, calls[QWEN], False)
    for _ in range(4):
        calls = seats_by_model(ask(client, "bench/trio", **on("design")))
        judge(server, calls[QWEN], True)
        judge(server, calls[LLAMA], False)


def test_merged_pick_and_router_follow_each_shapes_best(bench_with_roster, client):
    judge_two_shapes(bench_with_roster, client)
    # The old rules chose phi on review twice over: the most useful verdicts (10), and the only
    # settled model (30 verdicts) for the router. Now llama's 6/6 lies above both others.
    review = ask(client, "bench/trio:merged", **on("review")).bench["merger"]
    assert (review["alias"], review["chosen_as"]) == (
        f"fake/{LLAMA}",
        "the best evidence on review among the panel's models: 6/6 useful",
    )
    design = ask(client, "bench/trio:merged", **on("design")).bench["merger"]
    assert (design["alias"], design["chosen_as"]) == (
        f"fake/{QWEN}",
        "the best evidence on design among the panel's models: 4/4 useful",
    )
    for shape, best, record in (("review", LLAMA, "6/6"), ("design", QWEN, "4/4")):
        picked = ask(client, "bench/trio:pick", **on(shape)).bench
        assert picked["picked"] == {
            "call": next(s["call"] for s in picked["seats"] if s["alias"] == f"fake/{best}"),
            "alias": f"fake/{best}",
            "seat": "member",
            "why": f"the best evidence on {shape} among the panel's models: {record} useful",
        }
    primaries = bench_with_roster.admin(
        lambda b: _both(b, ("review", "design")),
    )
    assert primaries == [f"fake/{LLAMA}", f"fake/{QWEN}"]
    boards = {b["shape"]: b for b in httpx2.get(f"{bench_with_roster.url}/api/leaderboard").json()["shapes"]}
    assert boards["review"]["best"] == {"alias": f"fake/{LLAMA}", "separated": True, "tied": [], "p_best": 0.9985}
    assert boards["design"]["best"] == {"alias": f"fake/{QWEN}", "separated": True, "tied": [], "p_best": 0.99725}


async def _both(bench, shapes):
    return [await primary_for(bench.state, shape) for shape in shapes]


def test_the_pick_takes_the_best_evidenced_explorer(bench_with_roster, client):
    judge_two_shapes(bench_with_roster, client)
    # phi alone, one explorer: phi has no design evidence, so whenever qwen explores it is picked.
    collection(bench_with_roster, "solo", [PHI], max_explorers=1)
    seen = set()
    for _ in range(12):
        bench = ask(client, "bench/solo:pick", **on("design")).bench
        [explorer] = [s for s in bench["seats"] if s["seat"] == "explorer"]
        seen.add(explorer["alias"])
        if explorer["alias"] == f"fake/{QWEN}":
            assert bench["picked"] == {
                "call": explorer["call"],
                "alias": f"fake/{QWEN}",
                "seat": "explorer",
                "why": "the best evidence on design among the panel's models: 4/4 useful",
            }
            break
        # Any other explorer has no useful verdict on design (llama's 0/4 is evidence against it).
        assert (bench["picked"]["alias"], bench["picked"]["why"]) == (f"fake/{PHI}", "the first member that fits")
    else:
        raise AssertionError(f"qwen never explored: {sorted(seen)}")
