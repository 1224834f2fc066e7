"""`benchwarmers suite run` end to end: scripted reviewers on the fake provider, real panels,
exact grades, every pair outcome, suite verdicts in the leaderboard, and a person's verdict winning."""

from __future__ import annotations

import os

import orjson

from benchwarmers.bench.suite.claims import definitions
from tests.support.benchserver import listed
from tests.support.suite_fixtures import PAIRS, REVIEWERS, cli, report_json, run


def test_scripted_reviewers_get_exact_grades_and_every_pair_outcome(reviewers_bench):
    _settings, fake = reviewers_bench
    code, out = cli("suite", "run", "--collection", "bench/reviewers", "--tasks", "rebench-*")
    assert code == 0, out
    assert len(fake.chat_requests) == 10 * 4  # ten tasks, four seats, no explorer, nothing repeated
    report = report_json()
    assert report["units"] == {"planned": 10, "done": 10}
    models = {m["alias"]: m for m in report["models"]}
    finder, flag_all, flag_none, wrong = (models[f"fake/{m}"] for m in REVIEWERS)

    assert (finder["hits"], finder["found"], finder["correct"], finder["pairs"]) == (5, 5, 5, 5)
    assert (finder["false_per_answer"], finder["pair_correct_rate"], finder["hit_rate"]) == (0.0, 1.0, 1.0)
    # Flagging every function finds every bug too: hit rate alone would rank it first.
    assert (flag_all["hits"], flag_all["both_flagged"], flag_all["correct"], flag_all["pair_correct_rate"]) == (
        5,
        5,
        0,
        0.0,
    )
    # One claim per function shown: 64 on ten answers. Six hit: the five bugs' own functions, and on
    # scrapy the pause() claim at line 180, whose words name close() within three lines of 177.
    assert sum(len(definitions(t.files)) for t in PAIRS) == 64
    assert flag_all["false_per_answer"] == 5.8
    assert (flag_none["hits"], flag_none["neither"], flag_none["false_per_answer"]) == (0, 5, 0.0)
    assert (wrong["hits"], wrong["reversed"], wrong["false_per_answer"]) == (0, 5, 1.0)
    assert next(m["alias"] for m in report["models"]) == "fake/finder"  # pair-correct first
    assert finder["hit_interval"] == [0.566, 1.0]  # Wilson 95% for 5 of 5

    scrapy = next(t for t in report["tasks"] if t["task"] == "rebench-scrapy-6867-bug")
    seat = next(s for s in scrapy["seats"] if s["alias"] == "fake/finder")
    assert seat["answer"].startswith("Found one defect:\n\n- `scrapy/core/engine.py:177`")
    assert (seat["hit"], seat["false"], seat["useful"]) == (True, [], True)


def test_suite_verdicts_count_with_their_source_and_a_person_replaces_them(reviewers_bench):
    settings, _fake = reviewers_bench
    code, out = cli("suite", "run", "--collection", "bench/reviewers", "--tasks", "rebench-scrapy-*")
    assert code == 0, out
    code, out = cli("leaderboard", "--shape", "review", "--json")
    assert code == 0, out
    board = {row["alias"]: row for row in orjson.loads(out)[0]["models"]}
    assert board["fake/finder"]["sources"] == {"suite": 2}
    assert (board["fake/finder"]["useful"], board["fake/finder"]["verdicts"]) == (2, 2)
    assert (board["fake/flag-all"]["useful"], board["fake/flag-all"]["verdicts"]) == (0, 2)

    # A person says the finder's answer to the bug task was not useful: their verdict wins.
    call = next(
        s["call"]
        for t in report_json()["tasks"]
        if t["task"] == "rebench-scrapy-6867-bug"
        for s in t["seats"]
        if s["alias"] == "fake/finder"
    )
    code, out = cli("verdict", call, "--not-useful", "--note", "the line is right, the fix is not")
    assert code == 0, out
    code, out = cli("leaderboard", "--shape", "review", "--json")
    board = {row["alias"]: row for row in orjson.loads(out)[0]["models"]}
    assert board["fake/finder"]["sources"] == {"human": 1, "suite": 1}
    assert (board["fake/finder"]["useful"], board["fake/finder"]["verdicts"]) == (1, 2)
    code, out = cli("leaderboard", "--shape", "review", "--human-only", "--json")
    board = {row["alias"]: row for row in orjson.loads(out)[0]["models"]}
    assert (board["fake/finder"]["useful"], board["fake/finder"]["verdicts"]) == (0, 1)
    # The only model people judged has nothing to be ranked against: no rank 1 for a 0/1.
    assert {alias: (m["rank"], m["rank_range"]) for alias, m in board.items()} == {
        alias: (None, None) for alias in board
    }
    code, out = cli("leaderboard", "--shape", "review", "--human-only")
    finder = next(line for line in out.splitlines() if "fake/finder" in line)
    assert finder.split("│")[1].strip() == "–", finder

    # Running the suite again does not overwrite the person's verdict on that call.
    history = run(settings, lambda bench: bench.log.verdict_history(call))
    assert [(v["source"], v["useful"], v["current"]) for v in history] == [
        ("suite", True, False),
        ("human", False, True),
    ]


def test_dry_run_prints_the_plan_under_known_limits(reviewers_bench):
    settings, fake = reviewers_bench
    run(settings, lambda bench: bench.models.set_model("fake/finder", limits={"requests-minute": 4}))
    code, out = cli("suite", "run", "--collection", "bench/reviewers", "--tasks", "rebench-*", "--dry-run")
    assert code == 0, out
    assert fake.chat_requests == []
    assert out.splitlines()[0] == "10 task(s), 10 panel(s)"
    finder = next(line for line in out.splitlines() if "fake/finder" in line)
    assert "4 requests a minute" in finder and "2 min" in finder  # 10 calls at 4 a minute: 3 windows


def test_the_model_option_asks_each_model_alone(reviewers_bench):
    settings, fake = reviewers_bench
    code, out = cli(
        "suite", "run", "--model", "fake/finder", "--model", "fake/flag-none", "--tasks", "rebench-matchms-*"
    )
    assert code == 0, out
    assert sorted(r.json["model"] for r in fake.chat_requests) == ["finder", "finder", "flag-none", "flag-none"]
    models = {m["alias"]: m for m in report_json()["models"]}
    assert (models["fake/finder"]["correct"], models["fake/flag-none"]["neither"]) == (1, 1)
    assert os.environ["BENCHWARMERS_HOME"] == str(settings.home)


def test_a_judge_decides_the_mechanism_and_its_agreement_is_reported(reviewers_bench):
    settings, fake = reviewers_bench
    fake.script("judge", reply="No.")  # the judge disagrees with the patterns on every claim
    fake.listing("/v1/models", {"object": "list", "data": [listed(m, 128_000) for m in [*REVIEWERS, "judge"]]})
    run(settings, lambda bench: bench.endpoints.refresh_endpoint("fake"))
    code, out = cli(
        "suite", "run", "--model", "fake/finder", "--judge", "fake/judge", "--tasks", "rebench-scrapy-6867-bug"
    )
    assert code == 0, out
    judged = [r.json for r in fake.chat_requests if r.json["model"] == "judge"]
    assert (
        len(judged) == 1
        and "Known defect: close() calls self.downloader.close()" in judged[0]["messages"][0]["content"]
    )
    report = report_json()
    assert report["judge_agreement"] == 0.0
    [seat] = report["tasks"][0]["seats"]
    assert (seat["hit"], seat["located"], seat["useful"]) == (False, [seat["answer"].split("- ")[1].strip()], False)
    panels = run(settings, lambda bench: bench.log.panels(limit=10))
    assert [[s["alias"] for s in p["seats"]] for p in panels] == [["fake/finder"]]  # the judge sat no seat
