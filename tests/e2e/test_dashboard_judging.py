"""Judging in seconds, in a real browser: Playwright drives Debian's chromium against one real bench server
for the whole module (one browser too), with the fake provider behind it.

The tests run in file order on that one bench: the first walks a new user from an empty home through the
setup checklist to a first panel; the later ones add what they need through the admin API. Screenshots of
every page in every theme, at desktop and phone (390 px) sizes, go to test-output/screenshots/judging/.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from openai import OpenAI

from benchwarmers.dashboard import THEMES
from tests.fakes.upstream import FakeUpstream
from tests.support.benchserver import BenchServer, listed
from tests.support.browser import launch, require_chromium
from tests.support.gateway_fixtures import ROSTER

pytestmark = pytest.mark.browser

SHOTS = Path(__file__).resolve().parents[2] / "test-output" / "screenshots" / "judging"
DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}
TOKEN = "admin-token-for-the-judging-tests-77a1"


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeUpstream]:
    with FakeUpstream() as upstream:
        for model in ROSTER:
            upstream.script(model, latency=0.02)
        upstream.listing("/v1/models", {"object": "list", "data": [listed(m, w) for m, w in ROSTER.items()]})
        yield upstream


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory, fake: FakeUpstream) -> Iterator[BenchServer]:
    server = BenchServer(tmp_path_factory.mktemp("judging") / "home").start()
    try:
        yield server
    finally:
        server.stop()


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


def new_page(browser: Any, errors: list[str], **options: Any) -> Any:
    context = browser.new_context(viewport=options.pop("viewport", DESKTOP), **options)
    context.set_default_timeout(5_000)
    tab = context.new_page()
    tab.on("pageerror", lambda error: errors.append(str(error)))
    tab.on(
        "console",
        lambda message: (
            message.type == "error"
            and not message.text.startswith("Failed to load resource: the server responded with a status of 4")
            and errors.append(message.text)
        ),
    )
    tab.on("dialog", lambda dialog: dialog.accept())
    return tab


@pytest.fixture
def page(browser: Any, request: pytest.FixtureRequest) -> Iterator[Any]:
    errors: list[str] = []
    tab = new_page(browser, errors)
    try:
        yield tab
    finally:
        tab.context.close()
    assert errors == [], f"errors in the page during {request.node.name}"


def shot(page: Any, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.evaluate("window.scrollTo(0, 0)")
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)


def sdk(server: BenchServer) -> OpenAI:
    return OpenAI(base_url=server.v1, api_key="not-needed-on-loopback", max_retries=0, timeout=30)


def make_collection(server: BenchServer, name: str, members: list[str], **extra: Any) -> None:
    body = {"name": name, "members": [f"fake/{m}" for m in members], "max_explorers": 0, **extra}
    response = httpx2.post(f"{server.url}/api/collections", json=body)
    assert response.status_code == 201, response.text


def ask(server: BenchServer, model: str, text: str) -> dict[str, Any]:
    reply = sdk(server).chat.completions.create(model=model, messages=[{"role": "user", "content": text}])
    return reply.bench  # type: ignore[attr-defined, no-any-return]


def test_from_an_empty_home_the_checklist_leads_to_a_first_panel(bench, fake, page):
    from playwright.sync_api import expect

    page.goto(bench.url)
    checklist = page.locator("#setup")
    expect(checklist).to_be_visible()
    expect(page.locator("#new-collection")).to_be_disabled()  # no models yet: nothing to put in one
    shot(page, "first-run-empty")
    checklist.locator('[data-step="endpoint"] a').click()
    expect(page).to_have_url(re.compile(r"/settings#endpoints$"))
    form = page.locator("#endpoint-form")
    form.locator('input[name="name"]').fill("fake")
    form.locator('select[name="kind"]').select_option("openrouter")
    form.locator('input[name="base_url"]').fill(fake.base_url)
    form.locator('input[name="api_key"]').fill("sk-fake-0001")
    form.locator('button[type="submit"]').click()
    expect(page.locator("#flash")).to_have_text("Added endpoint fake; refresh it to list its models")
    page.click('button[data-refresh="fake"]')
    expect(page.locator("#flash")).to_contain_text("fake: 10 models listed")

    page.goto(bench.url)
    expect(checklist.locator('[data-step="endpoint"]')).to_have_class(re.compile(r"\bis-done\b"))
    expect(checklist.locator('[data-step="refresh"]')).to_have_class(re.compile(r"\bis-done\b"))
    checklist.locator('[data-step="collection"] button').click()
    dialog = page.locator("#collection-dialog")
    expect(dialog).to_be_visible()
    dialog.locator('input[name="name"]').fill("reviewers")
    for member in ("fake/llama-3.3-70b", "fake/qwen3-32b"):
        page.fill("#member-input", member)
        page.press("#member-input", "Enter")
    dialog.locator('input[name="max_explorers"]').fill("0")
    dialog.locator('button[type="submit"]').click()
    expect(page.locator("#flash")).to_have_text("Created bench/reviewers")
    expect(checklist.locator('[data-step="collection"]')).to_have_class(re.compile(r"\bis-done\b"))
    expect(page.locator("#sdk-snippet")).to_contain_text(f'base_url="{bench.url}/v1"')
    expect(page.locator("#sdk-snippet")).to_contain_text('model="bench/reviewers"')
    shot(page, "first-run-checklist")

    checklist.locator('[data-step="request"] a').click()
    expect(page).to_have_url(f"{bench.url}/playground")
    page.fill("#ask-prompt", "Is mean([]) safe?")
    page.click("#ask-button")
    cards = page.locator("#seat-grid .seat-card[data-call]")
    expect(cards).to_have_count(2, timeout=20_000)  # a bound for a loaded machine, not a timing
    expect(cards.first).to_contain_text("answer from llama-3.3-70b")

    page.goto(bench.url)
    expect(page.locator("#setup")).to_have_count(0)  # done: the checklist is gone
    panel = page.locator("li.panel").first
    expect(panel).to_contain_text("Is mean([]) safe?")  # the prompt, on the log
    expect(panel.locator("button.chip")).to_have_count(2)


def test_a_four_seat_panel_is_judged_with_the_keyboard_alone(bench, page):
    from playwright.sync_api import expect

    make_collection(bench, "four", ["llama-3.3-70b", "qwen3-32b", "gemma-3-27b", "mistral-small"])
    older = ask(bench, "bench/four", "An older question, owed too.")
    reply = ask(bench, "bench/four", "def mean(xs): return sum(xs) / len(xs)\nWhat breaks?")
    page.goto(bench.url)
    # From the log: Tab to the panel's Judge link is the way in; the page is then judged by keys alone.
    page.locator(f'li.panel[data-panel-id="{reply["panel"]}"] a.button').focus()
    page.keyboard.press("Enter")
    expect(page).to_have_url(f"{bench.url}/panels/{reply['panel']}")
    grid = page.locator("#seat-grid")
    expect(grid.locator(".seat-card")).to_have_count(4)
    expect(page.locator("#judge-prompt")).to_have_text("def mean(xs): return sum(xs) / len(xs)\nWhat breaks?")
    expect(page.locator("#judge-owed")).to_have_text("4 verdicts owed")
    shot(page, "panel-before")

    presses = ["u", "n", "2", "u", "u", "u"]  # seat 2 is re-judged useful on the way: still ≤ 2 a seat
    for key in presses:  # typed without waiting: keys pressed while a verdict saves wait their turn
        page.keyboard.press(key)
    expect(page.locator("#judge-owed")).to_have_text("every answer judged")
    assert len(presses) <= 2 * 4
    seats = httpx2.get(f"{bench.url}/bench/panels/{reply['panel']}").json()["seats"]
    assert [s["verdict"]["useful"] for s in seats] == [True, True, True, True]
    # Focus stayed on the seat the last verdict left picked: the keyboard never lost its place.
    assert page.evaluate("document.activeElement.classList.contains('seat-card')")
    shot(page, "panel-judged")

    page.keyboard.press("o")  # the next panel that owes a verdict
    expect(page).to_have_url(f"{bench.url}/panels/{older['panel']}")
    expect(page.locator("#judge-prompt")).to_have_text("An older question, owed too.")  # drawn: keys work
    page.keyboard.press("k")  # and back to the newer one
    expect(page).to_have_url(f"{bench.url}/panels/{reply['panel']}")


def test_the_playground_asks_with_an_image_and_the_seats_are_judged_there(bench, page, tmp_path):
    from playwright.sync_api import expect

    assert httpx2.patch(f"{bench.url}/api/models/fake/kimi-k2", json={"vision": True}).status_code == 200
    make_collection(bench, "eyes", ["kimi-k2", "glm-4.5-air"])
    picture = tmp_path / "chair.png"
    picture.write_bytes(bytes.fromhex("89504e470d0a1a0a"))
    page.goto(f"{bench.url}/playground")
    page.select_option("#ask-model", "bench/eyes")
    page.fill("#ask-prompt", "What is this?")
    page.set_input_files("#ask-images", str(picture))
    page.click("#ask-button")
    cards = page.locator("#seat-grid .seat-card[data-call]")
    expect(cards).to_have_count(1, timeout=20_000)  # glm-4.5-air takes no images: skipped; kimi-k2 answers
    expect(cards.first).to_contain_text("fake/kimi-k2")
    expect(page.locator("#judge-skipped")).to_have_text("Skipped: member fake/glm-4.5-air (cannot take images)")
    cards.first.locator('button[data-useful="false"]').click()
    expect(page.locator("#judge-owed")).to_have_text("every answer judged")
    call = cards.first.get_attribute("data-call")
    panel = httpx2.get(f"{bench.url}/bench/panels/{call.split('.')[0]}").json()
    assert panel["request"]["messages"][0]["content"][1] == {"type": "text", "text": "[image: data URL, 1 KB]"}
    assert panel["seats"][0]["verdict"]["useful"] is False
    shot(page, "playground")


def test_a_model_that_fails_every_call_shows_its_error_rate_and_a_failing_status(bench, fake, page):
    from playwright.sync_api import expect

    fake.script("phi-4", status=500)
    make_collection(bench, "shaky", ["phi-4", "deepseek-r1"], shape="review")
    for i in range(3):
        ask(bench, "bench/shaky", f"question {i}")
    refused = httpx2.post(f"{bench.url}/bench/verdict", json={"call": _failed_call(bench), "useful": False})
    assert refused.status_code == 400 and "has status 'error'" in refused.json()["error"]["message"]

    page.goto(bench.url)
    chip = page.locator('li.panel button.chip[data-status="error"]').first
    expect(chip.locator(".cause")).to_have_text("upstream_error 500")  # the cause as text, no hover needed
    page.goto(f"{bench.url}/leaderboard")
    row = page.locator('section[data-shape="review"] tr[data-alias="fake/phi-4"]')
    expect(row.locator("[data-errors]")).to_contain_text("100% failed")
    expect(row.locator("[data-errors]")).to_contain_text("3 of 3 (100%): 3 upstream_error")
    expect(row).to_contain_text("failing")
    expect(page.locator("#method")).to_contain_text("share ranks")
    page.goto(f"{bench.url}/models")
    status = page.locator('tr[data-alias="fake/phi-4"] [data-status]')
    expect(status).to_have_attribute("data-status", "failing")
    expect(status).to_contain_text("3 of 3 seats failed (100%: 3 upstream_error)")
    expect(page.locator('tr[data-alias="fake/deepseek-r1"] [data-status]')).to_have_attribute("data-status", "ok")


def _failed_call(bench: BenchServer) -> str:
    panels = httpx2.get(f"{bench.url}/bench/panels?limit=1").json()["data"]
    return next(s["call"] for s in panels[0]["seats"] if s["status"] == "error")


def test_pages_answer_a_bad_query_with_a_themed_page_and_follow_the_systems_theme(bench, browser):
    from playwright.sync_api import expect

    errors: list[str] = []
    page = new_page(browser, errors, color_scheme="light")
    try:
        response = page.goto(f"{bench.url}/leaderboard?days=lots")
        assert response.status == 400
        expect(page.locator("h1")).to_have_text("That address is not quite right")
        expect(page.locator("[role=alert]")).to_contain_text("days")
        light = page.evaluate("getComputedStyle(document.documentElement).backgroundColor")
        assert light == "rgb(239, 226, 200)"  # hardwood's --bg: the system asked for light
        page.emulate_media(color_scheme="dark")
        assert page.evaluate("getComputedStyle(document.documentElement).backgroundColor") == "rgb(15, 18, 24)"
        assert page.goto(f"{bench.url}/no-such-page").status == 404
        expect(page.locator("h1")).to_have_text("Nothing here")
    finally:
        page.context.close()
    assert errors == []


def test_every_page_fits_a_phone_and_is_shot_in_every_theme(bench, browser, tmp_path):
    from playwright.sync_api import expect

    panel = httpx2.get(f"{bench.url}/bench/panels?limit=1").json()["data"][0]["id"]
    pages = {"collections": "/", "playground": "/playground", "panel": f"/panels/{panel}", "models": "/models",
             "leaderboard": "/leaderboard", "discover": "/discover", "settings": "/settings",
             "error": "/nope"}  # fmt: skip
    guarded = BenchServer(tmp_path / "guarded", admin_token=TOKEN).start()
    errors: list[str] = []
    try:
        for theme in THEMES:
            for size, viewport in (("desktop", DESKTOP), ("phone", PHONE)):
                page = new_page(browser, errors, viewport=viewport)
                page.context.add_cookies([{"name": "bw_theme", "value": theme, "url": bench.url},
                                          {"name": "bw_theme", "value": theme, "url": guarded.url}])  # fmt: skip
                for name, path in pages.items():
                    page.goto(f"{bench.url}{path}")
                    expect(page.locator("html")).to_have_attribute("data-theme", theme)
                    if name == "panel":
                        expect(page.locator("#seat-grid .seat-card").first).to_be_visible()
                    if name == "collections":
                        expect(page.locator("li.panel").first).to_be_visible()
                    if size == "phone":
                        wide = page.evaluate("document.documentElement.scrollWidth")
                        assert wide <= PHONE["width"], f"{name} is {wide} px wide on a phone ({theme})"
                    shot(page, f"{name}-{theme}-{size}")
                page.goto(f"{guarded.url}/login")
                expect(page.locator("#token")).to_be_visible()
                if size == "phone":
                    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
                shot(page, f"login-{theme}-{size}")
                if size == "phone":
                    # Dialogs open centred and wholly on screen.
                    page.goto(bench.url)
                    page.click("#new-collection")
                    box = page.locator("#collection-dialog").bounding_box()
                    assert box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"]
                    assert abs(box["x"] - (PHONE["width"] - box["x"] - box["width"])) <= 1
                    shot(page, f"collection-dialog-{theme}-{size}")
                page.context.close()
    finally:
        guarded.stop()
    assert errors == []


def test_an_endpoint_is_edited_its_key_rotated_and_its_connection_tested(bench, fake, page):
    from playwright.sync_api import expect

    page.goto(f"{bench.url}/settings#endpoints")
    row = page.locator('tr[data-endpoint="fake"]')
    row.locator("button[data-test-endpoint]").click()
    expect(row.locator("[data-test-result]")).to_have_text("ok: 10 models")
    row.locator("button[data-edit-endpoint]").click()
    dialog = page.locator("#endpoint-dialog")
    expect(dialog.locator('input[name="base_url"]')).to_have_value(fake.base_url)
    dialog.locator('input[name="api_key"]').fill("sk-rotated-9876")
    shot(page, "endpoint-edit")
    dialog.locator('button[type="submit"]').click()
    expect(page.locator("#flash")).to_have_text("Saved fake: its key was replaced")
    expect(page.locator('tr[data-endpoint="fake"]')).to_contain_text("…9876")
    change = httpx2.get(f"{bench.url}/api/changes?subject=endpoint").json()["data"][0]
    assert (change["action"], change["before"], change["after"]) == ("edit", {"api_key": "…0001"}, {"api_key": "…9876"})
    # The next call to the provider carries the new key.
    ask(bench, "bench/reviewers", "after the rotation")
    assert fake.requests[-1].headers["authorization"] == "Bearer sk-rotated-9876"
    refused = httpx2.patch(f"{bench.url}/api/endpoints/fake", json={"base_url": "ftp://nowhere"})
    assert refused.status_code == 400 and refused.json()["error"]["param"] == "base_url"
    assert httpx2.patch(f"{bench.url}/api/endpoints/none", json={"free_tier": True}).status_code == 404


def test_an_answer_the_cap_cut_says_so_on_its_card_and_in_the_seat_dialog(bench, fake, page):
    from playwright.sync_api import expect

    assert httpx2.put(f"{bench.url}/api/settings", json={"answer_cap_kb": 16}).status_code == 200
    fake.script("llama-3.1-8b", huge=1024 * 1024)
    try:
        make_collection(bench, "wordy", ["llama-3.1-8b", "qwen3-32b"])
        reply = ask(bench, "bench/wordy", "Say everything.")
    finally:
        fake.script("llama-3.1-8b", latency=0.02)
        assert httpx2.put(f"{bench.url}/api/settings", json={"answer_cap_kb": 1024}).status_code == 200
    note = "Answer cut at 16,384 bytes by the bench's answer cap (answer_cap_kb): the model wrote more."
    page.goto(f"{bench.url}/panels/{reply['panel']}")
    cards = page.locator("#seat-grid .seat-card")
    expect(cards.nth(0).locator(".seat-cut")).to_have_text(note)
    expect(cards.nth(1).locator(".seat-cut")).to_have_count(0)
    page.goto(bench.url)
    page.locator(f'li.panel[data-panel-id="{reply["panel"]}"] button.chip').first.click()
    expect(page.locator("#seat-cut")).to_have_text(note)
    expect(page.locator("#seat-cut")).to_be_visible()
