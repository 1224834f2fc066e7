"""What a new user tripped on in the dashboard (issue #28), in a real browser against one real bench (the
fake provider behind it, one chromium for the module, the judging tests' page fixture): no `null` under the
seat cards, the log's filter kept in the address (reload, a shared link, back and forward), the owed badge a
link to the owed panels, Restore on a retired model's row, and a Settings → Changes log people can read.

The tests run in file order on that one bench; each sets up what it needs through the admin API.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import httpx2
import orjson
import pytest

from benchwarmers.dashboard.change_views import utc
from tests.e2e import test_dashboard_judging as judging
from tests.fakes.upstream import FakeUpstream
from tests.support.benchserver import BenchServer, listed
from tests.support.gateway_fixtures import ROSTER

pytestmark = pytest.mark.browser

browser = judging.browser  # one chromium for the module, as the judging tests have
page = judging.page
shot, ask, make_collection = judging.shot, judging.ask, judging.make_collection
FAILING = "phi-4"


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeUpstream]:
    with FakeUpstream() as upstream:
        for model in ROSTER:
            upstream.script(model)
        upstream.listing("/v1/models", {"object": "list", "data": [listed(m, w) for m, w in ROSTER.items()]})
        yield upstream


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory, fake: FakeUpstream) -> Iterator[BenchServer]:
    server = BenchServer(tmp_path_factory.mktemp("rough") / "home").start()
    endpoint = {"name": "fake", "base_url": fake.base_url, "kind": "openrouter", "api_key": "sk-fake-0001",
                "free_tier": True}  # fmt: skip
    try:
        assert httpx2.post(f"{server.url}/api/endpoints", json=endpoint).status_code == 201
        assert httpx2.post(f"{server.url}/api/endpoints/fake/refresh").json()["listed"] == len(ROSTER)
        yield server
    finally:
        server.stop()


def judge_all(server: BenchServer, bench_reply: dict[str, Any]) -> None:
    for seat in bench_reply["seats"]:
        verdict = {"call": seat["call"], "useful": True}
        assert httpx2.post(f"{server.url}/bench/verdict", json=verdict).status_code == 200


def shown_panels(tab: Any) -> list[str]:
    return tab.locator("#panels li.panel").evaluate_all("items => items.map((li) => li.dataset.panelId)")


def test_the_panel_view_and_the_playground_show_no_null_under_the_seats(bench, page):
    from playwright.sync_api import expect

    make_collection(bench, "pair", ["llama-3.3-70b", "qwen3-32b"])
    panel = ask(bench, "bench/pair", "Is this loop off by one?")
    assert panel["skipped"] == []  # nothing skipped: the note under the cards is left out, not "null"
    page.goto(f"{bench.url}/panels/{panel['panel']}")
    expect(page.locator("#judge .seat-card")).to_have_count(2)
    expect(page.locator("#judge-skipped")).to_have_count(0)
    assert "null" not in page.locator("#judge").inner_text()
    assert page.locator("#judge").evaluate("root => [...root.childNodes].filter((n) => n.nodeType === 3).length") == 0
    shot(page, "rough-panel")

    page.goto(f"{bench.url}/playground")
    page.select_option("#ask-model", "bench/pair")
    page.fill("#ask-prompt", "Does this parse dates in UTC?")
    page.click("#ask-button")
    expect(page.locator("#judge .seat-card[data-call]")).to_have_count(2)
    assert "null" not in page.locator("#judge").inner_text()
    shot(page, "rough-playground")


def test_the_log_filter_is_kept_in_the_address_for_reloads_links_and_back(bench, page):
    from playwright.sync_api import expect

    make_collection(bench, "solo", ["gemma-3-27b"])
    solo = ask(bench, "bench/solo", "Name this function.")["panel"]
    pair = [p["id"] for p in httpx2.get(f"{bench.url}/api/panels?collection=pair").json()["data"]]
    everything = [solo, *pair]
    page.goto(bench.url)
    expect(page.locator("#panels li.panel")).to_have_count(3)
    assert shown_panels(page) == everything
    page.click("#filter-box summary")
    page.select_option('#log-filters select[name="collection"]', "solo")
    expect(page).to_have_url(f"{bench.url}/?collection=solo")
    expect(page.locator("#panels li.panel")).to_have_count(1)
    page.fill('#log-filters input[name="model"]', "fake/gemma-3-27b")
    page.press('#log-filters input[name="model"]', "Enter")
    expect(page).to_have_url(f"{bench.url}/?collection=solo&model=fake%2Fgemma-3-27b")
    assert shown_panels(page) == [solo]

    page.reload()  # the same filter after a reload: in the form, the box open, the same panels
    expect(page.locator("#log-filters select[name=collection]")).to_have_value("solo")
    expect(page.locator("#log-filters input[name=model]")).to_have_value("fake/gemma-3-27b")
    expect(page.locator("#filter-box")).to_have_attribute("open", "")
    expect(page.locator("#log-count")).to_have_text("1 panel match")
    assert shown_panels(page) == [solo]

    page.go_back()
    expect(page).to_have_url(f"{bench.url}/?collection=solo")
    expect(page.locator("#log-filters input[name=model]")).to_have_value("")
    page.go_back()
    expect(page).to_have_url(f"{bench.url}/")
    expect(page.locator("#log-filters select[name=collection]")).to_have_value("")
    expect(page.locator("#panels li.panel")).to_have_count(3)
    page.go_forward()
    expect(page).to_have_url(f"{bench.url}/?collection=solo")
    expect(page.locator("#panels li.panel")).to_have_count(1)

    shared = page.context.new_page()  # a link someone shared: a fresh tab shows the same filter
    shared.goto(f"{bench.url}/?collection=pair")
    expect(shared.locator("#panels li.panel")).to_have_count(2)
    assert shown_panels(shared) == pair
    expect(shared.locator("#log-filters select[name=collection]")).to_have_value("pair")
    shot(shared, "rough-log-filter")
    shared.close()


def test_the_owed_badge_links_to_the_log_filtered_to_owed_seats(bench, page):
    from playwright.sync_api import expect

    solo = httpx2.get(f"{bench.url}/api/panels?collection=solo").json()["data"][0]
    judge_all(bench, solo)
    owed = [p["id"] for p in httpx2.get(f"{bench.url}/api/panels?owed=1").json()["data"]]
    assert len(owed) == 2 and solo["id"] not in owed  # the two bench/pair panels owe their verdicts
    page.goto(bench.url)
    expect(page.locator("#panels li.panel")).to_have_count(3)
    badge = page.locator("#owed-link")
    expect(badge).to_have_attribute("href", "/?owed=1#gateway")
    expect(badge).to_have_text("4 verdicts owed")
    badge.click()
    expect(page).to_have_url(f"{bench.url}/?owed=1#gateway")
    expect(page.locator("#panels li.panel")).to_have_count(2)
    assert shown_panels(page) == owed
    expect(page.locator("#log-filters input[name=owed]")).to_be_checked()
    page.go_back()
    expect(page.locator("#panels li.panel")).to_have_count(3)
    expect(page.locator("#log-filters input[name=owed]")).not_to_be_checked()

    page.goto(f"{bench.url}/?owed=1#gateway")  # the link followed from elsewhere: a fresh load, the same list
    expect(page.locator("#log-filters input[name=owed]")).to_be_checked()
    expect(page.locator("#panels li.panel")).to_have_count(2)
    shot(page, "rough-owed")


def test_a_retired_model_is_restored_from_its_row(bench, fake, page):
    from playwright.sync_api import expect

    alias = f"fake/{FAILING}"
    assert httpx2.put(f"{bench.url}/api/settings", json={"failing_after": 1}).status_code == 200
    make_collection(bench, "failing", [FAILING])
    fake.script(FAILING, status=500)
    ask(bench, "bench/failing", "Anything?")
    assert httpx2.get(f"{bench.url}/api/models/{alias}").json()["status"] == "retired"
    fake.script(FAILING)
    page.goto(f"{bench.url}/models")
    row = page.locator(f'#model-table tr[data-alias="{alias}"]')
    expect(row.locator("[data-status]")).to_have_attribute("data-status", "retired")
    expect(page.locator("[data-restore]")).to_have_count(1)  # only the retired model has one
    shot(page, "rough-models-retired")
    row.locator(f'button[data-restore="{alias}"]').click()
    expect(page.locator("#flash")).to_have_text(
        f"{alias} restored (ok): members ask it again and it may sit explorer seats"
    )
    expect(row.locator(".status")).to_have_text("ok, with errors")  # back in the pool; its failed seat still shows
    expect(page.locator("[data-restore]")).to_have_count(0)
    assert httpx2.get(f"{bench.url}/api/models/{alias}").json()["status"] == "ok"
    change = httpx2.get(f"{bench.url}/api/changes?subject=model").json()["data"][0]
    assert (change["actor"], change["action"], change["name"]) == ("dashboard", "restore", alias)
    assert change["after"]["by"] == "user"
    [seat] = ask(bench, "bench/failing", "Back?")["seats"]
    assert seat["status"] == "ok"


def test_the_changes_log_reads_as_times_and_what_changed_with_the_json_on_demand(bench, page):
    from playwright.sync_api import expect

    changes = httpx2.get(f"{bench.url}/api/changes?subject=model").json()["data"]
    retired = next(c for c in changes if c["action"] == "retire")
    settings = httpx2.get(f"{bench.url}/api/changes?subject=setting").json()["data"][0]
    page.goto(f"{bench.url}/settings#changes")
    rows = page.locator("#change-table tbody tr")
    everything = httpx2.get(f"{bench.url}/api/changes").json()["data"]
    expect(rows).to_have_count(len(everything))
    row = rows.nth(everything.index(retired))
    expect(row.locator("[data-cell=actor]")).to_have_text("bench")
    expect(row.locator("[data-cell=what]")).to_have_text(f"retire model fake/{FAILING}")
    after = retired["after"]
    expect(row.locator(".change-summary li")).to_have_text(
        [f"retired at: {utc(after['retired_at'])}", f"next probe at: {utc(after['next_probe_at'])}", "streak: 1"]
    )
    assert str(int(after["retired_at"])) not in row.inner_text()  # no epoch seconds in sight
    when = row.locator("time")
    expect(when).to_have_attribute("title", utc(retired["at"]))
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC", when.get_attribute("title") or "")
    raw = row.locator("details.change-raw")
    expect(raw.locator("pre")).to_be_hidden()
    raw.locator("summary").click()
    expect(raw.locator("pre")).to_be_visible()
    assert orjson.loads(raw.locator("pre").inner_text()) == {"before": None, "after": after}

    edited = rows.nth(everything.index(settings))  # an edit names only what changed, before → after
    expect(edited.locator("[data-cell=actor]")).to_have_text("dashboard")
    expect(edited.locator(".change-summary li")).to_have_text(["failing after: 5 → 1"])
    shot(page, "rough-changes")
