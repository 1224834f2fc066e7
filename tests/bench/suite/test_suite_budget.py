"""The suite's own daily budget (the gateway setting `suite_daily_panels`): a run that reaches it stops
cleanly before its next panel, no model called for it, and resumes where it stopped."""

from __future__ import annotations

from tests.support.suite_fixtures import cli, report_json, reviewers_bench  # noqa: F401  (fixtures)


def test_a_run_stops_at_the_suites_budget_and_resumes(reviewers_bench):  # noqa: F811
    _settings, fake = reviewers_bench
    assert cli("gateway", "set", "--suite-daily-panels", "3")[0] == 0
    code, out = cli("suite", "run", "--collection", "bench/reviewers", "--tasks", "rebench-*")
    assert code == 0, out
    run = report_json()
    assert run["units"] == {"planned": 10, "done": 3}
    assert len(fake.chat_requests) == 3 * 4  # three panels of four members; the fourth never called
    assert f"run {run['run']} stopped: the daily budget of the suite is spent: 3 of its 3 panels today." in out
    assert "`benchwarmers gateway set --suite-daily-panels N`." in out
    assert f"resume it with `benchwarmers suite run --resume {run['run']}`" in out
    # The budget raised (0: none), the run resumes at its fourth unit and finishes.
    assert cli("gateway", "set", "--suite-daily-panels", "0")[0] == 0
    code, out = cli("suite", "run", "--resume", run["run"])
    assert code == 0, out
    assert report_json()["units"] == {"planned": 10, "done": 10}
    assert len(fake.chat_requests) == 10 * 4
