"""Control tasks count only as part of their pair: scripted reviewers show that neither silence
("No defects found." to everything) nor flagging everything earns a useful suite verdict."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import orjson

from tests.support.suite_fixtures import REVIEWERS, cli


def verdicts(home: Path) -> dict[tuple[str, str], tuple[int, int]]:
    """(model, bug | control) → (useful, not useful) current suite verdicts."""
    with sqlite3.connect(f"file:{home / 'bench.db'}?mode=ro", uri=True) as db:
        found = db.execute(
            "SELECT r.alias, substr(r.task, -7) = 'control', v.useful FROM verdicts v "
            "JOIN suite_results r ON r.call = v.call WHERE v.source = 'suite' AND v.current"
        ).fetchall()
    counts: dict[tuple[str, str], tuple[int, int]] = {
        (f"fake/{m}", kind): (0, 0) for m in REVIEWERS for kind in ("bug", "control")
    }
    for alias, control, useful in found:
        good, bad = counts[(alias, "control" if control else "bug")]
        counts[(alias, "control" if control else "bug")] = (good + useful, bad + (not useful))
    return counts


def test_silence_and_flagging_everything_earn_no_useful_verdict(reviewers_bench):
    settings, _fake = reviewers_bench
    code, out = cli("suite", "run", "--collection", "bench/reviewers", "--tasks", "rebench-*")
    assert code == 0, out
    assert verdicts(settings.home) == {
        ("fake/finder", "bug"): (5, 0),
        ("fake/finder", "control"): (5, 0),  # left alone after finding the bug: evidence
        # "No defects found." to every task: five missed bugs, and its silence on controls counts for nothing.
        ("fake/flag-none", "bug"): (0, 5),
        ("fake/flag-none", "control"): (0, 0),
        # Flagging every function: a flagged control, and no bug found that way counts as useful.
        ("fake/flag-all", "bug"): (0, 5),
        ("fake/flag-all", "control"): (0, 5),
        ("fake/wrong-line", "bug"): (0, 5),
        ("fake/wrong-line", "control"): (0, 5),
    }
    # On quantecon flagging every function made one false claim beside the find: useful on its own,
    # until its control was flagged too, and the verdict was withdrawn.
    with sqlite3.connect(f"file:{settings.home / 'bench.db'}?mode=ro", uri=True) as db:
        history = db.execute(
            "SELECT v.useful, v.current FROM verdicts v JOIN suite_results r ON r.call = v.call "
            "WHERE r.alias = 'fake/flag-all' AND r.task = 'rebench-quantecon.py-769-bug' ORDER BY v.id"
        ).fetchall()
    assert history == [(1, 0), (0, 1)]
    code, out = cli("leaderboard", "--shape", "review", "--json")
    assert code == 0, out
    board = {row["alias"]: row for row in orjson.loads(out)[0]["models"]}
    assert [(board[f"fake/{m}"]["useful"], board[f"fake/{m}"]["verdicts"]) for m in REVIEWERS] == [
        (10, 10),
        (0, 10),
        (0, 5),
        (0, 10),
    ]


def test_a_control_without_its_bug_in_the_run_earns_no_verdict(reviewers_bench):
    settings, _fake = reviewers_bench
    code, out = cli("suite", "run", "--collection", "bench/reviewers", "--tasks", "rebench-*-control")
    assert code == 0, out
    counts = verdicts(settings.home)
    assert {alias: counts[(alias, "control")] for alias in (f"fake/{m}" for m in REVIEWERS)} == {
        "fake/finder": (0, 0),
        "fake/flag-none": (0, 0),
        "fake/flag-all": (0, 5),  # a flagged control is wrong whatever its twin
        "fake/wrong-line": (0, 5),
    }
