"""A task a member cannot take is skipped for that member, with its reason, and the run goes on:
a window known from the model override, one learned from a local server's real context error (in
llama.cpp's words and in llama-cpp-python's), resumed runs, and the report counting skips apart."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from benchwarmers.bench.suite.run import prompt_estimate
from benchwarmers.settings import Settings
from tests.fakes import reviewers
from tests.fakes.upstream import FakeUpstream
from tests.support.benchserver import listed
from tests.support.suite_fixtures import PAIRS, cli, report_json, run

TOO_LARGE = sorted(t.id for t in PAIRS if prompt_estimate(t).default.tokens > 2048)


def rows(home: Path) -> list[tuple]:
    with sqlite3.connect(f"file:{home / 'bench.db'}?mode=ro", uri=True) as db:
        return db.execute(
            "SELECT task, alias, status, skipped, call FROM suite_results WHERE skipped IS NOT NULL ORDER BY id"
        ).fetchall()


def suite_verdicts(home: Path) -> int:
    with sqlite3.connect(f"file:{home / 'bench.db'}?mode=ro", uri=True) as db:
        return db.execute("SELECT count(*) FROM verdicts WHERE source = 'suite'").fetchone()[0]


def test_a_member_with_a_2048_token_window_is_skipped_where_it_cannot_take_a_task(reviewers_bench):
    settings, fake = reviewers_bench
    # By the default code estimate the matchms and quantecon pairs are larger than 2,048 tokens (the
    # real tokenizer counts 2,764 and 2,575). The fake counts 4 characters a token, and the finder
    # learns that from its answers to the tasks before quantecon's (7,207 characters: 1,892 tokens
    # by the learned 4.0 + 5%): only matchms (8,528 characters: 2,239) is skipped.
    assert TOO_LARGE == [
        "rebench-matchms-809-bug",
        "rebench-matchms-809-control",
        "rebench-quantecon.py-769-bug",
        "rebench-quantecon.py-769-control",
    ]
    code, out = cli("model", "set", "fake/finder", "--context", "2048")
    assert code == 0, out

    code, out = cli("suite", "run", "--collection", "bench/reviewers", "--tasks", "rebench-*")
    assert code == 0, out
    assert "2 skipped (too large for the model)" in out
    # The finder was not asked the two tasks; the other three were asked all ten.
    asked = [r.json["model"] for r in fake.chat_requests]
    assert (asked.count("finder"), asked.count("flag-all"), len(asked)) == (8, 10, 38)
    assert all(r.json["max_tokens"] == 768 for r in fake.chat_requests)  # bug and control tasks' budget

    report = report_json()
    assert (report["units"], report["skipped"]) == ({"planned": 10, "done": 10}, 2)
    models = {m["alias"]: m for m in report["models"]}
    finder = models["fake/finder"]
    assert (finder["skipped"], finder["skipped_by"], finder["seats"], finder["errors"]) == (2, {"window": 2}, 8, 0)
    assert (finder["correct"], finder["pairs"]) == (4, 4)  # a skip is not a miss
    assert (models["fake/flag-all"]["skipped"], models["fake/flag-all"]["seats"]) == (0, 10)
    assert rows(settings.home) == [
        ("rebench-matchms-809-bug", "fake/finder", "skipped", "window", ""),
        ("rebench-matchms-809-control", "fake/finder", "skipped", "window", ""),
    ]
    verdicts = suite_verdicts(settings.home)

    # The finished run resumed: nothing asked again, nothing judged twice.
    code, out = cli("suite", "run", "--resume", "last")
    assert code == 0, out
    assert len(fake.chat_requests) == 38
    assert suite_verdicts(settings.home) == verdicts

    code, out = cli("suite", "report")
    assert code == 0, out
    header = next(line for line in out.splitlines() if "pairs correct" in line)
    assert header.split("┃")[-2].strip() == "skipped"
    line = next(line for line in out.splitlines() if "fake/finder" in line)
    assert line.split("│")[-2].strip() == "2 (window 2)"
    code, out = cli("suite", "report", "--task", "rebench-matchms-809-bug")
    assert "fake/finder #1 : skipped (window)" in out


def test_a_run_with_every_member_too_small_finishes_with_every_unit_skipped(reviewers_bench):
    settings, fake = reviewers_bench
    for model in reviewers.REVIEWERS:
        run(settings, lambda bench, m=model: bench.models.set_model(f"fake/{m}", context=2048))
    code, out = cli("suite", "run", "--collection", "bench/reviewers", "--tasks", "rebench-matchms-*")
    assert code == 0, out
    assert fake.chat_requests == []
    report = report_json()
    assert (report["units"], report["skipped"]) == ({"planned": 2, "done": 2}, 8)
    assert {m["alias"]: m["skipped_by"] for m in report["models"]} == {
        f"fake/{m}": {"window": 2} for m in reviewers.REVIEWERS
    }
    assert suite_verdicts(settings.home) == 0


@pytest.fixture(params=["llama.cpp", "llama-cpp-python"])
def local_server(request, home: Path):
    """One finder behind a local server with a 2,048-token window its listing does not state."""
    with FakeUpstream() as fake:
        fake.script("small", respond=reviewers.finder(PAIRS), window=2048, window_error=request.param)
        fake.listing("/v1/models", {"object": "list", "data": [listed("small", None)]})
        settings = Settings(home=home)

        async def setup(bench) -> None:
            await bench.endpoints.add_endpoint("fake", fake.base_url, "openrouter", api_key="sk-fake-1", free_tier=True)
            await bench.endpoints.refresh_endpoint("fake")

        run(settings, setup)
        yield settings, fake


def test_the_local_servers_context_error_is_a_skip_and_teaches_the_window(local_server):
    settings, fake = local_server
    code, out = cli("suite", "run", "--model", "fake/small", "--tasks", "rebench-*")
    assert code == 0, out
    # The first matchms prompt reached the server and was refused; the window it stated was learned,
    # so its control was not sent at all.
    sent = [r.json["messages"][0]["content"] for r in fake.chat_requests]
    prompts = {t.id: t.prompt() for t in PAIRS}
    assert len(sent) == 9 and prompts["rebench-matchms-809-control"] not in sent
    code, out = cli("model", "list", "--json")
    assert code == 0, out
    report = report_json()
    assert report["units"] == {"planned": 10, "done": 10}
    small = report["models"][0]
    assert (small["skipped_by"], small["errors"], small["correct"], small["pairs"]) == (
        {"context": 1, "window": 1},
        0,
        4,
        4,
    )
    skipped = rows(settings.home)
    assert [(task, status, why) for task, _alias, status, why, _call in skipped] == [
        ("rebench-matchms-809-bug", "skipped", "context"),
        ("rebench-matchms-809-control", "skipped", "window"),
    ]
    assert skipped[0][4].startswith("p")  # the refused call keeps its call id; the skipped one has none
    assert skipped[1][4] == ""
