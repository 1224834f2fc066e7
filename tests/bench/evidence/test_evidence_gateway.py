"""Evidence end to end: panels through the real gateway, verdicts over HTTP, then the leaderboard,
the router's pick, a pinned role, the honesty reports, the export and the CLI."""

from __future__ import annotations

import random
import re

import httpx2
import orjson
import pytest

from benchwarmers.bench.caller import Caller
from benchwarmers.bench.evidence import board as evidence
from benchwarmers.bench.evidence.primary import primary_for
from benchwarmers.bench.evidence.stats import bootstrap_bt, bradley_terry
from benchwarmers.bench.services import Bench
from benchwarmers.store.changes import list_changes
from tests.support.benchserver import BenchServer
from tests.support.judging import judge, seats_by_model
from tests.support.panels import ask, collection

TRIO = ["llama-3.3-70b", "qwen3-32b", "gemma-3-27b"]


@pytest.fixture
def cli_home(bench_with_roster):
    return bench_with_roster.settings.home


@pytest.fixture
def judged_trio(bench_with_roster, client, fake):
    """Four review panels of three members, judged by hand; returns the panels' seat calls."""
    collection(bench_with_roster, "trio", TRIO, shape="review", max_explorers=0)
    panels = [seats_by_model(ask(client, "bench/trio")) for _ in range(3)]
    fake.script("gemma-3-27b", status=500)
    panels.append(seats_by_model(ask(client, "bench/trio")))
    p1, p2, p3, _p4 = panels
    judge(bench_with_roster, p1["llama-3.3-70b"], True, real=["r1"])
    judge(bench_with_roster, p1["qwen3-32b"], False, false=["f1", "f2"])
    judge(bench_with_roster, p1["gemma-3-27b"], True, false=["f3"])
    judge(bench_with_roster, p2["llama-3.3-70b"], True)
    judge(bench_with_roster, p2["qwen3-32b"], False)
    judge(bench_with_roster, p2["gemma-3-27b"], False)
    judge(bench_with_roster, p3["llama-3.3-70b"], True)
    judge(bench_with_roster, p3["qwen3-32b"], True)
    return panels


def leaderboard_row(server: BenchServer, alias: str) -> str:
    page = httpx2.get(f"{server.url}/leaderboard").text
    found = re.search(rf'<tr class="[^"]*" data-alias="{re.escape(alias)}">(.*?)</tr>', page, re.DOTALL)
    assert found, alias
    return found.group(1)


def test_a_model_that_answers_empty_every_time_is_marked_failing_like_one_that_errors(bench_with_roster, client, fake):
    fake.script("qwen3-32b", empty=True)
    fake.script("gemma-3-27b", status=500)
    collection(bench_with_roster, "trio", TRIO, shape="review", max_explorers=0)
    for _ in range(3):
        assert {s["status"] for s in ask(client, "bench/trio").bench["seats"]} == {"ok", "empty", "error"}
    empty, erring, answering = (leaderboard_row(bench_with_roster, f"fake/{m}") for m in (
        "qwen3-32b", "gemma-3-27b", "llama-3.3-70b"))  # fmt: skip
    assert re.search(r"<td class=\"num\" data-empties>3</td>", empty)
    assert '<span class="badge failing">failing</span>' in empty
    assert '<span class="badge failing">failing</span>' in erring
    assert "badge failing" not in answering


def test_leaderboard_cells_strengths_and_pick(bench_with_roster, judged_trio):
    response = httpx2.get(f"{bench_with_roster.url}/api/leaderboard")
    assert response.status_code == 200
    data = response.json()
    assert (data["object"], data["days"]) == ("leaderboard", None)
    [board] = data["shapes"]
    assert {k: v for k, v in board.items() if k != "models"} == {
        "shape": "review",
        "primary": "fake/llama-3.3-70b",
        "primary_by": "evidence",
        "pick": "fake/llama-3.3-70b",
        # 3/3 leads, but every interval overlaps its: a tie, said with P(best) (seeded draws).
        "best": {
            "alias": "fake/llama-3.3-70b",
            "separated": False,
            "tied": ["fake/gemma-3-27b", "fake/qwen3-32b"],
            "p_best": 0.8185,
        },
        "pinned": None,
        "panels": 4,
        "judged_panels": 3,
        "comparisons": 5,
    }
    # Within each judged panel: llama beat qwen twice and gemma twice (fewer false claims in p1),
    # gemma beat qwen once; p2's two not-useful answers and p3's two clean useful ones are ties.
    outcomes = [("fake/llama-3.3-70b", "fake/qwen3-32b")] * 2 + [("fake/llama-3.3-70b", "fake/gemma-3-27b")] * 2
    outcomes.append(("fake/gemma-3-27b", "fake/qwen3-32b"))
    point = bradley_terry(outcomes)
    spans = bootstrap_bt(sorted(outcomes), random.Random(0), samples=200)
    expected = {
        "fake/llama-3.3-70b": (4, 3, 3, 1.0, [0.4385, 1.0], 0.333, 0.0, 1, 0, 0),
        "fake/gemma-3-27b": (4, 2, 1, 0.5, [0.0945, 0.9055], 0.0, 0.5, 1, 1, 0),
        "fake/qwen3-32b": (4, 3, 1, 0.3333, [0.0615, 0.7923], 0.0, 0.667, 1, 0, 0),
    }
    assert [m["alias"] for m in board["models"]] == list(expected)
    for rank, m in enumerate(board["models"], start=1):
        assert m["rank"] == rank
        cells = (m["seats"], m["verdicts"], m["useful"], m["rate"], m["interval"], m["real_per_answer"],
                 m["false_per_answer"], m["awaiting"], m["errors"], m["empties"])  # fmt: skip
        assert cells == expected[m["alias"]], m["alias"]
        assert m["maturity"] == "preliminary"
        assert m["strength"] == round(point[m["alias"]], 3)
        assert m["strength_interval"] == [round(x, 3) for x in spans[m["alias"]]]
        assert 0 < m["median_seconds"] < 5
        assert m["last_seated"] <= m["last_judged"]
    assert board["models"][0]["strength"] > board["models"][1]["strength"] > board["models"][2]["strength"]

    one = httpx2.get(f"{bench_with_roster.url}/api/leaderboard?shape=review&days=1").json()
    assert one["days"] == 1 and one["shapes"] == [board]
    empty = httpx2.get(f"{bench_with_roster.url}/api/leaderboard?shape=design").json()["shapes"]
    assert empty == [{"shape": "design", "primary": None, "primary_by": None, "pick": None, "best": None,
                      "pinned": None, "panels": 0, "judged_panels": 0, "comparisons": 0, "models": []}]  # fmt: skip
    bad = httpx2.get(f"{bench_with_roster.url}/api/leaderboard?shape=nope")
    assert bad.status_code == 400
    assert bad.json() == {
        "error": {
            "message": "shape 'nope' is not known. Did you mean code? Shapes are: general, review, design, "
            "enumeration, code, writing, math, vision",
            "type": "invalid_request_error",
            "param": "shape",
            "code": "invalid_request",
        }
    }
    days = httpx2.get(f"{bench_with_roster.url}/api/leaderboard?days=soon")
    assert (days.status_code, days.json()["error"]["message"]) == (400, "days must be a positive number")


def test_pinned_primary_wins_until_cleared_and_is_logged(bench_with_roster, judged_trio, cli):
    def primary() -> str | None:
        return bench_with_roster.admin(lambda b: primary_for(b.state, "review"))

    assert primary() == "fake/llama-3.3-70b"
    assert cli("role", "set", "primary", "review", "fake/qwen3-32b") == (
        0,
        "pinned fake/qwen3-32b as primary for review\n",
    )
    assert cli("role", "set", "primary", "review", "fake/qwen3-32b") == (
        0,
        "fake/qwen3-32b is already the primary for review; nothing changed\n",
    )
    assert primary() == "fake/qwen3-32b"
    [board] = httpx2.get(f"{bench_with_roster.url}/api/leaderboard").json()["shapes"]
    assert (board["primary"], board["primary_by"], board["pick"], board["pinned"]) == (
        "fake/qwen3-32b",
        "pinned",
        "fake/llama-3.3-70b",
        "fake/qwen3-32b",
    )
    code, out = cli("role", "list")
    assert code == 0 and "│ primary │ review │ fake/qwen3-32b │" in out
    assert cli("role", "set", "primary", "review", "fake/gemma-3-27b") == (
        0,
        "pinned fake/gemma-3-27b as primary for review (was fake/qwen3-32b)\n",
    )
    # A pinned model that can no longer sit is not used: the evidence decides.
    bench_with_roster.admin(lambda b: b.models.set_model("fake/gemma-3-27b", enabled=False))
    assert primary() == "fake/llama-3.3-70b"
    bench_with_roster.admin(lambda b: b.models.set_model("fake/gemma-3-27b", enabled=True))
    assert primary() == "fake/gemma-3-27b"
    assert cli("role", "clear", "primary", "review") == (
        0,
        "cleared the primary for review (was fake/gemma-3-27b); the evidence decides again\n",
    )
    assert primary() == "fake/llama-3.3-70b"
    assert cli("role", "list") == (0, "no roles pinned: the evidence picks the primary for every shape\n")
    assert cli("role", "clear", "primary", "review") == (1, "error: no primary is pinned for shape 'review'\n")
    assert cli("role", "set", "primary", "reviews", "fake/qwen3-32b")[1].startswith(
        "error: shape 'reviews' is not known. Did you mean review? Shapes are: general, review,"
    )
    assert cli("role", "set", "primary", "review", "qwen3-32b") == (
        1,
        "error: no model 'qwen3-32b' on the roster. Did you mean fake/qwen3-32b?\n",
    )

    async def role_changes(bench: Bench):
        async with bench.state.read() as conn:
            return await list_changes(conn, subject="role")

    logged = bench_with_roster.admin(role_changes)
    assert [(c["actor"], c["name"], c["action"], c["before"], c["after"]) for c in reversed(logged)] == [
        ("cli", "primary/review", "create", None, {"alias": "fake/qwen3-32b"}),
        ("cli", "primary/review", "update", {"alias": "fake/qwen3-32b"}, {"alias": "fake/gemma-3-27b"}),
        ("cli", "primary/review", "delete", {"alias": "fake/gemma-3-27b"}, None),
    ]


def test_primary_follows_new_verdicts_in_one_process(bench_with_roster, judged_trio):
    p1, p2, p3, _ = judged_trio

    async def flip(bench: Bench) -> tuple[str | None, str | None]:
        before = await primary_for(bench.state, "review")
        for panel in (p1, p2, p3):
            await bench.verdicts.record({"call": panel["llama-3.3-70b"], "useful": False}, Caller())
        return before, await primary_for(bench.state, "review")

    # llama drops to 0/3: gemma (1/2, lower bound 0.09) now leads qwen (1/3, 0.06).
    assert bench_with_roster.admin(flip) == ("fake/llama-3.3-70b", "fake/gemma-3-27b")


def test_leaderboard_cli_table_and_json(bench_with_roster, judged_trio, cli):
    code, out = cli("leaderboard", "--json")
    assert code == 0
    assert orjson.loads(out) == httpx2.get(f"{bench_with_roster.url}/api/leaderboard").json()["shapes"]
    # The bootstrap is seeded and the outcomes sorted, so the whole table is fixed.
    # Seconds are measured: each is a number, then the whole table is fixed (the seconds columns aside).
    code, out = cli("leaderboard", "--shape", "review")
    seconds = re.compile(r"│ \d+\.\d      │ \d+\.\d   │")
    assert code == 0 and len(seconds.findall(out)) == 3
    assert seconds.sub("│ s        │ s     │", out) == (
        """\
review · 3 judged of 4 panels
┏━━━━━━┳━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━┳━━━━━━━━━━━━━━┳━━━━━━━━━━┳━━━━━━━┳━━━━━━━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━┳━━━━━━━━━━┳━━━━━━━┳━━━━━━━━━━━━━┓
┃ rank ┃ model              ┃ useful     ┃ 95% interval ┃ verdicts ┃ seats ┃ errors                    ┃ empty ┃ median s ┃ p90 s ┃ maturity    ┃
┡━━━━━━╇━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━╇━━━━━━━━━━━━━━╇━━━━━━━━━━╇━━━━━━━╇━━━━━━━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━╇━━━━━━━━━━╇━━━━━━━╇━━━━━━━━━━━━━┩
│ 1–3  │ fake/llama-3.3-70b │ 100% (3/3) │ 44%–100%     │ 3        │ 4     │ 0                         │ 0     │ s        │ s     │ preliminary │
│ 1–3  │ fake/gemma-3-27b   │ 50% (1/2)  │ 9%–91%       │ 2        │ 4     │ 1 (25%: 1 upstream_error) │ 0     │ s        │ s     │ preliminary │
│ 1–3  │ fake/qwen3-32b     │ 33% (1/3)  │ 6%–79%       │ 3        │ 4     │ 0                         │ 0     │ s        │ s     │ preliminary │
└──────┴────────────────────┴────────────┴──────────────┴──────────┴───────┴───────────────────────────┴───────┴──────────┴───────┴─────────────┘
best for review: fake/llama-3.3-70b (evidence; P(best) = 0.82; tied with fake/gemma-3-27b, fake/qwen3-32b)
rank: ordered by the 95% interval's low end, as the router picks; models whose intervals overlap share ranks (1–3: \
anywhere from 1st to 3rd). errors: failed seats of all seats, by class. seconds: over answered seats. Pairwise \
(Bradley–Terry) strengths are in --json.
"""  # noqa: E501
    )
    assert cli("leaderboard", "--shape", "nope")[0] == 1


def test_leaderboard_cli_on_an_empty_bench(cli):
    assert cli("leaderboard") == (0, "no evidence yet: ask a collection, then judge the seats (benchwarmers verdict)\n")
    assert cli("leaderboard", "--json") == (0, "[]\n")


def test_export_evidence_lines(bench_with_roster, judged_trio, cli, tmp_path):
    code, out = cli("export", "evidence")
    assert code == 0
    lines = [orjson.loads(line) for line in out.splitlines()]
    assert len(lines) == 8  # the judged seats only, oldest panel first, in seat order
    p1 = judged_trio[0]
    first = lines[0]
    assert first["call"] == p1["llama-3.3-70b"]
    keys = ("panel", "shape", "seat", "alias", "answer", "verdict", "source", "claims")
    assert {k: first[k] for k in keys} == {
        "panel": p1["llama-3.3-70b"].split(".")[0],
        "shape": "review",
        "seat": "member",
        "alias": "fake/llama-3.3-70b",
        "answer": "answer from llama-3.3-70b",
        "verdict": "useful",
        "source": "human",
        "claims": {"real": ["r1"], "false": []},
    }
    assert lines[1]["claims"] == {"real": [], "false": ["f1", "f2"]}
    assert lines[1]["verdict"] == "not useful"
    # The same prompt in every panel: one hash, the sha256 of the stored messages.
    expected = evidence.prompt_hash({"messages": [{"role": "user", "content": "Review this function."}]})
    assert {line["prompt_hash"] for line in lines} == {expected}
    target = tmp_path / "evidence.jsonl"
    assert cli("export", "evidence", "--output", str(target)) == (0, f"exported 8 evidence to {target}\n")
    assert target.read_text() == out


def test_reports_exposure_spares_members_and_flag_length_bias(bench_with_roster, client, fake, cli):
    bench_with_roster.admin(lambda b: b.gateway_settings.set_gateway(epsilon=0.0, explorer_floor=1.0))
    # Explorers: two llama and two qwen members leave six families to explore, two per panel.
    collection(bench_with_roster, "pair", ["llama-3.3-70b", "qwen3-32b"])
    for _ in range(3):
        ask(client, "bench/pair")
    bench_with_roster.admin(lambda b: b.models.set_model("fake/kimi-k2", enabled=False))
    # Length: two members answer at length and are judged useful, two answer tersely and are not.
    wordy, terse = ["glm-4.5-air", "deepseek-r1"], ["phi-4", "mistral-small"]
    for alias in wordy:
        fake.script(alias, reply="A long and careful answer. " * 20)
    for alias in terse:
        fake.script(alias, reply="No.")
    collection(bench_with_roster, "four", wordy + terse, max_explorers=0)
    for _ in range(5):
        calls = seats_by_model(ask(client, "bench/four"))
        for alias in wordy + terse:
            judge(bench_with_roster, calls[alias], alias in wordy)

    response = httpx2.get(f"{bench_with_roster.url}/api/reports")
    assert response.status_code == 200
    report = response.json()
    assert (report["object"], report["days"]) == ("reports", 30)
    shown = report["exposure"]
    # Only pair has explorer seats: its members, and the models of their families, cannot explore
    # it (nor `four`, which has none), so they are not starved and take no share.
    assert (shown["explorer_seats"], shown["eligible_models"], shown["fair_share"]) == (6, 5, 0.2)
    rows = [(m["alias"], m["seats"], m["share"], m["eligible"], m["can_explore"], m["member_seats"], m["flagged"])
            for m in shown["models"]]  # fmt: skip
    assert rows == [
        ("fake/deepseek-r1", 1, 0.1667, True, True, 5, False),
        ("fake/gemma-3-27b", 1, 0.1667, True, True, 0, False),
        ("fake/glm-4.5-air", 1, 0.1667, True, True, 5, False),
        ("fake/kimi-k2", 1, 0.1667, False, False, 0, False),  # disabled since: not eligible, not flagged
        ("fake/mistral-small", 1, 0.1667, True, True, 5, False),
        ("fake/phi-4", 1, 0.1667, True, True, 5, False),
        ("fake/llama-3.1-8b", 0, 0.0, True, False, 0, False),
        ("fake/llama-3.3-70b", 0, 0.0, True, False, 3, False),
        ("fake/qwen3-32b", 0, 0.0, True, False, 3, False),
        ("fake/qwen3-coder", 0, 0.0, True, False, 0, False),
    ]
    assert shown["endpoints"] == [
        {"endpoint": "fake", "eligible_models": 5, "seats": 6, "share": 1.0, "fair_share": 1.0, "flagged": False}
    ]
    [general] = report["bench_vs_best"]
    assert general == {
        "shape": "general",
        "judged_panels": 5,
        "any_useful": 5,
        "rate": 1.0,
        "interval": [0.5655, 1.0],
        "best": "fake/deepseek-r1",  # tied with glm-4.5-air on every count: the alias decides, and it is said
        "best_detail": {
            "alias": "fake/deepseek-r1",
            "separated": False,
            "tied": ["fake/glm-4.5-air"],
            "p_best": 0.49875,
        },
        "best_verdicts": 5,
        "best_rate": 1.0,
        "best_interval": [0.5655, 1.0],
        "verdict": "no clear difference",
    }
    assert report["verdicts_by_key"] == {
        "verdicts": 20,
        "callers": 1,
        "keys": [{"key": "local", "verdicts": 20, "share": 1.0}],
        "warnings": [],
    }
    [length] = report["length_bias"]
    assert (length["short"], length["long"], length["difference"], length["z"], length["warning"]) == (
        {"verdicts": 10, "useful": 0, "rate": 0.0},
        {"verdicts": 10, "useful": 10, "rate": 1.0},
        1.0,
        4.472,
        True,
    )
    # The members no longer show as starved (they sat every panel of their collection).
    assert report["warnings"] == [
        "length bias on general: long answers judged useful 100% of the time, short ones 0% (z = 4.47); "
        "judges may be rewarding length",
    ]

    code, out = cli("report", "--json")
    assert code == 0
    assert {k: v for k, v in orjson.loads(out).items() if k != "since"} == {
        k: v for k, v in report.items() if k not in ("since", "object")
    }
    code, out = cli("report")
    assert code == 0, out
    assert "explorer seats, last 30 days · 6 seats, 5 eligible models, fair share 20%" in out
    assert "│ fake/llama-3.3-70b │ fake     │ 0     │ 0%    │ member only │ 3            │      │" in out
    # The best single model is a tie, and the table says so.
    assert "│ fake/deepseek-r1 (P(best) = 0.50; tied with fake/glm-4.5-air) │" in out
    assert out.splitlines()[-1:] == [f"warning: {w}" for w in report["warnings"]]
    bad = httpx2.get(f"{bench_with_roster.url}/api/reports?days=-1")
    assert (bad.status_code, bad.json()["error"]["param"]) == (400, "days")


def test_epsilon_defaults_to_a_fifth_and_sends_explorers_after_the_evidence(bench_with_roster, client):
    assert bench_with_roster.admin(lambda b: b.state.snapshot()).gateway.epsilon == 0.2
    bench_with_roster.bench.panels.rng = random.Random(11)  # the server's chance, injected
    # Ten code panels where every non-llama model sits and only gemma is ever useful.
    others = ["qwen3-32b", "qwen3-coder", "gemma-3-27b", "mistral-small", "deepseek-r1", "phi-4", "glm-4.5-air",
              "kimi-k2"]  # fmt: skip
    collection(bench_with_roster, "wide", others, shape="code", max_explorers=0)
    for _ in range(10):
        for alias, call in seats_by_model(ask(client, "bench/wide")).items():
            judge(bench_with_roster, call, alias == "gemma-3-27b")
    collection(bench_with_roster, "solo", ["llama-3.3-70b"], shape="code", max_explorers=1)

    def explorer() -> str:
        [seat] = [s for s in ask(client, "bench/solo").bench["seats"] if s["seat"] == "explorer"]
        return seat["alias"].removeprefix("fake/")

    # Epsilon 1: every explorer pick is a Thompson draw, so gemma sits again and again although,
    # by staleness alone, a model that just sat goes to the back of the queue.
    bench_with_roster.admin(lambda b: b.gateway_settings.set_gateway(epsilon=1.0, explorer_floor=1.0))
    assert [explorer() for _ in range(3)] == ["gemma-3-27b"] * 3
    bench_with_roster.admin(lambda b: b.gateway_settings.set_gateway(epsilon=0.0, explorer_floor=1.0))
    assert explorer() != "gemma-3-27b"


def test_evidence_api_needs_the_admin_token_when_one_is_set(tmp_path):
    server = BenchServer(tmp_path / "home", admin_token="admin-token-for-tests-0001").start()
    try:
        for path in ("/api/leaderboard", "/api/reports"):
            refused = httpx2.get(f"{server.url}{path}")
            assert refused.status_code == 401, path
            assert refused.json()["error"]["type"] == "authentication_error"
            allowed = httpx2.get(f"{server.url}{path}", headers={"authorization": "Bearer admin-token-for-tests-0001"})
            assert allowed.status_code == 200, path
    finally:
        server.stop()


def test_the_leaderboard_page_says_the_routers_pick_is_a_tie(bench_with_roster, judged_trio, cli):
    page = httpx2.get(f"{bench_with_roster.url}/leaderboard").text
    assert (
        'Router\'s pick: <strong class="mono">fake/llama-3.3-70b</strong> <span class="muted" data-tie>'
        "· tied with fake/gemma-3-27b, fake/qwen3-32b (intervals overlap)</span>"
    ) in page
    # Pinned, it says so instead.
    assert cli("role", "set", "primary", "review", "fake/qwen3-32b")[0] == 0
    page = httpx2.get(f"{bench_with_roster.url}/leaderboard").text
    assert 'Router\'s pick: <strong class="mono">fake/qwen3-32b</strong> <span class="muted">(pinned)</span>' in page
    code, out = cli("leaderboard", "--shape", "review")
    assert code == 0 and "best for review: fake/qwen3-32b (pinned)\n" in out
