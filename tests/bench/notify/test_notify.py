"""Notifications: each new alert reaches each target once, through Apprise, to a real webhook receiver
on loopback (Apprise's `json://` target); failures are retried later and logged without the URL's
secrets; two drains at once (two workers, two hosts) send nothing twice; the URL is stored sealed."""

from __future__ import annotations

import asyncio
import logging
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from benchwarmers.bench.notify import apprise_send
from benchwarmers.bench.notify import drain as notify_drain
from benchwarmers.bench.services import Bench
from benchwarmers.bench.upkeep.disk import check_disk
from benchwarmers.errors import InvalidRequest, NotFound, Unavailable
from benchwarmers.settings import Settings
from benchwarmers.store import alerts as alert_rows
from benchwarmers.store import notify as notify_rows
from benchwarmers.store.schema import notify_targets
from tests.fakes.webhook import WebhookReceiver

SECRET = "s3cr3t-path-token"


@pytest.fixture
def hook() -> Iterator[WebhookReceiver]:
    with WebhookReceiver() as receiver:
        yield receiver


def run(home: Path, action: Any, **env: Any) -> Any:
    async def main() -> Any:
        async with Bench(Settings(home=home, **env), actor="test") as bench:
            return await action(bench)

    return asyncio.run(main())


def sent_body(alert_id: int, kind_label: str, subject: str, message: str) -> dict[str, Any]:
    return {
        "version": "1.0",
        "title": f"Benchwarmers: {kind_label}: {subject}",
        "message": f"{message}\n\nAlert {alert_id}: acknowledge it on the dashboard's Settings page "
        f"or with `benchwarmers alerts --ack {alert_id}`.",
        "attachments": [],
        "type": "warning",
    }


def test_a_new_alert_reaches_the_webhook_once(tmp_path: Path, hook: WebhookReceiver) -> None:
    home = tmp_path / "home"

    async def scenario(bench: Bench) -> dict[str, Any]:
        target = await bench.notify.add(hook.apprise_url(f"/alerts/{SECRET}"), "ops")
        # The disk check raises its alert; the same trigger again raises nothing new (it is open).
        assert await check_disk(bench.state) == "raised"
        assert await check_disk(bench.state) is None
        first = await notify_drain.drain(bench.state)
        again = await notify_drain.drain(bench.state)
        async with bench.state.write() as conn:
            paid = await alert_rows.raise_alert(
                conn, kind="went_paid", subject="fake/m1", message="fake/m1 now costs $1 per million tokens.", now=1.0
            )
        second = await notify_drain.drain(bench.state)
        third = await notify_drain.drain(bench.state)
        async with bench.state.read() as conn:
            rows = await notify_rows.deliveries(conn)
            alerts = await alert_rows.list_alerts(conn)
        return {
            "target": target,
            "drains": [first, again, second, third],
            "rows": rows,
            "alerts": alerts,
            "paid": paid,
            "listed": await bench.notify.list_targets(),
        }

    done = run(home, scenario, disk_alert_mb=10**12)  # a petabyte: every disk is "low"
    low_disk = next(a for a in done["alerts"] if a["kind"] == "low_disk")
    assert done["target"] == {
        "name": "ops",
        "label": f"json://127.0.0.1:{hook.port}",
        "created_at": done["target"]["created_at"],
        "sent": 0,
        "pending": 0,
        "failed": 0,
        "last_error": None,
    }
    assert done["drains"] == [
        notify_drain.Drained(queued=1, sent=1),
        notify_drain.Drained(),
        notify_drain.Drained(queued=1, sent=1),
        notify_drain.Drained(),
    ]
    # Exactly one POST per alert, in the order they were raised, with the alert in the body.
    assert [(r.path, r.headers["content-type"]) for r in hook.received] == [
        (f"/alerts/{SECRET}", "application/json"),
        (f"/alerts/{SECRET}", "application/json"),
    ]
    assert [r.body for r in hook.received] == [
        sent_body(low_disk["id"], "disk space low", low_disk["subject"], low_disk["message"]),
        sent_body(done["paid"], "went paid", "fake/m1", "fake/m1 now costs $1 per million tokens."),
    ]
    assert [(r["alert_id"], r["attempts"], r["sent_at"] is not None, r["claim"]) for r in done["rows"]] == [
        (low_disk["id"], 1, True, None),
        (done["paid"], 1, True, None),
    ]
    assert [{k: t[k] for k in ("name", "sent", "pending", "failed")} for t in done["listed"]] == [
        {"name": "ops", "sent": 2, "pending": 0, "failed": 0}
    ]


def test_alerts_raised_before_a_target_was_added_are_not_sent_to_it(tmp_path: Path, hook: WebhookReceiver) -> None:
    async def scenario(bench: Bench) -> notify_drain.Drained:
        async with bench.state.write() as conn:
            await alert_rows.raise_alert(conn, kind="retiring", subject="fake/old", message="old news", now=1.0)
        await bench.notify.add(hook.apprise_url(), "ops")
        return await notify_drain.drain(bench.state)

    assert run(tmp_path / "home", scenario) == notify_drain.Drained()
    assert hook.received == []


def test_two_drains_at_once_send_each_alert_once(tmp_path: Path, hook: WebhookReceiver) -> None:
    """Two benches over one database (two workers, or two hosts on one PostgreSQL) drain together."""
    settings = Settings(home=tmp_path / "home")

    async def scenario() -> list[notify_drain.Drained]:
        async with Bench(settings, actor="one") as one, Bench(settings, actor="two") as two:
            await one.notify.add(hook.apprise_url("/a"), "a")
            await one.notify.add(hook.apprise_url("/b"), "b")
            async with one.state.write() as conn:
                for n in range(3):
                    await alert_rows.raise_alert(conn, kind="failing", subject=f"fake/m{n}", message=f"m{n}", now=1.0)
            return list(await asyncio.gather(notify_drain.drain(one.state), notify_drain.drain(two.state)))

    drained = asyncio.run(scenario())
    assert sum(d.sent for d in drained) == 6  # 3 alerts x 2 targets, between the two
    assert sorted((r.path, r.body["title"]) for r in hook.received) == sorted(
        (path, f"Benchwarmers: failing: fake/m{n}") for path in ("/a", "/b") for n in range(3)
    )


def test_a_failed_send_is_retried_later_then_given_up_and_logged_without_secrets(
    tmp_path: Path, hook: WebhookReceiver, caplog: pytest.LogCaptureFixture
) -> None:
    clock = [1_000_000.0]

    async def scenario(bench: Bench) -> list[Any]:
        await bench.notify.add(hook.apprise_url(f"/{SECRET}"), "ops")
        async with bench.state.write() as conn:
            await alert_rows.raise_alert(conn, kind="owed", subject="verdicts", message="5 seats await", now=1.0)
            await alert_rows.raise_alert(conn, kind="owed", subject="later", message="6 seats await", now=1.0)
        steps = []

        async def step(at: float) -> None:
            clock[0] = at
            drained = await notify_drain.drain(bench.state, clock=lambda: clock[0])
            async with bench.state.read() as conn:
                rows = await notify_rows.deliveries(conn)
            steps.append((drained, [(r["attempts"], r["due_at"], r["sent_at"], r["gave_up_at"]) for r in rows]))

        hook.fail_next(2)  # the service is down for the first two posts
        t0 = clock[0]
        await step(t0)  # both fail: due again in 60 s
        await step(t0 + 30)  # not due yet: nothing sent
        await step(t0 + 61)  # both sent
        return steps

    steps = run(tmp_path / "home", scenario)
    t0 = 1_000_000.0
    assert steps == [
        (notify_drain.Drained(queued=2, retrying=2), [(1, t0 + 60, None, None), (1, t0 + 60, None, None)]),
        (notify_drain.Drained(), [(1, t0 + 60, None, None), (1, t0 + 60, None, None)]),
        (notify_drain.Drained(sent=2), [(2, t0 + 60, t0 + 61, None), (2, t0 + 60, t0 + 61, None)]),
    ]
    assert len(hook.received) == 4
    failures = [r.getMessage() for r in caplog.records if r.name == "benchwarmers.notify"]
    assert len(failures) == 2
    assert failures[0].startswith(
        f"notification of alert 1 to ops (json://127.0.0.1:{hook.port}) failed, attempt 1 of 5 (next try in 60 s): "
        "failure: "
    )
    assert not [r for r in caplog.records if SECRET in r.getMessage()]


def test_a_target_that_keeps_failing_is_given_up_after_the_last_attempt(tmp_path: Path, hook: WebhookReceiver) -> None:
    async def scenario(bench: Bench) -> list[notify_drain.Drained]:
        await bench.notify.add(hook.apprise_url(), "ops")
        async with bench.state.write() as conn:
            await alert_rows.raise_alert(conn, kind="owed", subject="verdicts", message="5 seats await", now=1.0)
        hook.fail_next(100)
        drained = []
        for n in range(notify_drain.ATTEMPTS + 1):
            at = n * 10 * 86_400.0  # each long past the last one's retry
            drained.append(await notify_drain.drain(bench.state, clock=lambda at=at: at))
        return drained

    drained = run(tmp_path / "home", scenario)
    assert [d.retrying for d in drained] == [1, 1, 1, 1, 0, 0]
    assert [d.gave_up for d in drained] == [0, 0, 0, 0, 1, 0]
    assert len(hook.received) == notify_drain.ATTEMPTS
    listed = run(tmp_path / "home", lambda bench: bench.notify.list_targets())
    assert [(t["sent"], t["pending"], t["failed"], t["last_error"]) for t in listed] == [
        (0, 0, 1, "failure: Failed to send JSON POST notification: Internal server error., error=500.")
    ]


def test_the_url_is_stored_sealed_and_shown_as_scheme_and_host(tmp_path: Path, hook: WebhookReceiver) -> None:
    url = f"jsons://user:{SECRET}@hooks.example.com/p/{SECRET}"

    async def scenario(bench: Bench) -> Any:
        await bench.notify.add(url, "remote")
        await bench.notify.add("slack://T1234567/B1234567/abcdefghijklmnop", "team")
        async with bench.state.read() as conn:
            stored = [dict(r._mapping) for r in await conn.execute(notify_targets.select())]
        return stored, await bench.notify.list_targets()

    stored, listed = run(tmp_path / "home", scenario)
    assert [(t["name"], t["label"]) for t in listed] == [("remote", "jsons://hooks.example.com"), ("team", "slack://…")]
    assert all(SECRET.encode() not in row["url_enc"] and b"T1234567" not in row["url_enc"] for row in stored)


def test_refusals_say_what_to_do(tmp_path: Path, hook: WebhookReceiver) -> None:
    home = tmp_path / "home"
    run(home, lambda bench: bench.notify.add(hook.apprise_url(), "ops"))
    with pytest.raises(InvalidRequest, match="Apprise does not understand this URL") as bad:
        run(home, lambda bench: bench.notify.add("nonsense://x", "bad"))
    assert (bad.value.param, bad.value.code) == ("url", "invalid_notify_url")
    with pytest.raises(NotFound) as missing:
        run(home, lambda bench: bench.notify.remove("opz"))
    assert str(missing.value) == "no notification target 'opz'. Did you mean ops? Targets: ops."


def test_without_apprise_a_configured_target_says_how_to_install_it(
    tmp_path: Path, hook: WebhookReceiver, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    home = tmp_path / "home"
    run(home, lambda bench: bench.notify.add(hook.apprise_url(), "ops"))
    monkeypatch.setitem(sys.modules, "apprise", None)  # `import apprise` raises ImportError now
    with pytest.raises(Unavailable) as refused:
        run(home, lambda bench: bench.notify.add(hook.apprise_url("/other"), "other"))
    assert str(refused.value) == (
        "notifications need the Apprise library, which is not installed: pip install 'benchwarmers[notify]' "
        "(or pip install apprise) where the bench runs, then try again."
    )

    async def raise_and_drain(bench: Bench) -> notify_drain.Drained:
        async with bench.state.write() as conn:
            await alert_rows.raise_alert(conn, kind="owed", subject="verdicts", message="5 seats await", now=1.0)
        return await notify_drain.drain(bench.state, clock=lambda: time.time())

    with caplog.at_level(logging.WARNING, "benchwarmers.notify"):
        assert run(home, raise_and_drain) == notify_drain.Drained(queued=1, retrying=1)
    assert "notifications need the Apprise library" in caplog.records[-1].getMessage()
    assert hook.received == []


@pytest.mark.parametrize(
    ("url", "label"),
    [
        ("ntfy://my-secret-topic", "ntfy://…"),
        ("discord://1234567890/webhook-token", "discord://…"),
        ("mailto://user:password@mail.example.org?to=me@example.org", "mailto://mail.example.org"),
        ("json://127.0.0.1:8080/hook?:token=abc", "json://127.0.0.1:8080"),
        ("matrixs://user:pw@matrix.example.org/!room", "matrixs://matrix.example.org"),
    ],
)
def test_a_label_is_the_scheme_and_a_real_host_only(url: str, label: str) -> None:
    assert apprise_send.label(url) == label


def test_a_failure_reason_loses_every_piece_of_the_url_but_its_scheme_and_host() -> None:
    url = f"jsons://user:{SECRET}@hooks.example.com/p/{SECRET}2"
    said = f"could not reach hooks.example.com for user at /p/{SECRET}2 with {SECRET} over jsons"
    assert apprise_send.scrub(said, url) == "could not reach hooks.example.com for … at /p/… with … over jsons"
    assert apprise_send.scrub("Slack said T1abc is invalid", "slack://T1abc/B2def/C3ghi") == "Slack said … is invalid"
