"""Headless chromium for browser tests: Debian's build, launched the way this machine allows."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = Path("/usr/bin/chromium")
# Without the background-networking flags chromium keeps dialling hosts this sandbox cannot reach.
LAUNCH_ARGS = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def require_chromium() -> None:
    """Fail in CI (which installs chromium); skip only on a developer machine without it."""
    if CHROMIUM.exists():
        return
    if os.environ.get("CI"):
        pytest.fail(f"{CHROMIUM} is missing: scripts/test installs Debian's chromium for the browser tests")
    pytest.skip(f"{CHROMIUM} is missing (apt-get install chromium); CI runs these tests")


def launch(playwright: Any) -> Any:
    return playwright.chromium.launch(executable_path=str(CHROMIUM), args=LAUNCH_ARGS)


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


@pytest.fixture
def page(browser: Any, request: pytest.FixtureRequest) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.set_default_timeout(5_000)
    tab = context.new_page()
    errors: list[str] = []
    tab.on("pageerror", lambda error: errors.append(str(error)))
    # Script errors and CSP refusals count; a 4xx the page asked for on purpose (a refused form) does not.
    tab.on(
        "console",
        lambda message: (
            message.type == "error"
            and not message.text.startswith("Failed to load resource: the server responded with a status of 4")
            and errors.append(message.text)
        ),
    )
    tab.on("dialog", lambda dialog: dialog.accept())  # window.confirm before a delete
    try:
        yield tab
    finally:
        context.close()
    assert errors == [], f"errors in the page during {request.node.name}"
