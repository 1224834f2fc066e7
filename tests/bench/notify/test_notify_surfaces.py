"""Notifications from the outside: `/api/notify` and the Settings page's card (add, test button,
remove) over real HTTP, `serve`'s own drain sending a new alert to a webhook on loopback once, and
`benchwarmers notify add/list/test/remove/drain`."""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from typer.testing import CliRunner

from benchwarmers.bench.notify.targets import TEST_BODY, TEST_TITLE
from benchwarmers.bench.services import Bench
from benchwarmers.cli.app import app
from benchwarmers.store import alerts as alert_rows
from benchwarmers.store import notify as notify_rows
from tests.fakes.webhook import WebhookReceiver
from tests.support.benchserver import BenchServer

SECRET = "t0ken-in-the-path"


@pytest.fixture
def hook() -> Iterator[WebhookReceiver]:
    with WebhookReceiver() as receiver:
        yield receiver


@pytest.fixture
def server(tmp_path: Path) -> Iterator[BenchServer]:
    bench_server = BenchServer(tmp_path / "home", notify_every=0.05).start()
    try:
        yield bench_server
    finally:
        bench_server.stop()


def wait_until(condition: Any, what: str, timeout: float = 30.0) -> None:
    """Poll `condition` (the server's drain runs on its own loop) until it holds."""
    done = threading.Event()
    for _ in range(int(timeout / 0.02)):
        if condition():
            return
        done.wait(0.02)
    raise AssertionError(f"{what} within {timeout} s")


def test_the_api_adds_tests_lists_and_removes_a_target_and_never_shows_its_url(server, hook):
    url = hook.apprise_url(f"/{SECRET}")
    made = httpx2.post(f"{server.url}/api/notify", json={"url": url, "name": "ops"})
    assert made.status_code == 201, made.text
    assert made.headers["cache-control"] == "no-store"
    assert made.json() == {
        "name": "ops",
        "label": f"json://127.0.0.1:{hook.port}",
        "created_at": made.json()["created_at"],
        "sent": 0,
        "pending": 0,
        "failed": 0,
        "last_error": None,
    }
    tried = httpx2.post(f"{server.url}/api/notify/ops/test", timeout=30)
    assert (tried.status_code, tried.json()) == (
        200,
        {"name": "ops", "label": f"json://127.0.0.1:{hook.port}", "status": "ok", "error": None},
    )
    [received] = hook.received
    assert (received.path, received.body) == (
        f"/{SECRET}",
        {"version": "1.0", "title": TEST_TITLE, "message": TEST_BODY, "attachments": [], "type": "info"},
    )

    listed = httpx2.get(f"{server.url}/api/notify")
    assert [t["name"] for t in listed.json()["data"]] == ["ops"]
    changes = httpx2.get(f"{server.url}/api/changes", params={"subject": "notify"}).text
    for text in (listed.text, changes):
        assert SECRET not in text and url not in text

    duplicate = httpx2.post(f"{server.url}/api/notify", json={"url": url, "name": "ops"})
    assert (duplicate.status_code, duplicate.json()["error"]["code"]) == (409, "target_exists")
    bad = httpx2.post(f"{server.url}/api/notify", json={"url": "nonsense://x"})
    assert bad.status_code == 400
    assert bad.json()["error"] | {"message": ""} == {
        "message": "",
        "type": "invalid_request_error",
        "param": "url",
        "code": "invalid_notify_url",
    }
    assert httpx2.delete(f"{server.url}/api/notify/ops").json() == {
        "name": "ops",
        "label": f"json://127.0.0.1:{hook.port}",
        "removed": True,
    }
    gone = httpx2.post(f"{server.url}/api/notify/ops/test")
    assert (gone.status_code, gone.json()["error"]["message"]) == (
        404,
        "no notification target 'ops'. There are none: add one with `notify add URL`.",
    )


def test_a_failing_test_button_says_why(server):
    # Port 9 (discard) on loopback: nothing listens, so the service cannot be reached.
    httpx2.post(f"{server.url}/api/notify", json={"url": f"json://127.0.0.1:9/{SECRET}", "name": "down"})
    tried = httpx2.post(f"{server.url}/api/notify/down/test", timeout=30).json()
    assert tried == {
        "name": "down",
        "label": "json://127.0.0.1:9",
        "status": "failed",
        "error": "failure: A Connection error occurred sending JSON notification to 127.0.0.1.",
    }


def test_the_settings_card_lists_targets_with_their_test_and_remove_buttons(server, hook):
    empty = httpx2.get(f"{server.url}/settings").text
    assert '<section class="card" id="notify"' in empty
    assert "No notification targets" in empty
    assert '<form id="notify-form"' in empty
    httpx2.post(f"{server.url}/api/notify", json={"url": hook.apprise_url(f"/{SECRET}"), "name": "ops"})
    page = httpx2.get(f"{server.url}/settings").text
    assert re.search(rf'<td class="mono">json://127\.0\.0\.1:{hook.port}</td>', page)
    assert '<button type="button" class="button" data-test-notify="ops">Test</button>' in page
    assert 'data-remove-notify="ops"' in page
    assert SECRET not in page
    assert 'id="notify-missing"' not in page  # Apprise is installed here
    [main] = re.findall(r'src="(/static/[^"]+/js/main\.js)"', page)
    script = httpx2.get(server.url + main.replace("main.js", "pages/settings-notify.js"))
    assert script.status_code == 200
    # What the Test button posts to is the route exercised above.
    assert "/api/notify/${encodeURIComponent(button.dataset.testNotify)}/test" in script.text


def test_serve_sends_a_new_alert_to_the_webhook_once(server, hook):
    httpx2.post(f"{server.url}/api/notify", json={"url": hook.apprise_url("/alerts"), "name": "ops"})

    async def raise_twice(bench: Bench) -> int | None:  # the CLI, say: another process over the same database
        async with bench.state.write() as conn:
            first = await alert_rows.raise_alert(conn, kind="retiring", subject="fake/m1", message="gone", now=1.0)
            again = await alert_rows.raise_alert(conn, kind="retiring", subject="fake/m1", message="gone", now=2.0)
        assert again is None
        return first

    alert_id = server.admin(raise_twice)
    [received] = hook.wait_for(1)
    assert received.body["title"] == "Benchwarmers: retiring: fake/m1"
    assert received.body["message"].startswith(f"gone\n\nAlert {alert_id}: acknowledge it on")

    async def rows(bench: Bench) -> list[dict[str, Any]]:
        async with bench.state.read() as conn:
            return await notify_rows.deliveries(conn)

    wait_until(lambda: server.admin(rows)[0]["sent_at"] is not None, "the delivery recorded as sent")
    job = server._server.config.app.state.notify  # type: ignore[union-attr]
    later = job.rounds + 3
    wait_until(lambda: job.rounds >= later, "three more rounds of the drain")
    assert len(hook.received) == 1
    assert job.failures == 0


def test_the_cli_adds_lists_tests_drains_and_removes(tmp_path: Path, hook, monkeypatch):
    monkeypatch.setenv("BENCHWARMERS_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("COLUMNS", "200")
    runner = CliRunner()
    label = f"json://127.0.0.1:{hook.port}"
    added = runner.invoke(app, ["notify", "add", "-", "--name", "ops"], input=hook.apprise_url(f"/{SECRET}") + "\n")
    assert (added.exit_code, added.stdout) == (
        0,
        f"notification target 'ops' added ({label}): new alerts go to it; try it with `benchwarmers notify test ops`\n",
    )
    tested = runner.invoke(app, ["notify", "test", "ops"])
    assert (tested.exit_code, tested.stdout) == (0, f"test notification sent to 'ops' ({label})\n")

    async def raise_one(bench: Bench) -> None:
        async with bench.state.write() as conn:
            await alert_rows.raise_alert(conn, kind="failing", subject="fake/m2", message="retired", now=1.0)

    BenchServer(tmp_path / "home").admin(raise_one)
    drained = runner.invoke(app, ["notify", "drain"])
    assert (drained.exit_code, drained.stdout) == (0, "1 sent, 0 to retry later, 0 given up (1 new)\n")
    assert runner.invoke(app, ["notify", "drain"]).stdout == "0 sent, 0 to retry later, 0 given up (0 new)\n"
    assert [r.body["title"] for r in hook.received] == [TEST_TITLE, "Benchwarmers: failing: fake/m2"]

    listed = runner.invoke(app, ["notify", "list"])
    assert listed.exit_code == 0
    assert re.search(rf"ops\s+│\s+{re.escape(label)}\s+│[^│]+│\s+1\s+│\s+0\s+│\s+0\s+│", listed.stdout), listed.stdout
    assert SECRET not in listed.stdout
    removed = runner.invoke(app, ["notify", "remove", "ops"])
    assert (removed.exit_code, removed.stdout) == (0, f"notification target 'ops' ({label}) removed\n")
    missing = runner.invoke(app, ["notify", "test", "ops"])
    assert (missing.exit_code, missing.stderr) == (
        1,
        "error: no notification target 'ops'. There are none: add one with `notify add URL`.\n",
    )
