"""Headless chromium for browser tests: Debian's build, launched the way this machine allows."""

from __future__ import annotations

import os
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
