"""A suite run survives `kill -9`: resumed, it repeats no finished call and loses no stored result."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import orjson
import pytest

from benchwarmers.bench.suite.run import Unit
from tests.support.suite_fixtures import PAIRS, cli, report_json, reviewers_on_fake, run

CLI = [sys.executable, "-c", "from benchwarmers.cli.app import main; main()"]


def stored(home: Path) -> list[tuple]:
    with sqlite3.connect(f"file:{home / 'bench.db'}?mode=ro", uri=True) as db:
        return db.execute("SELECT id, task, attempt, alias, call FROM suite_results ORDER BY id").fetchall()


def prompts_of(requests) -> list[tuple[str, str]]:
    return [(r.json["model"], r.json["messages"][0]["content"]) for r in requests]


@pytest.fixture
def slow_reviewers(home: Path):
    """Each reviewer takes 0.2 s to answer: a run is long enough to be killed."""
    yield from reviewers_on_fake(home, latency=0.2)


def units_stored(home: Path) -> int:
    return len({row[1:3] for row in stored(home)}) if (home / "bench.db").exists() else 0


def test_kill_9_then_resume_repeats_no_finished_call(slow_reviewers):
    settings, fake = slow_reviewers
    process = subprocess.Popen(
        [*CLI, "suite", "run", "--collection", "bench/reviewers", "--tasks", "rebench-*"],
        env={**os.environ, "BENCHWARMERS_HOME": str(settings.home)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while units_stored(settings.home) < 3:
        assert process.poll() is None, "the run ended before it could be killed"
        assert time.monotonic() < deadline, "no results stored in time"
        time.sleep(0.05)
    process.send_signal(signal.SIGKILL)
    process.wait()
    before = stored(settings.home)
    finished = {(alias.removeprefix("fake/"), task) for _id, task, _attempt, alias, _call in before}
    asked_before = len(fake.chat_requests)
    prompts = {t.id: t.prompt() for t in PAIRS}

    code, out = cli("suite", "run", "--resume", "last")
    assert code == 0, out
    after = stored(settings.home)
    assert after[: len(before)] == before  # nothing stored was lost or rewritten
    assert len(after) == 10 * 4 and len({row[1:4] for row in after}) == 40  # every seat once
    asked_again = prompts_of(fake.chat_requests[asked_before:])
    repeated = [(model, task) for model, task in finished if (model, prompts[task]) in asked_again]
    assert repeated == []
    assert report_json()["units"] == {"planned": 10, "done": 10}


def test_a_panel_recorded_before_its_results_is_graded_without_a_call(reviewers_bench):
    settings, fake = reviewers_bench
    tasks = [t for t in PAIRS if t.id.startswith("rebench-matchms")]

    async def interrupted(bench):
        run_id = await bench.suite.create(tasks, collection="bench/reviewers", models=[])
        plan = (await bench.suite.get(run_id))["plan"]
        unit = Unit(tasks[0].id, 1)
        # The panel runs and is recorded; the process dies before the results are stored.
        await bench.suite._ask(plan, unit, tasks[0], unit.key(run_id))
        return run_id

    run_id = run(settings, interrupted)
    assert len(fake.chat_requests) == 4
    code, out = cli("suite", "run", "--resume", run_id)
    assert code == 0, out
    assert len(fake.chat_requests) == 8  # only the second task was asked
    report = report_json(run_id)
    assert report["units"] == {"planned": 2, "done": 2}
    assert {m["alias"]: m["correct"] for m in report["models"]}["fake/finder"] == 1
    assert orjson.loads(orjson.dumps(report))["tasks"][0]["seats"][0]["call"].startswith("p")
