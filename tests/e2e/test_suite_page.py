"""The Suite page in a real browser (Debian's chromium, the dashboard tests' fixtures): the runs, the
per-model table with the scripted reviewers' exact figures, and a task opened: its code with the key's
line marked beside the four seats' answers, on a desktop and on a 390 px wide phone, in each theme; and
a model's markup in an answer shown as text."""

from __future__ import annotations

import re
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from benchwarmers.dashboard import THEMES
from tests.e2e import test_dashboard_browser as dashboard
from tests.support.benchserver import BenchServer
from tests.support.suite_fixtures import cli, report_json, reviewers_on_fake

pytestmark = pytest.mark.browser

browser = dashboard.browser  # the same fixtures as the other dashboard pages: one chromium here
page = dashboard.page
BUG = "rebench-scrapy-6867-bug"
# The per-model table as the page shows it: best pair-correct first. Median seconds are a timing: not here.
# The pair's other outcomes tell the reviewer that flags everything (both flagged) from the one that flags
# nothing (neither) and the one that flags only the fix (reversed).
TABLE = [
    ("fake/finder", "100% (1 of 1)", "0", "0", "0", "100% (1 of 1) 21%–100%", "0.00", "1,545", "0", "0"),
    ("fake/flag-all", "0% (0 of 1)", "1", "0", "0", "100% (1 of 1) 21%–100%", "5.00", "2,292", "0", "0"),
    ("fake/flag-none", "0% (0 of 1)", "0", "1", "0", "0% (0 of 1) 0%–79%", "0.00", "1,470", "0", "0"),
    ("fake/wrong-line", "0% (0 of 1)", "0", "0", "1", "0% (0 of 1) 0%–79%", "1.00", "1,590", "0", "0"),
]
CELLS = ("pairs", "both-flagged", "neither", "reversed", "hits", "false", "tokens", "rate-limited", "errors")
PHONE = {"width": 390, "height": 844}


@pytest.fixture
def scrapy_run(home: Path) -> Iterator[tuple[BenchServer, dict[str, Any], str]]:
    """The scrapy pair through `bench/reviewers` (the scripted reviewers); then, a newer run, the bug task
    asked of `fake/flag-none` alone, answering with markup; and a bench serving that home.

    Set-up runs in a thread of its own: Playwright's sync API holds this thread's event loop."""
    with ThreadPoolExecutor(1) as apart:
        made = reviewers_on_fake(home)
        settings, fake = apart.submit(next, made).result()
        code, out = apart.submit(
            cli, "suite", "run", "--collection", "bench/reviewers", "--tasks", "rebench-scrapy-*"
        ).result()
        assert code == 0, out
        report = apart.submit(report_json).result()
        fake.script("flag-none", reply=dashboard.HOSTILE)
        code, out = apart.submit(cli, "suite", "run", "--model", "fake/flag-none", "--tasks", BUG).result()
        assert code == 0, out
        hostile = apart.submit(report_json).result()["run"]
        server = BenchServer(settings.home).start()
        try:
            yield server, report, hostile
        finally:
            server.stop()
            apart.submit(made.close).result()


def fits(tab) -> bool:
    """Nothing wider than the viewport: no sideways scrolling."""
    return tab.evaluate("document.documentElement.scrollWidth <= window.innerWidth")


def test_the_suite_page_shows_the_table_and_a_tasks_answers_beside_its_code(scrapy_run, page):
    from playwright.sync_api import expect

    server, report, hostile = scrapy_run
    page.goto(server.url)
    page.click('nav a[href="/suite"]')
    expect(page.locator('nav a[aria-current="page"]')).to_have_text("Suite")
    runs = page.locator("#suite-runs tbody tr")
    expect(runs).to_have_count(2)
    expect(runs.first).to_have_attribute("data-run", hostile)  # newest first, and shown
    expect(page.locator("#report-title")).to_have_text(f"Run {hostile}")
    page.click(f'#suite-runs a:text-is("{report["run"]}")')
    run = page.locator(f'#suite-runs tr[data-run="{report["run"]}"]')
    expect(run).to_have_attribute("aria-current", "true")
    expect(run).to_contain_text("bench/reviewers")
    expect(run.locator("td.num")).to_have_text("2 of 2")
    expect(run).to_contain_text("finished")
    expect(page.locator(".headline")).to_contain_text("Pair-correct is the headline")
    rows = page.locator("#suite-models tbody tr")
    expect(rows).to_have_count(4)
    for i, (alias, *cells) in enumerate(TABLE):
        row = rows.nth(i)
        expect(row.locator("th")).to_have_text(alias)
        for name, text in zip(CELLS, cells, strict=True):
            cell = row.locator(f'[data-cell="{name}"]')
            expect(cell).to_have_text(text)
            assert cell.evaluate("el => getComputedStyle(el).textAlign") == "right"
    dashboard.shot(page, "suite-desktop")

    page.click(f'#suite-tasks a:text-is("{BUG}")')
    expect(page).to_have_url(re.compile(rf"task={BUG}#task$"))
    marked = page.locator("#task-code .line.is-key")
    expect(marked).to_have_count(1)
    expect(marked).to_have_attribute("data-line", "177")
    expect(marked.locator(".ln")).to_have_text("177")
    expect(marked.locator(".src")).to_have_text("        self.downloader.close()")
    expect(page.locator("#task-code .line").first).to_have_attribute("data-line", "141")
    answers = page.locator("#task-answers .seat-answer")
    expect(answers).to_have_count(4)
    seats = next(t for t in report["tasks"] if t["task"] == BUG)["seats"]
    for i, seat in enumerate(seats):
        card = answers.nth(i)
        expect(card.locator(".alias")).to_have_text(seat["alias"])
        expect(card.locator(".call")).to_have_text(seat["call"])
    finder, flag_all, flag_none, wrong_line = (answers.nth(i) for i in range(4))
    expect(finder.locator("[data-grade]")).to_have_text("hit")
    expect(finder.locator(".answer li code")).to_have_text("scrapy/core/engine.py:177")  # markdown, rendered
    expect(flag_all.locator("[data-grade]")).to_have_text("hit")
    expect(flag_all.locator(".claims.is-false li")).to_have_count(4)
    expect(flag_none.locator("[data-grade]")).to_have_text("missed")
    expect(flag_none.locator(".answer")).to_have_text("No defects found.")
    expect(wrong_line.locator("[data-grade]")).to_have_text("missed")
    expect(wrong_line.locator(".claims.is-false li")).to_have_text(re.compile(r"^scrapy/core/engine\.py:141 — "))
    beside = page.locator("#task-code").bounding_box(), answers.first.bounding_box()
    assert beside[1]["x"] > beside[0]["x"] + beside[0]["width"]  # the answers beside the code
    for theme in (*THEMES[1:], THEMES[0]):
        page.context.add_cookies([{"name": "bw_theme", "value": theme, "url": server.url}])
        page.reload()
        expect(page.locator("html")).to_have_attribute("data-theme", theme)
        expect(answers).to_have_count(4)
        dashboard.shot(page, f"suite-task-{theme}")

    # A model's markup is shown as text: nothing in it runs, no link to javascript: is made.
    page.goto(f"{server.url}/suite?run={hostile}&task={BUG}")
    expect(answers).to_have_count(1)
    expect(answers.first.locator(".answer")).to_contain_text("<script>window.__pwned = 1; alert(1)</script>")
    assert answers.first.locator(".answer script, .answer img, .answer a").count() == 0
    assert page.evaluate("window.__pwned") is None

    page.goto(f"{server.url}/suite?run={report['run']}&task={BUG}")
    page.set_viewport_size(PHONE)
    page.reload()
    expect(answers).to_have_count(4)
    assert fits(page)
    code_box, first, second = (
        page.locator("#task-code").bounding_box(),
        answers.nth(0).bounding_box(),
        answers.nth(1).bounding_box(),
    )
    assert first["y"] > code_box["y"] and second["y"] > first["y"] + first["height"] - 1  # stacked
    dashboard.shot(page, "suite-task-phone")
    page.goto(f"{server.url}/suite?run={report['run']}")
    expect(rows).to_have_count(4)
    assert fits(page)
    dashboard.shot(page, "suite-phone")
