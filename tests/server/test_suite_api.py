"""The Suite page's JSON API over real HTTP, on a run of the four scripted reviewers: the runs, a run's
report (`latest` too), a task's code and key, 404s in the one error body, and the admin guard."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest

from benchwarmers.bench.suite.tasks import load_tasks
from tests.support.benchserver import BenchServer
from tests.support.suite_fixtures import cli, report_json

TOKEN = "admin-token-for-suite-api-tests-7c3d"
BEARER = {"authorization": f"Bearer {TOKEN}"}
BUG, CONTROL = "rebench-scrapy-6867-bug", "rebench-scrapy-6867-control"
MECHANISM = (
    "close() calls self.downloader.close() unconditionally, but ExecutionEngine.__init__ calls close() from its "
    "except block before self.downloader may have been assigned, so an AttributeError replaces the original "
    "construction error."
)
PLAN = {"tasks": [BUG, CONTROL], "repeat": 1, "collection": "reviewers", "models": [], "judge": None, "folders": []}
# Every figure of a model's row but its median seconds (a timing).
FIELDS = ("alias", "seats", "answers", "errors", "found", "hits", "hit_rate", "hit_interval", "pairs", "correct",
          "both_flagged", "neither", "reversed", "pair_correct_rate", "false_per_answer", "tokens", "rate_limited",
          "judged", "judge_agreed", "skipped", "skipped_by")  # fmt: skip
MODELS = [
    ("fake/finder", 2, 2, 0, 1, 1, 1.0, [0.207, 1.0], 1, 1, 0, 0, 0, 1.0, 0.0, 1545, 0, 0, 0, 0, {}),
    ("fake/flag-all", 2, 2, 0, 1, 1, 1.0, [0.207, 1.0], 1, 0, 1, 0, 0, 0.0, 5.0, 2292, 0, 0, 0, 0, {}),
    ("fake/flag-none", 2, 2, 0, 1, 0, 0.0, [0.0, 0.793], 1, 0, 0, 1, 0, 0.0, 0.0, 1470, 0, 0, 0, 0, {}),
    ("fake/wrong-line", 2, 2, 0, 1, 0, 0.0, [0.0, 0.793], 1, 0, 0, 0, 1, 0.0, 1.0, 1590, 0, 0, 0, 0, {}),
]
# Per task, each seat: alias, status, hit, flagged, the suite's verdict (None: none), and how many claims
# hit, were located, were false. A control left alone beside a missed bug earns no verdict.
GRADES = {
    BUG: [
        ("fake/finder", "ok", True, False, True, 1, 0, 0),
        ("fake/flag-all", "ok", True, False, False, 2, 0, 4),
        ("fake/flag-none", "ok", False, False, False, 0, 0, 0),
        ("fake/wrong-line", "ok", False, False, False, 0, 0, 1),
    ],
    CONTROL: [
        ("fake/finder", "ok", False, False, True, 0, 0, 0),
        ("fake/flag-all", "ok", False, True, False, 0, 0, 6),
        ("fake/flag-none", "ok", False, False, None, 0, 0, 0),
        ("fake/wrong-line", "ok", False, True, False, 0, 0, 1),
    ],
}
ADMIN_NEEDED = {
    "error": {
        "message": "the dashboard API needs the admin token: log in at /login, or send "
        "Authorization: Bearer <BENCHWARMERS_ADMIN_TOKEN>",
        "type": "authentication_error",
        "param": None,
        "code": "admin_token_required",
    }
}


def not_found(message: str) -> dict:
    return {"error": {"message": message, "type": "invalid_request_error", "param": None, "code": "not_found"}}


@pytest.fixture
def scrapy_run(reviewers_bench) -> Iterator[tuple[BenchServer, str]]:
    """The scrapy pair through `bench/reviewers`, and a bench with an admin token serving its home."""
    settings, _fake = reviewers_bench
    code, out = cli("suite", "run", "--collection", "bench/reviewers", "--tasks", "rebench-scrapy-*")
    assert code == 0, out
    server = BenchServer(settings.home, admin_token=TOKEN).start()
    try:
        yield server, report_json()["run"]
    finally:
        server.stop()


def get(server: BenchServer, path: str) -> httpx2.Response:
    return httpx2.get(f"{server.url}{path}", headers=BEARER)


def test_the_runs_a_report_and_a_tasks_code_with_its_key(scrapy_run):
    server, run_id = scrapy_run
    report = report_json(run_id)

    runs = get(server, "/api/suite/runs")
    assert runs.status_code == 200
    assert runs.json() == {
        "object": "list",
        "data": [
            {
                "id": run_id,
                "target": "bench/reviewers",
                "created_at": report["created_at"],
                "finished_at": report["finished_at"],
                "plan": PLAN,
                "units": {"planned": 2, "done": 2},
                "results": 8,
            }
        ],
    }

    body = get(server, f"/api/suite/runs/{run_id}").json()
    assert body == {"object": "suite.report", **report}  # what `suite report --json` says
    assert get(server, "/api/suite/runs/latest").json() == body
    assert (body["run"], body["target"], body["plan"], body["units"]) == (
        run_id,
        "bench/reviewers",
        PLAN,
        {"planned": 2, "done": 2},
    )
    assert body["judge_agreement"] is None
    assert [[m[f] for f in FIELDS] for m in body["models"]] == [list(row) for row in MODELS]
    assert all(set(m) == {*FIELDS, "median_seconds", "pair_interval"} for m in body["models"])
    # The pair-correct rate's 95% Wilson interval, rounded as the hit rate's: one pair each here.
    assert [m["pair_interval"] for m in body["models"]] == [[0.207, 1.0], [0.0, 0.793], [0.0, 0.793], [0.0, 0.793]]
    assert [t["task"] for t in body["tasks"]] == [BUG, CONTROL]
    bug, control = body["tasks"]
    assert bug["key"] == {"path": "scrapy/core/engine.py", "function": "ExecutionEngine.close", "lines": [177, 177],
                          "mechanism": MECHANISM}  # fmt: skip
    assert control["key"] == {"path": "scrapy/core/engine.py", "fixed_lines": [177, 178], "pair": BUG}
    for task in body["tasks"]:
        seats = task["seats"]
        graded = [
            (
                s["alias"],
                s["status"],
                s["hit"],
                s["flagged"],
                s["useful"],
                *map(len, (s["hits"], s["located"], s["false"])),
            )
            for s in seats
        ]
        assert graded == GRADES[task["task"]]
        panel = seats[0]["call"].split(".")[0]
        assert [s["call"] for s in seats] == [f"{panel}.member{n}" for n in (1, 2, 3, 4)]
    finder = bug["seats"][0]
    assert finder["answer"] == f"Found one defect:\n\n- `scrapy/core/engine.py:177` — {MECHANISM}\n"
    assert finder["hits"] == [f"`scrapy/core/engine.py:177` — {MECHANISM}"]
    assert control["seats"][3]["false"] == [f"scrapy/core/engine.py:177 — {MECHANISM}"]

    tasks = {t.id: t for t in load_tasks()}
    for task_id, key, commit, end in (
        (BUG, bug["key"], "d602f13e8cd22154936ded9c9356e28fe3be4cd4", 203),
        (CONTROL, control["key"], "657e6cb2b57d52005740e92543c1270dbaf61ded", 204),
    ):
        shown = tasks[task_id].files[0]
        expected = {
            "object": "suite.task",
            "task": task_id,
            "kind": task_id.rsplit("-", 1)[-1],
            "title": f"scrapy/scrapy {'before' if task_id == BUG else 'after'} the fix",
            "shape": "review",
            "key": key,
            "source": {
                "repo": "scrapy/scrapy",
                "license": "BSD-3-Clause",
                "url": "https://github.com/scrapy/scrapy/pull/6867",
                "commit": commit,
                "attribution": "scrapy/scrapy, BSD-3-Clause (see NOTICE)",
            },
            "files": [{"path": "scrapy/core/engine.py", "start": 141, "end": end, "text": shown.text}],
        }
        for query in ("", "?run=", f"?run={run_id}", "?run=latest"):  # the shipped tasks, or the run's
            found = get(server, f"/api/suite/tasks/{task_id}{query}")
            assert (found.status_code, found.json()) == (200, expected)
    assert shown.text.splitlines()[177 - 141].strip() == 'if hasattr(self, "downloader"):'  # the fix, at 177


def test_unknown_ids_are_404_and_the_routes_need_the_admin_token(scrapy_run):
    server, run_id = scrapy_run
    login = httpx2.post(f"{server.url}/login", data={"token": TOKEN, "next": "/suite"})
    session = {"bw_session": login.cookies["bw_session"]}  # the pages take the session, not a bearer
    for path, message in (
        ("/api/suite/runs/r-nope", "no suite run 'r-nope'"),
        ("/api/suite/tasks/claim-nope", "no task 'claim-nope' in the shipped tasks; `benchwarmers suite list` "
         "shows them"),
        (f"/api/suite/tasks/claim-nope?run={run_id}", f"no task 'claim-nope' in run {run_id}'s tasks; "
         "`benchwarmers suite list` shows them"),
        (f"/api/suite/tasks/{BUG}?run=r-nope", "no suite run 'r-nope'"),
        (f"/suite?run={run_id}&task=claim-nope", f"run {run_id} has no results for task 'claim-nope'; pick one of "
         "its tasks"),
    ):  # fmt: skip
        missing = httpx2.get(f"{server.url}{path}", headers=BEARER, cookies=session)
        assert (missing.status_code, missing.json()) == (404, not_found(message)), path
    for path in ("/api/suite/runs", f"/api/suite/runs/{run_id}", "/api/suite/runs/latest", f"/api/suite/tasks/{BUG}"):
        refused = httpx2.get(f"{server.url}{path}")
        assert (refused.status_code, refused.json()) == (401, ADMIN_NEEDED), path
        assert get(server, path).status_code == 200, path


def test_a_bench_without_runs_says_how_to_start_one(tmp_path: Path):
    server = BenchServer(tmp_path / "home").start()
    try:
        assert httpx2.get(f"{server.url}/api/suite/runs").json() == {"object": "list", "data": []}
        latest = httpx2.get(f"{server.url}/api/suite/runs/latest")
        assert (latest.status_code, latest.json()) == (404, not_found("no suite run yet: `benchwarmers suite run`"))
        for path in ("/suite", "/suite?run=&task="):  # left empty, as a form sends them: as if left out
            page = httpx2.get(f"{server.url}{path}")
            assert page.status_code == 200
            assert "No suite run yet." in page.text and 'aria-current="page">Suite</a>' in page.text
        too_long = httpx2.get(f"{server.url}/api/suite/tasks/x?run={'r' * 41}")
        assert (too_long.status_code, too_long.json()["error"]["param"]) == (400, "run")
    finally:
        server.stop()
