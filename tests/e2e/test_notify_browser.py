"""The Settings page's Notifications card in a real browser: a target added through the form, its
Test button posting a test notification to a webhook on loopback, its Remove button."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from benchwarmers.bench.notify.targets import TEST_TITLE
from tests.fakes.webhook import WebhookReceiver
from tests.support.benchserver import BenchServer
from tests.support.browser import browser, page  # noqa: F401 (the fixtures, reused)

pytestmark = pytest.mark.browser


@pytest.fixture
def hook() -> Iterator[WebhookReceiver]:
    with WebhookReceiver() as receiver:
        yield receiver


def test_the_notifications_card_adds_tests_and_removes_a_target(tmp_path: Path, hook, page) -> None:  # noqa: F811
    from playwright.sync_api import expect

    server = BenchServer(tmp_path / "home").start()
    try:
        page.goto(f"{server.url}/settings#notify")
        expect(page.locator("#notify .empty")).to_contain_text("No notification targets")
        page.click("#notify summary")
        form = page.locator("#notify-form")
        form.locator('input[name="url"]').fill(hook.apprise_url("/s3cret-hook"))
        form.locator('input[name="name"]').fill("ops")
        form.locator('button[type="submit"]').click()
        row = page.locator('tr[data-notify="ops"]')
        expect(row).to_contain_text(f"json://127.0.0.1:{hook.port}")
        assert "s3cret-hook" not in page.content()

        row.locator("[data-test-notify]").click()
        expect(row.locator("[data-notify-result]")).to_have_text("sent: check that it arrived")
        assert [(r.path, r.body["title"]) for r in hook.received] == [("/s3cret-hook", TEST_TITLE)]

        row.locator("[data-remove-notify]").click()  # the page's fixture accepts the confirm()
        expect(page.locator('tr[data-notify="ops"]')).to_have_count(0)
        expect(page.locator("#notify .empty")).to_contain_text("No notification targets")
    finally:
        server.stop()
