"""The charts over time, end to end: a week of panels judged through the real gateway and verdict route
(then moved back in the log to the days they stand for), two suite runs of the scripted reviewers, and one
bench serving them. The API's figures are checked against the counts seeded here; the pages, in a real
browser, draw each chart with its figures as a table that says exactly what the API says, in every theme
at 1440 and 390 px wide; the screenshots go to test-output/screenshots/trends/.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx2
import orjson
import pytest
from openai import OpenAI

from benchwarmers.bench.evidence.cost import cost_report, usd
from benchwarmers.bench.evidence.series import bucket_label
from benchwarmers.bench.evidence.stats import wilson
from benchwarmers.dashboard import THEMES
from benchwarmers.store.schema import panels, seats
from tests.fakes.reviewers import REVIEWERS
from tests.support.benchserver import BenchServer, listed
from tests.support.browser import launch, require_chromium
from tests.support.cost import CATALOG, GPT, LLAMA, USAGE, WIDGET
from tests.support.suite_fixtures import PAIRS, cli, reviewers_on_fake

SHOTS = Path(__file__).resolve().parents[2] / "test-output" / "screenshots" / "trends"
SIZES = {"1440": {"width": 1440, "height": 900}, "390": {"width": 390, "height": 844}}
DAY = 86_400.0
TRIO = [GPT, LLAMA, WIDGET]
# The widget on an endpoint without a free tier: its calls are paid, the others' free.
ALIASES = {GPT: f"fake/{GPT}", LLAMA: f"fake/{LLAMA}", WIDGET: f"shop/{WIDGET}"}
# Days ago → per model, the verdicts its seats get that day (None: the seat fails, a 500).
WEEK: dict[int, dict[str, list[bool | None]]] = {
    5: {GPT: [True, True, False], LLAMA: [False, True, False], WIDGET: [True, None, False]},
    3: {GPT: [True, True, True], LLAMA: [True, False, True], WIDGET: [None, False, False]},
    1: {GPT: [True, False, True], LLAMA: [True, True, True], WIDGET: [False, True, None]},
    0: {GPT: [True, True], LLAMA: [False, True], WIDGET: [True, True]},
}


def backdate(server: BenchServer, panel_ids: list[str], seconds: float) -> None:
    """Move panels back in the log, as days of use would have left them."""

    async def write(bench: Any) -> None:
        async with bench.state.write() as conn:
            await conn.execute(
                panels.update().where(panels.c.id.in_(panel_ids)).values(created_at=panels.c.created_at - seconds)
            )
            await conn.execute(
                seats.update().where(seats.c.panel_id.in_(panel_ids)).values(created_at=seats.c.created_at - seconds)
            )

    server.admin(write)


def seed_week(server: BenchServer, fake: Any) -> None:
    """bench/trio (shape code) asked three times a day on four days of the last week, every answer judged."""
    client = OpenAI(base_url=server.v1, api_key="local", max_retries=0, timeout=30)
    for days_ago, verdicts in WEEK.items():
        asked = []
        for n in range(len(verdicts[GPT])):
            for model in TRIO:
                fails = verdicts[model][n] is None
                fake.script(model, usage=USAGE[model], latency=0.01 * (n + 1), status=500 if fails else 200)
            reply = client.chat.completions.create(
                model="bench/trio", messages=[{"role": "user", "content": f"Review day -{days_ago}, #{n}."}]
            )
            by_alias = {s["alias"]: s for s in reply.bench["seats"]}  # type: ignore[attr-defined]
            for model in TRIO:
                useful = verdicts[model][n]
                seat = by_alias[ALIASES[model]]
                assert seat["status"] == ("error" if useful is None else "ok"), seat
                if useful is not None:
                    body = {"call": seat["call"], "useful": useful, "note": "checked", "real": [], "false": []}
                    assert httpx2.post(f"{server.url}/bench/verdict", json=body).status_code == 200
            asked.append(reply.bench["panel"])  # type: ignore[attr-defined]
        if days_ago:
            backdate(server, asked, days_ago * DAY)


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BenchServer]:
    """Two suite runs of bench/reviewers (in the second, flag-none answers as the finder does), then the
    server, bench/trio on the same fake provider, and its week of judged panels.

    The CLI runs in a thread of its own: Playwright's sync API holds this thread's event loop later."""
    home = tmp_path_factory.mktemp("trends") / "home"
    home.mkdir()
    (home / "models-dev.json").write_bytes(orjson.dumps(CATALOG))
    with pytest.MonkeyPatch.context() as env, ThreadPoolExecutor(1) as apart:
        env.setenv("BENCHWARMERS_HOME", str(home))
        env.setenv("COLUMNS", "200")
        made = reviewers_on_fake(home)
        _settings, fake = apart.submit(next, made).result()
        for _ in range(2):
            code, out = apart.submit(
                cli, "suite", "run", "--collection", "bench/reviewers", "--tasks", "rebench-scrapy-*"
            ).result()
            assert code == 0, out
            fake.script("flag-none", respond=REVIEWERS["finder"](PAIRS))
        server = BenchServer(home).start()
        try:
            roster = [*(listed(m, 128_000) for m in REVIEWERS), listed(GPT), listed(LLAMA), listed(WIDGET, free=False)]
            fake.listing("/v1/models", {"object": "list", "data": roster})
            fake_url = fake.base_url

            async def setup(bench: Any) -> None:
                await bench.endpoints.refresh_endpoint("fake")
                await bench.endpoints.add_endpoint("shop", fake_url, "openrouter", api_key="sk-shop-1", free_tier=False)
                await bench.endpoints.refresh_endpoint("shop")
                members = list(ALIASES.values())
                await bench.collections.add_collection(
                    {"name": "trio", "members": members, "shape": "code", "max_explorers": 0}
                )

            server.admin(setup)
            seed_week(server, fake)
            yield server
        finally:
            server.stop()
            apart.submit(made.close).result()


def get(server: BenchServer, path: str) -> dict[str, Any]:
    response = httpx2.get(f"{server.url}{path}")
    assert response.status_code == 200, response.text
    return response.json()  # type: ignore[no-any-return]


def label(days_ago: int) -> str:
    return bucket_label(time.time() - days_ago * DAY, "day")


def test_the_trends_api_counts_what_was_seeded(bench):
    useful = get(bench, "/api/trends/useful?days=7&shape=code")
    assert (useful["object"], useful["days"], useful["bucket"], useful["shape"]) == ("trends.useful", 7, "day", "code")
    assert [b["label"] for b in useful["buckets"]] == [label(d) for d in range(6, -1, -1)]
    trio = {s["alias"]: s for s in useful["series"] if s["alias"] in ALIASES.values()}
    assert len(trio) == 3
    for model in TRIO:
        points = trio[ALIASES[model]]["points"]
        for days_ago in range(7):
            judged = [v for v in WEEK.get(days_ago, {}).get(model, []) if v is not None]
            good = sum(judged)
            point = points[6 - days_ago]
            assert (point["useful"], point["verdicts"]) == (good, len(judged)), (model, days_ago)
            if judged:
                low, high = wilson(good, len(judged))
                assert (point["rate"], point["low"], point["high"]) == (
                    round(good / len(judged), 4), round(low, 4), round(high, 4)
                )  # fmt: skip
            else:
                assert point["rate"] is None

    calls = get(bench, "/api/trends/calls?days=7&shape=code")
    widget = next(s for s in calls["series"] if s["alias"] == ALIASES[WIDGET])
    assert [(p["seats"], p["errors"]) for p in widget["points"]] == [(0, 0), (3, 1), (0, 0), (3, 1), (0, 0), (3, 1),
                                                                    (2, 0)]  # fmt: skip
    assert all(p["p50"] is not None and p["p90"] >= p["p50"] for p in widget["points"] if p["seats"] > p["errors"])

    # The value of free calls: the cost report's figures over the same days, per day.
    value = get(bench, "/api/trends/value?days=7")
    report = bench.admin(lambda b: cost_report(b.state, days=7))
    assert value["total"] == report["total"]
    assert value["since"] == report["since"]
    per_day = {p["day"]: {k: v for k, v in p.items() if k != "day"} for p in report["per_day"]}
    assert {b["label"]: p for b, p in zip(value["buckets"], value["points"], strict=True) if p["calls"]} == per_day
    assert value["total"]["free_usd"] > 0 and value["total"]["cost_usd"] > value["total"]["free_usd"]

    today = get(bench, "/api/trends/calls?days=1")
    assert today["bucket"] == "hour" and len(today["buckets"]) == time.localtime().tm_hour + 1

    suite = get(bench, "/api/trends/suite")
    assert len(suite["runs"]) == 2 and suite["runs"][0]["created_at"] < suite["runs"][1]["created_at"]
    flag_none = next(m for m in suite["models"] if m["alias"] == "fake/flag-none")
    figures = [(p["hits"], p["found"], p["correct"], p["pairs"]) for p in flag_none["points"]]
    assert figures == [(0, 1, 0, 1), (1, 1, 1, 1)]  # it found the bug only once it answered as the finder
    assert flag_none["points"][1]["pair_interval"] == [round(x, 3) for x in wilson(1, 1)]
    assert httpx2.get(f"{bench.url}/api/trends/useful?days=367").status_code == 400
    assert httpx2.get(f"{bench.url}/api/trends/suite?runs=0").status_code == 400


# -- in the browser ----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    require_chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = launch(playwright)
        try:
            yield launched
        finally:
            launched.close()


def open_page(browser: Any, server: BenchServer, path: str, theme: str, size: str) -> tuple[Any, list[str]]:
    context = browser.new_context(viewport=SIZES[size])
    context.add_cookies([{"name": "bw_theme", "value": theme, "url": server.url}])
    context.set_default_timeout(10_000)
    tab = context.new_page()
    errors: list[str] = []
    tab.on("pageerror", lambda error: errors.append(str(error)))
    tab.on("console", lambda message: message.type == "error" and errors.append(message.text))
    tab.goto(f"{server.url}{path}")
    return tab, errors


def pct(value: float | None) -> str:
    """As the page's script writes a rate: Math.round, halves up."""
    return "–" if value is None else f"{math.floor(value * 100 + 0.5)}%"


def secs(value: float) -> str:
    return f"{value:.2f} s" if value < 10 else f"{value:.1f} s"


def table_of(figure: Any) -> tuple[str, list[str], list[list[str]]]:
    """(caption, column headers, rows) of a chart's figures table, opened as a reader opens it."""
    figure.locator("details.chart-data summary").click()
    table = figure.locator("details.chart-data table")
    caption = table.locator("caption").inner_text()
    columns = table.locator("thead th").all_text_contents()  # as written, not as CSS capitalises it
    rows = [row.locator("th, td").all_text_contents() for row in table.locator("tbody tr").all()]
    return caption, columns, rows


def expected_rows(trend: dict[str, Any], series: list[dict[str, Any]], has: Any, cell: Any) -> list[list[str]]:
    return [
        [bucket["label"], *(cell(s["points"][i]) for s in series)]
        for i, bucket in enumerate(trend["buckets"])
        if any(has(s["points"][i]) for s in series)
    ]


def useful_cell(p: dict[str, Any]) -> str:
    return (
        f"{pct(p['rate'])} ({pct(p['low'])}–{pct(p['high'])}) · {p['useful']} of {p['verdicts']}"
        if p["verdicts"]
        else "–"
    )


@pytest.mark.browser
def test_each_charts_table_holds_the_apis_figures(bench, browser):
    from playwright.sync_api import expect

    tab, errors = open_page(browser, bench, "/trends?days=7", "dark", "1440")
    expect(tab.locator("figure.chart .chart-plot canvas")).to_have_count(
        5
    )  # code (bench/trio), review (the suite's), 3 more
    useful = get(bench, "/api/trends/useful?days=7")
    for shape in sorted({s["shape"] for s in useful["series"]}):
        series = [s for s in useful["series"] if s["shape"] == shape]
        caption, columns, rows = table_of(tab.locator(f"#useful-{shape}"))
        assert caption == f"Useful rate on {shape}, by day"
        assert columns == ["Day", *(s["alias"] for s in series)]
        assert rows == expected_rows(useful, series, lambda p: p["verdicts"] > 0, useful_cell)

    calls = get(bench, "/api/trends/calls?days=7")
    caption, columns, rows = table_of(tab.locator("#errors"))
    assert (caption, columns) == ("Failed seats, by day", ["Day", *(s["alias"] for s in calls["series"])])
    error_cell = lambda p: f"{pct(p['error_rate'])} · {p['errors']} of {p['seats']}" if p["seats"] else "–"  # noqa: E731
    assert rows == expected_rows(calls, calls["series"], lambda p: p["seats"] > 0, error_cell)
    caption, columns, rows = table_of(tab.locator("#seconds"))
    assert columns == ["Day", *(f"{s['alias']} p50 / p90" for s in calls["series"])]
    seconds_cell = lambda p: "–" if p["p50"] is None else f"{secs(p['p50'])} / {secs(p['p90'])}"  # noqa: E731
    assert rows == expected_rows(calls, calls["series"], lambda p: p["p50"] is not None, seconds_cell)

    value = get(bench, "/api/trends/value?days=7")
    caption, columns, rows = table_of(tab.locator("#value"))
    assert columns == ["Day", "Calls", "Free calls' value", "Every call at list price"]
    assert rows == [
        [b["label"], str(p["calls"]), usd(p["free_usd"]), usd(p["cost_usd"])]
        for b, p in zip(value["buckets"], value["points"], strict=True)
        if p["calls"]
    ]
    expect(tab.locator("#value .muted")).to_contain_text(
        f"{usd(value['total']['free_usd'])} of {usd(value['total']['cost_usd'])}"
    )

    tab.goto(f"{bench.url}/suite")
    expect(tab.locator("#suite-trend .chart-plot canvas")).to_have_count(2)
    suite = get(bench, "/api/trends/suite")
    for chart, (rate, interval, part, whole) in {
        "suite-pairs": ("pair_correct_rate", "pair_interval", "correct", "pairs"),
        "suite-hits": ("hit_rate", "hit_interval", "hits", "found"),
    }.items():
        judged = [m for m in suite["models"] if any(p and p[whole] for p in m["points"])]
        _caption, columns, rows = table_of(tab.locator(f"#{chart}"))
        assert columns == ["Run", *(m["alias"] for m in judged)]

        def cell(p: dict[str, Any] | None) -> str:
            if not p or not p[whole]:  # noqa: B023
                return "–"
            low, high = p[interval]  # noqa: B023
            return f"{pct(p[rate])} ({pct(low)}–{pct(high)}) · {p[part]} of {p[whole]}"  # noqa: B023

        assert rows == [[run["run"], *(cell(m["points"][i]) for m in judged)] for i, run in enumerate(suite["runs"])]
    tab.context.close()
    assert errors == []


CHARTS = {
    "/trends?days=7": ["useful-code", "useful-review", "errors", "seconds", "value"],
    "/suite": ["suite-pairs", "suite-hits"],
}


@pytest.mark.browser
@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("theme", THEMES)
def test_every_chart_is_drawn_in_the_themes_colours_at_desktop_and_phone_widths(bench, browser, theme, size):
    from playwright.sync_api import expect

    SHOTS.mkdir(parents=True, exist_ok=True)
    for path, charts in CHARTS.items():
        tab, errors = open_page(browser, bench, path, theme, size)
        expect(tab.locator("figure.chart .chart-plot canvas")).to_have_count(len(charts))
        # The first line is drawn in the theme's first series colour, and the page is no wider than the phone.
        assert tab.evaluate("getComputedStyle(document.documentElement).getPropertyValue('--series-1')").strip()
        assert tab.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
        page_name = path.strip("/").split("?")[0]
        for chart in charts:
            figure = tab.locator(f"#{chart}")
            plot = figure.locator(".chart-plot")
            width = plot.evaluate("el => el.clientWidth")
            canvas = plot.locator("canvas")
            assert abs(canvas.evaluate("el => el.getBoundingClientRect().width") - width) <= 2  # fits its container
            figure.screenshot(path=str(SHOTS / f"{page_name}-{chart}-{theme}-{size}.png"))
        tab.screenshot(path=str(SHOTS / f"{page_name}-{theme}-{size}.png"), full_page=True)
        tab.context.close()
        assert errors == [], (path, theme, size)


@pytest.mark.browser
def test_the_charts_follow_a_theme_picked_on_the_page(bench, browser):
    from playwright.sync_api import expect

    tab, errors = open_page(browser, bench, "/trends?days=7", "dark", "1440")
    expect(tab.locator("figure.chart .chart-plot canvas")).to_have_count(5)
    before = tab.locator("#value canvas").evaluate("el => el.toDataURL()")
    tab.evaluate("import('/static/' + document.querySelector('#theme-css').dataset.base.split('/')[2]"
                 " + '/js/theme.js').then((m) => m.applyTheme('hardwood'))")  # fmt: skip
    expect(tab.locator("html")).to_have_attribute("data-theme", "hardwood")
    tab.wait_for_function("(before) => document.querySelector('#value canvas').toDataURL() !== before", arg=before)
    tab.context.close()
    assert errors == []
