"""The dashboard in a real browser: Playwright drives Debian's chromium against a real bench server.

Everything a user does here goes through the pages; set-up that is not the point of a test goes
through the same admin API the pages use (Playwright's sync API owns this thread's event loop, so
no `asyncio.run` set-up here). A screenshot of each page is saved under test-output/screenshots/.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import openai
import pytest
from openai import OpenAI

from benchwarmers.dashboard import THEMES
from tests.fakes.upstream import FakeUpstream
from tests.support import browser as chromium
from tests.support.benchserver import BenchServer, listed
from tests.support.gateway_fixtures import ROSTER

pytestmark = pytest.mark.browser

browser = chromium.browser  # the fixtures every browser test module shares: one chromium per module
page = chromium.page

SHOTS = Path(__file__).resolve().parents[2] / "test-output" / "screenshots"
TOKEN = "admin-token-for-browser-tests-4b1c"
PAGES = {"collections": "/", "models": "/models", "leaderboard": "/leaderboard", "discover": "/discover",
         "settings": "/settings"}  # fmt: skip
HOSTILE = (
    "Here is the fix.\n\n<script>window.__pwned = 1; alert(1)</script>\n"
    '<img src=x onerror="window.__pwned = 2">\n\n[click me](javascript:window.__pwned=3)'
)


def start_server(tmp_path: Path, fake: FakeUpstream, **settings: Any) -> BenchServer:
    """A bench whose roster is the fake provider's ten models, set up through the admin API."""
    server = BenchServer(tmp_path / "home", **settings).start()
    fake.listing("/v1/models", {"object": "list", "data": [listed(m, w) for m, w in ROSTER.items()]})
    auth = server.admin_headers()  # the dashboard's token whenever keys are required, as a script sends it
    endpoint = {"name": "fake", "base_url": fake.base_url, "kind": "openrouter", "api_key": "sk-fake-0001",
                "free_tier": True}  # fmt: skip
    assert httpx2.post(f"{server.url}/api/endpoints", json=endpoint, headers=auth).status_code == 201
    assert httpx2.post(f"{server.url}/api/endpoints/fake/refresh", headers=auth).json()["listed"] == len(ROSTER)
    return server


@pytest.fixture
def bench(tmp_path: Path, fake: FakeUpstream) -> Iterator[BenchServer]:
    server = start_server(tmp_path, fake)
    try:
        yield server
    finally:
        server.stop()


def shot(page: Any, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.evaluate("window.scrollTo(0, 0)")  # the sticky header stays at the top of a full-page shot
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)


def sdk(server: BenchServer, key: str = "not-needed-on-loopback") -> OpenAI:
    return OpenAI(base_url=server.v1, api_key=key, max_retries=0, timeout=30)


def ask(client: OpenAI, model: str, text: str = "Review this function.") -> Any:
    return client.chat.completions.create(model=model, messages=[{"role": "user", "content": text}])


def make_collection(server: BenchServer, name: str, members: list[str], **extra: Any) -> None:
    body = {"name": name, "members": [f"fake/{m}" for m in members], **extra}
    assert httpx2.post(f"{server.url}/api/collections", json=body).status_code == 201


def test_collection_form_panel_on_the_card_and_a_verdict(bench, page):
    from playwright.sync_api import expect

    page.goto(bench.url)
    expect(page.locator("#panels")).to_contain_text("No panels yet")
    page.click("#new-collection")
    form = page.locator("#collection-form")
    form.locator('input[name="name"]').fill("Reviewers!")
    form.locator('textarea[name="description"]').fill("Code review: find defects in a diff")
    form.locator('input[name="tags"]').fill("code review")
    for member in ("fake/llama-3.3-70b", "fake/qwen3-32b"):
        page.fill("#member-input", member)
        page.press("#member-input", "Enter")
    form.locator('select[name="shape"]').select_option("review")
    shot(page, "collection-form")
    form.locator('button[type="submit"]').click()
    # The server's rule, shown beside its field; the dialog stays open with what was typed.
    name_error = form.locator('[data-error-for="name"]')
    expect(name_error).to_be_visible()
    expect(name_error).to_contain_text("collection name 'Reviewers!' is not valid")
    expect(form.locator('input[name="name"]')).to_have_attribute("aria-invalid", "true")
    form.locator('input[name="name"]').fill("reviewers")
    form.locator('button[type="submit"]').click()
    expect(page.locator("#flash")).to_have_text("Created bench/reviewers")
    row = page.locator('tr[data-collection="reviewers"]')
    expect(row).to_contain_text("fake/llama-3.3-70b")
    expect(row.locator("[data-explorers]")).to_have_text("2")
    expect(row.locator("[data-window]")).to_have_text("32,000")
    changes = httpx2.get(f"{bench.url}/api/changes?subject=collection").json()["data"]
    assert [(c["actor"], c["action"], c["name"]) for c in changes] == [("dashboard", "create", "reviewers")]

    # A panel sent with the SDK shows on the open card within two seconds, without a reload.
    reply = ask(sdk(bench), "bench/reviewers").bench
    seats = reply["seats"]
    owed = sum(1 for s in seats if s["status"] != "error")
    panel = page.locator(f'li.panel[data-panel-id="{reply["panel"]}"]')
    expect(panel).to_be_visible(timeout=2_000)
    expect(panel).to_contain_text("Asked by local")
    expect(panel).to_contain_text("set on the collection")
    expect(panel.locator("button.chip")).to_have_count(len(seats))
    expect(page.locator("#owed-count")).to_have_text(str(owed))
    shot(page, "collections")

    first = seats[0]["call"]
    panel.locator(f'button.chip[data-call="{first}"]').click()
    dialog = page.locator("#seat-dialog")
    expect(dialog).to_be_visible()
    expect(page.locator("#seat-title")).to_have_text(first)
    expect(page.locator("#seat-answer")).to_contain_text(seats[0]["answer"])
    shot(page, "seat-dialog")
    page.check('#verdict-form input[name="useful"][value="true"]')
    page.fill('#verdict-form textarea[name="note"]', "checked against the code")
    page.fill('#verdict-form textarea[name="real"]', "empty list divides by zero\nloop skips the last item")
    page.click('#verdict-form button[type="submit"]')
    expect(dialog).to_be_hidden()
    chip = panel.locator(f'button.chip[data-call="{first}"]')
    expect(chip).to_have_class(re.compile(r"\bis-useful\b"))
    expect(page.locator("#owed-count")).to_have_text(str(owed - 1))
    judged = httpx2.get(f"{bench.url}/bench/panels/{reply['panel']}").json()["seats"][0]["verdict"]
    assert (judged["useful"], judged["note"], judged["real"], judged["caller"]) == (
        True,
        "checked against the code",
        ["empty list divides by zero", "loop skips the last item"],
        "local",
    )

    page.goto(f"{bench.url}/leaderboard")
    board = page.locator('section[data-shape="review"]')
    expect(board.locator(f'tr[data-alias="{seats[0]["alias"]}"]')).to_contain_text("100%")
    expect(board.locator(f'tr[data-alias="{seats[0]["alias"]}"]')).to_contain_text("preliminary")
    expect(board.locator("svg.rate-chart line.whisker").first).to_be_attached()
    shot(page, "leaderboard")


def test_a_models_answer_renders_as_text_and_nothing_in_it_runs(tmp_path, fake, page):
    fake.script("kimi-k2", latency=0.01, reply=HOSTILE)
    server = start_server(tmp_path, fake)
    try:
        make_collection(server, "solo", ["kimi-k2"], max_explorers=0)
        reply = ask(sdk(server), "bench/solo").bench
        page.goto(server.url)
        page.locator(f'button.chip[data-call="{reply["seats"][0]["call"]}"]').click()
        answer = page.locator("#seat-answer")
        from playwright.sync_api import expect

        expect(answer).to_contain_text("<script>window.__pwned = 1; alert(1)</script>")
        expect(answer).to_contain_text('<img src=x onerror="window.__pwned = 2">')
        expect(answer).to_contain_text("[click me](javascript:window.__pwned=3)")
        assert answer.locator("script, img, a").count() == 0
        assert page.evaluate("typeof window.__pwned") == "undefined"
        shot(page, "hostile-answer")
    finally:
        server.stop()


MARKDOWN = """## Findings

1. **Off-by-one** in `mean()`: an *empty* list divides by zero.
2. snake_case_names stay as they are

```python
def mean(xs): return sum(xs) / len(xs) if xs else 0.0
```

| case | result |
|---|---|
| [] | error |

> quoted

See [the guide](https://example.com/guide), https://docs.python.org/3/ and [bad](javascript:alert(1)).
"""


def test_answers_render_as_a_small_safe_markdown(bench, page):
    page.goto(bench.url)
    module = page.evaluate("document.querySelector('script[type=module]').src").replace("main.js", "markdown.js")
    html = page.evaluate(
        """async ([module, source]) => {
            const { renderMarkdown } = await import(module);
            const box = document.createElement("div");
            box.append(renderMarkdown(source));
            return box.innerHTML;
        }""",
        [module, MARKDOWN],
    )
    assert html == (
        "<h4>Findings</h4>"
        "<ol><li><strong>Off-by-one</strong> in <code>mean()</code>: an <em>empty</em> list divides by zero.</li>"
        "<li>snake_case_names stay as they are</li></ol>"
        '<pre><code class="language-python">def mean(xs): return sum(xs) / len(xs) if xs else 0.0</code></pre>'
        '<table><thead><tr><th scope="col">case</th><th scope="col">result</th></tr></thead>'
        "<tbody><tr><td>[]</td><td>error</td></tr></tbody></table>"
        "<blockquote><p>quoted</p></blockquote>"
        '<p>See <a href="https://example.com/guide" rel="noopener noreferrer nofollow" target="_blank" '
        'referrerpolicy="no-referrer">the guide</a>, <a href="https://docs.python.org/3/" '
        'rel="noopener noreferrer nofollow" target="_blank" referrerpolicy="no-referrer">https://docs.python.org/3/</a>'
        " and [bad](javascript:alert(1)).</p>"
    )


def test_a_seat_the_panel_skipped_is_a_grey_chip_saying_why(bench, page):
    from playwright.sync_api import expect

    seeing = httpx2.patch(f"{bench.url}/api/models/fake/kimi-k2", json={"vision": True})
    assert seeing.status_code == 200
    make_collection(bench, "look", ["kimi-k2", "phi-4"], max_explorers=0)
    image = [{"type": "text", "text": "What is this?"},
             {"type": "image_url", "image_url": {"url": "https://photos.example/chair.jpg"}}]  # fmt: skip
    reply = sdk(bench).chat.completions.create(model="bench/look", messages=[{"role": "user", "content": image}])
    assert reply.bench["skipped"] == [{"seat": "member", "alias": "fake/phi-4", "why": "cannot take images"}]
    page.goto(bench.url)
    panel = page.locator(f'li.panel[data-panel-id="{reply.bench["panel"]}"]')
    expect(panel).to_contain_text("shape vision")
    skipped = panel.locator(".chip.is-skipped")
    expect(skipped).to_have_text(re.compile(r"member\s*fake/phi-4"))
    expect(skipped).to_have_attribute("title", "member fake/phi-4: skipped, cannot take images")
    assert skipped.evaluate("el => getComputedStyle(el).backgroundColor") == _rgb(
        page.evaluate("getComputedStyle(document.documentElement).getPropertyValue('--skip-bg').trim()")
    )
    shot(page, "skipped-seat")


def test_a_window_set_in_the_model_popup_is_what_the_gateway_uses(bench, page):
    from playwright.sync_api import expect

    make_collection(bench, "pair", ["llama-3.3-70b", "qwen3-32b"], max_explorers=0)
    page.goto(f"{bench.url}/models")
    page.click('button[data-model="fake/llama-3.3-70b"]')
    popup = page.locator("#model-dialog")
    expect(popup).to_be_visible()
    expect(popup.locator('input[name="context"]')).to_have_value("128000")
    expect(popup.locator("#model-facts")).to_contain_text("listing")
    shot(page, "model-popup")
    popup.locator('input[name="context"]').fill("4000")
    popup.locator('input[name="vision"]').check()
    popup.locator('button[type="submit"]').click()
    expect(page.locator("#flash")).to_have_text("Saved fake/llama-3.3-70b: context, vision")
    row = page.locator('tr[data-alias="fake/llama-3.3-70b"]')
    expect(row).to_contain_text("4,000")
    expect(row).to_contain_text("override")
    shot(page, "models")

    together = {m.id: m.model_extra["together"] for m in sdk(bench).models.list()}
    assert together["bench/pair"]["context_window"] == 4_000
    with pytest.raises(openai.APIStatusError) as refused:
        ask(sdk(bench), "bench/pair", "word " * 4_000)  # about 5,500 tokens
    assert refused.value.status_code == 413
    assert "fake/llama-3.3-70b (4,000 tokens)" in refused.value.message
    assert "qwen3-32b" not in refused.value.message


def test_a_new_key_is_shown_once_and_asks_by_its_name(tmp_path, fake, page):
    from playwright.sync_api import expect

    # Making keys on the dashboard needs the admin token (an open dashboard may not mint them).
    server = start_server(tmp_path, fake, admin_token=TOKEN)
    try:
        auth = {"authorization": f"Bearer {TOKEN}"}
        body = {"name": "alpha", "members": ["fake/llama-3.3-70b"], "max_explorers": 0}
        assert httpx2.post(f"{server.url}/api/collections", json=body, headers=auth).status_code == 201
        page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=server.url)
        page.goto(f"{server.url}/login?next=%2Fsettings")
        page.fill("#token", TOKEN)
        page.click("button[type=submit]")
        page.goto(f"{server.url}/settings#keys")
        page.click("#keys summary")
        form = page.locator("#key-form")
        form.locator('input[name="name"]').fill("notes-app")
        form.locator('input[name="collections"][value="alpha"]').check()
        form.locator('input[name="rpm"]').fill("30")
        form.locator('button[type="submit"]').click()
        shown = page.locator("#new-key-value")
        expect(shown).to_have_text(re.compile(r"^bwk_[A-Za-z0-9_-]{43}$"))
        key = shown.inner_text()
        page.click("#copy-key")
        expect(page.locator("#copy-status")).to_have_text("Copied to the clipboard.")
        assert page.evaluate("navigator.clipboard.readText()") == key
        shot(page, "new-key")
        page.click("#key-done")
        row = page.locator('tr[data-key="notes-app"]')
        expect(row).to_contain_text(f"…{key[-4:]}")
        expect(row).to_contain_text("bench/alpha")
        expect(row).to_contain_text("30")
        assert key not in page.content()

        # The key works, and its name is who asked on the Gateway card; the dashboard judges as admin.
        reply = ask(sdk(server, key), "bench/alpha").bench
        page.goto(server.url)
        panel = page.locator(f'li.panel[data-panel-id="{reply["panel"]}"]')
        expect(panel).to_contain_text("Asked by notes-app")
        assert page.locator("body").get_attribute("data-verdict-url") == "/api/verdicts"
        panel.locator("button.chip").first.click()
        page.check('#verdict-form input[name="useful"][value="false"]')
        page.click('#verdict-form button[type="submit"]')
        expect(panel.locator("button.chip").first).to_have_class(re.compile(r"\bis-not-useful\b"))
        page.goto(f"{server.url}/settings")
        expect(page.locator('tr[data-key="notes-app"]')).not_to_contain_text("never")  # last used
    finally:
        server.stop()


def test_themes_switch_are_remembered_and_every_page_is_shot_in_each(bench, page):
    from playwright.sync_api import expect

    make_collection(bench, "reviewers", ["llama-3.3-70b", "qwen3-32b"], shape="review")
    ask(sdk(bench), "bench/reviewers")
    for theme in (*THEMES[1:], THEMES[0]):  # dark, the default, last: choosing it is then a change
        page.goto(f"{bench.url}/settings")
        page.click(f'label[data-preview="{theme}"]')
        expect(page.locator("html")).to_have_attribute("data-theme", theme)
        expect(page.locator("#theme-css")).to_have_attribute("href", re.compile(rf"/themes/{theme}\.css$"))
        page.reload()
        expect(page.locator("html")).to_have_attribute("data-theme", theme)
        assert page.evaluate("localStorage.getItem('bw-theme')") == theme
        background = page.evaluate("getComputedStyle(document.documentElement).backgroundColor")
        declared = page.evaluate("getComputedStyle(document.documentElement).getPropertyValue('--bg').trim()")
        assert background == _rgb(declared)
        for name, path in PAGES.items():
            page.goto(f"{bench.url}{path}")
            expect(page.locator("html")).to_have_attribute("data-theme", theme)
            if name == "collections":
                expect(page.locator("li.panel")).to_have_count(1)
            shot(page, f"{name}-{theme}")


def test_discover_judges_reachable_from_the_listing_and_adds_through_an_unread_endpoint(bench, fake, page):
    from playwright.sync_api import expect

    page.goto(f"{bench.url}/discover?free=1&q=qwen3-coder")
    row = page.locator('tr[data-id="openrouter/qwen/qwen3-coder:free"]')
    expect(row).to_contain_text("not in fake's listing")  # fake's kind is openrouter, but it does not list it
    expect(row.locator("button[data-add]")).to_have_count(0)
    body = {"name": "or2", "base_url": fake.base_url, "kind": "openrouter"}
    assert httpx2.post(f"{bench.url}/api/endpoints", json=body).status_code == 201
    page.reload()
    expect(row).to_contain_text("listing not read yet: refresh or2 to know")
    row.locator("button[data-add]").click()
    expect(row).to_contain_text("added as or2/qwen/qwen3-coder:free")
    models = httpx2.get(f"{bench.url}/api/models").json()["data"]
    assert "or2/qwen/qwen3-coder:free" in {m["alias"] for m in models}
    page.goto(f"{bench.url}/discover?q=gpt-oss-120b")
    offer = page.locator('tr[data-id="cerebras/gpt-oss-120b"] a[data-add-provider]')
    expect(offer).to_have_text("Add this provider")
    offer.click()
    expect(page.locator("#add-endpoint")).to_have_attribute("open", "")
    expect(page.locator('#endpoint-form select[name="preset"]')).to_have_value("cerebras")


def test_the_settings_form_refuses_zero_pings_beside_the_field_and_saves_a_good_value(bench, page):
    from playwright.sync_api import expect

    page.goto(f"{bench.url}/settings#limits")
    form = page.locator("#limits-form")
    pings = form.locator('input[name="ping_interval"]')
    expect(pings).to_have_attribute("min", "1")
    expect(pings).to_have_attribute("max", "60")
    pings.fill("0")
    form.locator('button[type="submit"]').click()
    error = form.locator('[data-error-for="ping_interval"]')
    expect(error).to_have_text("ping_interval must be from 1 to 60 seconds (got 0)")
    expect(pings).to_have_attribute("aria-invalid", "true")
    assert httpx2.get(f"{bench.url}/api/settings").json()["ping_interval"] == 5
    pings.fill("2.5")
    form.locator('button[type="submit"]').click()
    expect(page.locator("#flash")).to_have_text("Saved the gateway settings")
    expect(page.locator('#limits-form input[name="ping_interval"]')).to_have_value("2.5")
    assert httpx2.get(f"{bench.url}/api/settings").json()["ping_interval"] == 2.5


def test_with_an_admin_token_every_page_asks_for_it_first(tmp_path, fake, page):
    from playwright.sync_api import expect

    server = start_server(tmp_path, fake, admin_token=TOKEN)
    try:
        page.goto(f"{server.url}/models")
        expect(page).to_have_url(re.compile(r"/login\?next=%2Fmodels$"))
        expect(page.locator("#token")).to_be_visible()
        page.fill("#token", "not the token")
        page.click("button[type=submit]")
        expect(page.locator(".error")).to_be_visible()
        page.fill("#token", TOKEN)
        page.click("button[type=submit]")
        expect(page).to_have_url(f"{server.url}/models")
        expect(page.locator('tr[data-alias="fake/phi-4"]')).to_be_visible()
        cookie = next(c for c in page.context.cookies() if c["name"] == "bw_session")
        assert (cookie["httpOnly"], cookie["sameSite"]) == (True, "Strict")
        page.goto(server.url)
        expect(page.locator("#panels")).to_contain_text("No panels yet")  # /api answers the session
        expect(page.locator("#owed-count")).to_have_text("0")
    finally:
        server.stop()


def test_with_keys_required_the_login_url_opens_the_dashboard_and_a_collection_is_edited(tmp_path, fake, page):
    from playwright.sync_api import expect

    server = start_server(tmp_path, fake, require_keys=True)  # no admin token: the home's dashboard-token
    try:
        auth = server.admin_headers()
        body = {"name": "pair", "members": ["fake/llama-3.3-70b"], "description": "review", "max_explorers": 0}
        assert httpx2.post(f"{server.url}/api/collections", json=body, headers=auth).status_code == 201
        key = httpx2.post(f"{server.url}/api/keys", json={"name": "app"}, headers=auth).json()["key"]
        # A page without the session goes to the login form, which says where the token is.
        page.goto(server.url)
        expect(page).to_have_url(f"{server.url}/login?next=%2F")
        expect(page.locator("label[for=token]")).to_have_text("Dashboard token")
        expect(page.locator("main")).to_contain_text("benchwarmers dashboard-url")
        # An app's gateway key is not the dashboard's token.
        page.fill("#token", key)
        page.click("button[type=submit]")
        expect(page.locator(".error")).to_have_text("That is not the dashboard token.")
        # The URL `serve` prints: exchanged once for the session, then on to a page without the token in it.
        page.goto(f"{server.url}/login?token={server.dashboard_token()}&next=%2F")
        expect(page).to_have_url(f"{server.url}/")
        cookie = next(c for c in page.context.cookies() if c["name"] == "bw_session")
        assert (cookie["httpOnly"], cookie["sameSite"]) == (True, "Strict")
        assert server.dashboard_token() not in cookie["value"]
        # A page that writes: edit the collection, through /api with the session.
        page.click('button[data-edit="pair"]')
        page.fill("#member-input", "fake/qwen3-32b")
        page.press("#member-input", "Enter")
        page.locator('#collection-form button[type="submit"]').click()
        expect(page.locator("#flash")).to_have_text("Saved bench/pair")
        row = page.locator('tr[data-collection="pair"]')
        expect(row).to_contain_text("fake/qwen3-32b")
        shot(page, "keys-required-edited")
        listed = httpx2.get(f"{server.url}/api/collections", headers=auth).json()["data"]
        assert [c["members"] for c in listed] == [["fake/llama-3.3-70b", "fake/qwen3-32b"]]
        changes = httpx2.get(f"{server.url}/api/changes?subject=collection", headers=auth).json()["data"]
        assert [(c["actor"], c["action"], c["name"]) for c in changes] == [
            ("admin", "update", "pair"),
            ("admin", "create", "pair"),
        ]
        # The gateway key still cannot do what the page just did.
        bearer = {"authorization": f"Bearer {key}"}
        refused = httpx2.put(f"{server.url}/api/collections/pair", json=body, headers=bearer)
        assert refused.status_code == 401
        # Logging out ends it: the next page asks again.
        page.click(".logout button")
        expect(page).to_have_url(re.compile(r"/login$"))
        page.goto(f"{server.url}/settings")
        expect(page).to_have_url(f"{server.url}/login?next=%2Fsettings")
    finally:
        server.stop()


def _rgb(hex_colour: str) -> str:
    red, green, blue = (int(hex_colour.lstrip("#")[i : i + 2], 16) for i in (0, 2, 4))
    return f"rgb({red}, {green}, {blue})"
