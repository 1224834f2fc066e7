"""Advice that closes the loop: the pure rule (bench/evidence/advice.py), then a close-rates run
over HTTP that `benchwarmers advise`, /api/advice and the dashboard name, and auto_swap acting on it."""

from __future__ import annotations

import httpx2
import orjson
import pytest
from typer.testing import CliRunner

from benchwarmers.bench.evidence.advice import Usage, advise, edit_command
from benchwarmers.bench.upkeep.watch import Watch
from benchwarmers.cli.app import app
from benchwarmers.store.changes import list_changes
from tests.support.judging import judge, seats_by_model
from tests.support.panels import ask, collection
from tests.support.shell import BENCHWARMERS, shell


def fields(name: str, members: list[str], shape: str | None = None) -> dict:
    return {"name": name, "description": "", "tags": [], "members": members, "shape": shape, "reply": "all",
            "merger": None, "max_explorers": None, "max_calls": None, "auto_swap": False,
            "require_tags": [], "exclude_tags": [],
            "daily_panels": None, "daily_tokens": None,
            "stand_ins": False}  # fmt: skip


def test_an_explorer_better_than_a_member_is_advised_with_its_probability():
    counts = {
        ("y", "review"): (50, 100),
        ("x", "review"): (32, 40),  # P(x > y) ≈ 1.00
        ("z", "review"): (6, 10),  # not better with any confidence
        ("w", "review"): (9, 9),  # too few verdicts to advise on
        ("y", "design"): (3, 4),
    }
    [swap, thin] = advise([fields("reviewers", ["y"])], counts, can_join={"x", "y", "z", "w"})
    assert (swap.kind, swap.member, swap.explorer, swap.verdicts, swap.decisive) == ("swap", "y", "x", 140, True)
    assert swap.p is not None and swap.p > 0.999
    assert swap.text == (
        "x beats member y on review: P = 1.00 over 140 verdicts (32/40 against 50/100); "
        "swap with `benchwarmers collection edit reviewers --member x`"
    )
    assert thin.text == "design: too little evidence to say (y has 4 verdicts; 10 are needed to compare)"
    # Below 0.95 nothing is advised; a model that cannot join (disabled, retiring) is never advised.
    assert [a.kind for a in advise([fields("r", ["y"])], {**counts, ("x", "review"): (11, 20)}, can_join={"x"})] == [
        "thin"
    ]
    assert [a.kind for a in advise([fields("r", ["y"])], counts, can_join={"z"})] == ["thin"]
    # Decisive needs P >= 0.99 and 30 verdicts on both.
    [close] = advise(
        [fields("r", ["y"], "review")], {("y", "review"): (5, 20), ("x", "review"): (17, 20)}, can_join={"x"}
    )
    assert (close.kind, close.decisive, round(close.p or 0, 4)) == ("swap", False, 0.9999)


def test_members_that_keep_failing_and_the_edit_command():
    usage = {"a": Usage(seats=10, errors=4, empties=1), "b": Usage(seats=4, errors=4), "c": Usage(seats=10, errors=1)}
    found = advise([fields("trio", ["a", "b", "c", "d"], "review")], {}, can_join=set(), usage=usage, retired={"d"})
    assert [a.text for a in found if a.kind == "failing"] == [
        "member a keeps failing: 4 errors and 1 empty answers in its last 10 seats (7 days); fix its endpoint or "
        "replace it (`benchwarmers collection edit`)",
        "member d keeps failing: it is retired (it kept failing): it is not asked until a probe or you restore it; "
        "fix its endpoint or replace it (`benchwarmers collection edit`)",
    ]
    assert edit_command("r", ["fake/a b", "x"]) == "benchwarmers collection edit r --member 'fake/a b' --member x"


X, Y = "gemma-3-27b", "qwen3-32b"


@pytest.fixture
def close_rates(bench_with_roster, client):
    """Thirty review panels of member qwen plus one explorer, gemma (the only other model left
    enabled): gemma judged useful 27 times, qwen 12."""
    for alias in ("llama-3.3-70b", "llama-3.1-8b", "qwen3-coder", "mistral-small", "deepseek-r1", "phi-4",
                  "glm-4.5-air", "kimi-k2"):  # fmt: skip
        bench_with_roster.admin(lambda b, a=alias: b.models.set_model(f"fake/{a}", enabled=False))
    collection(bench_with_roster, "reviewers", [Y], shape="review", max_explorers=1)
    for i in range(30):
        calls = seats_by_model(ask(client, "bench/reviewers"))
        judge(bench_with_roster, calls[X], i % 10 != 0)
        judge(bench_with_roster, calls[Y], i % 5 < 2)
    return bench_with_roster


ADVICE = (
    f"fake/{X} beats member fake/{Y} on review: P = 1.00 over 60 verdicts (27/30 against 12/30); "
    f"swap with `benchwarmers collection edit reviewers --member fake/{X}`"
)


def test_advise_names_the_better_explorer_and_auto_swap_makes_the_swap(close_rates, client, monkeypatch):
    monkeypatch.setenv("BENCHWARMERS_HOME", str(close_rates.settings.home))
    runner = CliRunner()
    # Behind a real pipe: tab-separated lines, the title on stderr; at a terminal, a table.
    piped = shell(f"{BENCHWARMERS} advise", close_rates)
    assert piped.returncode == 0, piped.stderr
    assert piped.stdout == f"collection\tshape\tkind\tadvice\nbench/reviewers\treview\tswap\t{ADVICE}\n"
    assert piped.stderr == "advice · swaps at P ≥ 0.95 with 10 verdicts each\n"
    shown = runner.invoke(app, ["advise"])
    assert shown.exit_code == 0 and shown.stdout.startswith("advice · swaps at P ≥ 0.95 with 10 verdicts each\n┏")
    data = orjson.loads(runner.invoke(app, ["advise", "--json"]).stdout)
    api = httpx2.get(f"{close_rates.url}/api/advice").json()
    assert api == {"object": "advice", **data}
    [advice] = data["advice"]
    assert {k: v for k, v in advice.items() if k != "p"} == {
        "kind": "swap",
        "collection": "reviewers",
        "shape": "review",
        "text": ADVICE,
        "member": f"fake/{Y}",
        "explorer": f"fake/{X}",
        "verdicts": 60,
        "command": f"benchwarmers collection edit reviewers --member fake/{X}",
        "decisive": True,
    }
    assert advice["p"] > 0.999 and data["auto_swap"] == []
    page = httpx2.get(f"{close_rates.url}/leaderboard").text
    assert f'<span class="mono">bench/reviewers</span> · review: {ADVICE}</li>' in page

    # Off by default: the watch changes nothing. On: its next round swaps, logged and reversible.
    close_rates.admin(lambda b: Watch(b.state).run_once())
    assert close_rates.admin(lambda b: b.collections.collection("reviewers"))["members"] == [f"fake/{Y}"]
    edited = runner.invoke(app, ["collection", "edit", "reviewers", "--auto-swap"])
    assert edited.exit_code == 0, edited.output
    assert orjson.loads(runner.invoke(app, ["collection", "show", "reviewers"]).stdout)["auto_swap"] is True
    close_rates.admin(lambda b: Watch(b.state).run_once())
    assert close_rates.admin(lambda b: b.collections.collection("reviewers"))["members"] == [f"fake/{X}"]

    async def swaps(bench):
        async with bench.state.read() as conn:
            return [c for c in await list_changes(conn, subject="collection") if c["action"] == "swap"]

    [change] = close_rates.admin(swaps)
    assert (change["actor"], change["name"], change["before"]["members"]) == ("advise", "reviewers", [f"fake/{Y}"])
    swap = change["after"].pop("swap")
    assert change["after"] == {**change["before"], "members": [f"fake/{X}"]}
    assert {k: v for k, v in swap.items() if k != "p"} == {
        "shape": "review",
        "member": f"fake/{Y}",
        "explorer": f"fake/{X}",
        "verdicts": 60,
        "undo": f"benchwarmers collection edit reviewers --member fake/{Y}",
    }
    # The old member can still explore the collection: the next panel seats it as the explorer.
    seats = ask(client, "bench/reviewers").bench["seats"]
    assert [(s["seat"], s["alias"]) for s in seats] == [("member", f"fake/{X}"), ("explorer", f"fake/{Y}")]
    # Swapped, the advice is gone (qwen is no longer a member to beat).
    assert orjson.loads(runner.invoke(app, ["advise", "--json"]).stdout)["advice"] == []
