"""`benchwarmers upkeep`: the server's background jobs once, without a server (a went-paid alert from a
changed listing, the daily jobs skipped while not due), never beside a running server (the upkeep
lock, both ways), and the systemd timer and service that run it."""

from __future__ import annotations

import configparser
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import orjson
import pytest
from typer.testing import CliRunner

from benchwarmers.bench.admin import alerts as bench_alerts
from benchwarmers.bench.admin.refresh import LAST_RUN_KEY
from benchwarmers.bench.services import Bench
from benchwarmers.bench.upkeep import leader
from benchwarmers.bench.upkeep.leader import UpkeepLock
from benchwarmers.cli.app import app
from benchwarmers.store import gateway_settings as setting_rows
from benchwarmers.store import roster
from tests.fakes.upstream import FakeUpstream
from tests.support.benchserver import BenchServer, listed
from tests.support.gateway_fixtures import LLAMA, QWEN
from tests.support.serveprocess import run_admin

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
BENCHWARMERS = Path(sys.executable).with_name("benchwarmers")
DAY = 86_400.0
WENT_PAID = f"fake/{QWEN} was free and now has a price; it leaves the explorer pool until you acknowledge this alert"
WATCH_DONE = [
    ["probes", "done", "no retired model is due a probe"],
    ["disk", "done", "nothing changed"],
    ["owed", "done", "nothing changed"],
    ["swaps", "done", "no decisive swap"],
]


def paid_endpoint(home: Path, fake: FakeUpstream, *, due: bool = True) -> None:
    """A paid endpoint whose two models were listed free a day ago (`due`; else just now); its listing
    now prices qwen."""
    fake.listing("/v1/models", {"object": "list", "data": [listed(LLAMA), listed(QWEN)]})

    async def setup(bench: Bench) -> None:
        await bench.endpoints.add_endpoint("fake", fake.base_url, "openrouter", api_key=None, free_tier=False)
        await bench.endpoints.refresh_endpoint("fake")

    run_admin(home, setup)
    if due:
        a_day_ago(home)
    fake.listing("/v1/models", {"object": "list", "data": [listed(LLAMA), listed(QWEN, free=False)]})


def a_day_ago(home: Path) -> None:
    """Move the last refresh (the endpoint's and the whole catalog's) a day and a minute back: the daily
    refresh is due again."""

    async def rewind(bench: Bench) -> None:
        then = time.time() - DAY - 60
        async with bench.state.write() as conn:
            (row,) = await roster.list_endpoints(conn)
            await roster.update_endpoint(conn, row["id"], refreshed_at=then)
            last = await setting_rows.get_setting(conn, LAST_RUN_KEY)
            if last is not None:
                await setting_rows.put_setting(conn, LAST_RUN_KEY, {**last, "at": then})

    run_admin(home, rewind)


def open_alerts(home: Path) -> list[tuple[str, str, str]]:
    found = run_admin(home, lambda bench: bench_alerts.list_alerts(bench.state))
    return [(a["kind"], a["subject"], a["message"]) for a in found]


def listings_asked(fake: FakeUpstream) -> int:
    return sum(1 for r in fake.requests if r.path == "/v1/models")


def invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["upkeep", *args])
    return result.exit_code, result.output


def json_of(*args: str) -> tuple[int, dict[str, Any]]:
    code, output = invoke("--json", *args)
    return code, orjson.loads(output)


def rows(summary: dict[str, Any]) -> list[list[str]]:
    return [[j["job"], j["status"], j["detail"]] for j in summary["jobs"]]


def test_upkeep_without_a_server_raises_went_paid_from_a_changed_listing_and_exits_0(tmp_path, fake_upstream):
    home = tmp_path / "home"
    paid_endpoint(home, fake_upstream)
    env = {**os.environ, "BENCHWARMERS_HOME": str(home)}
    done = subprocess.run(
        [str(BENCHWARMERS), "upkeep", "--no-models-dev"], env=env, capture_output=True, text=True, timeout=120
    )
    # Piped (cron, a timer): tab-separated lines on stdout, and nothing on stderr unless something failed.
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.splitlines() == [
        "job\tstatus\tdetail",
        "refresh\tdone\t1 endpoint: 2 models listed, 0 new, 0 gone, 1 went paid",
        *("\t".join(row) for row in WATCH_DONE),
        "retention\tdone\tretention_days is 0: every prompt is kept",
        "notify\tdone\t0 sent, 0 to retry later, 0 given up (0 new)",  # no notification target set
        f"alert raised: went paid: fake/{QWEN}",
        "`benchwarmers alerts` lists them; `--ack ID` acknowledges one",
    ]
    assert open_alerts(home) == [("went_paid", f"fake/{QWEN}", WENT_PAID)]
    released = UpkeepLock(home)
    assert released.acquire()  # the run let go of the lock when it exited
    released.release()


def test_the_daily_refresh_is_not_run_again_within_the_day_unless_forced(tmp_path, fake_upstream, monkeypatch):
    home = tmp_path / "home"
    monkeypatch.setenv("BENCHWARMERS_HOME", str(home))
    monkeypatch.setenv("COLUMNS", "250")
    paid_endpoint(home, fake_upstream)
    code, first = json_of("--no-models-dev", "--only", "refresh")
    assert (code, rows(first)) == (0, [["refresh", "done", "1 endpoint: 2 models listed, 0 new, 0 gone, 1 went paid"]])
    assert first["jobs"][0]["sources"] == [
        {"source": "models.dev", "ok": True, "detail": "not fetched; using the bundled catalog"},
        {"source": "fake", "ok": True, "detail": "2 models listed, 0 new, 0 gone, 1 went paid"},
    ]
    assert [(a["id"], a["kind"], a["subject"], a["message"]) for a in first["alerts"]] == [
        (1, "went_paid", f"fake/{QWEN}", WENT_PAID)
    ]
    asked = listings_asked(fake_upstream)

    # An hour later, say (the timer's next run): the refresh ran minutes ago, so it is not due.
    code, again = json_of("--no-models-dev", "--only", "refresh")
    assert (code, rows(again)) == (0, [["refresh", "not due", "ran 0 min ago; due in 24 h (--force runs it now)"]])
    assert listings_asked(fake_upstream) == asked

    code, forced = json_of("--no-models-dev", "--only", "refresh", "--force")
    assert (code, rows(forced)) == (0, [["refresh", "done", "1 endpoint: 2 models listed, 0 new, 0 gone"]])
    assert (listings_asked(fake_upstream), forced["alerts"]) == (asked + 1, [])  # the transition is raised once
    assert len(open_alerts(home)) == 1

    # The table a person sees, with the alert it raised and where to read it.
    a_day_ago(home)
    fake_upstream.listing("/v1/models", {"object": "list", "data": [listed(LLAMA)]})
    code, output = invoke("--no-models-dev", "--only", "refresh")
    assert code == 0
    assert "1 endpoint: 1 models listed, 0 new, 1 gone, 1 retiring" in output
    assert output.endswith(
        f"alert raised: retiring: fake/{QWEN}\n`benchwarmers alerts` lists them; `--ack ID` acknowledges one\n"
    )


def test_only_names_jobs_and_groups_and_a_failed_job_is_one_error_line(tmp_path, fake_upstream, monkeypatch):
    home = tmp_path / "home"
    monkeypatch.setenv("BENCHWARMERS_HOME", str(home))
    code, watch = json_of("--only", "watch")
    assert (code, rows(watch)) == (0, WATCH_DONE)
    assert invoke("--only", "refreshes") == (
        1,
        "error: --only 'refreshes' is not an upkeep job; choose from refresh, probes, disk, owed, swaps, "
        "retention, notify, watch\n",
    )

    # Retention, daily like the server's: the run is remembered, so the next hourly run does not purge again.
    run_admin(home, lambda bench: bench.gateway_settings.set_gateway(retention_days=30))
    assert rows(json_of("--only", "retention")[1]) == [["retention", "done", "0 panels purged"]]
    assert rows(json_of("--only", "retention")[1]) == [
        ["retention", "not due", "ran 0 min ago; due in 24 h (--force runs it now)"]
    ]

    paid_endpoint(home, fake_upstream)
    fake_upstream.listing("/v1/models", {"error": {"message": "down for maintenance"}}, status=503)
    result = CliRunner().invoke(app, ["upkeep", "--no-models-dev", "--only", "refresh", "--only", "owed"])
    assert result.exit_code == 1
    (line,) = [ln for ln in result.output.splitlines() if ln.startswith("error:")]
    assert line.startswith("error: upkeep: refresh failed: 1 of 1 endpoint failed (fake: ")
    assert "owed" in result.output and "nothing changed" in result.output  # the other job still ran
    assert open_alerts(home) == []


def test_upkeep_does_nothing_while_a_server_holds_the_lock(tmp_path, fake_upstream, monkeypatch):
    home = tmp_path / "home"
    monkeypatch.setenv("BENCHWARMERS_HOME", str(home))
    paid_endpoint(home, fake_upstream, due=False)  # the server's own daily refresh is not due during the test
    server = BenchServer(home).start()
    try:
        asked = listings_asked(fake_upstream)
        # Not even --force runs a job beside the server that holds the lock.
        assert json_of("--no-models-dev", "--force") == (
            0,
            {"ran": False, "held_by": os.getpid(), "jobs": [], "alerts": []},
        )
        assert invoke("--no-models-dev", "--force") == (
            0,
            f"process {os.getpid()} holds the upkeep lock of {home} (a server runs these jobs itself, or another "
            "upkeep is running): nothing done; --wait waits for it\n",
        )
        assert listings_asked(fake_upstream) == asked  # the changed listing was never asked for
        assert open_alerts(home) == []
    finally:
        server.stop()
    code, summary = json_of("--no-models-dev", "--only", "refresh", "--force")
    assert (code, [a["kind"] for a in summary["alerts"]]) == (0, ["went_paid"])
    assert listings_asked(fake_upstream) == asked + 1


def test_a_server_started_during_an_upkeep_run_leads_once_it_is_over(tmp_path, monkeypatch):
    monkeypatch.setattr(leader, "RETRY_EVERY", 0.02)
    home = tmp_path / "home"
    home.mkdir()
    running = UpkeepLock(home)  # `benchwarmers upkeep` in the middle of its run
    assert running.acquire()
    server = BenchServer(home).start()
    try:
        assert server._server is not None
        app_state = server._server.config.app.state
        assert app_state.watch is None  # started without its loops: the refresh cannot run twice at once
        running.release()
        deadline = time.monotonic() + 10
        while app_state.watch is None:
            assert time.monotonic() < deadline, "the server never took the upkeep lock"
            time.sleep(0.02)
        assert not UpkeepLock(home).acquire()  # the server leads now: the next upkeep finds the lock taken
    finally:
        server.stop()


def test_wait_waits_for_the_lock_then_runs(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    holder = UpkeepLock(home)
    assert holder.acquire()
    env = {**os.environ, "BENCHWARMERS_HOME": str(home)}
    command = [str(BENCHWARMERS), "upkeep", "--wait", "--json", "--only", "owed"]
    process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert process.stderr is not None
        waiting = process.stderr.readline()  # said before it waits: nothing has run yet
        assert waiting == f"waiting for process {os.getpid()} to release the upkeep lock of {home}\n"
        assert process.poll() is None
        holder.release()
        out, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
    assert (process.returncode, err) == (0, "")
    assert rows(orjson.loads(out)) == [["owed", "done", "nothing changed"]]


# -- deploy/: the timer and its service ---------------------------------------------------------


def unit(name: str) -> configparser.ConfigParser:
    parsed = configparser.ConfigParser(interpolation=None, strict=False)
    parsed.optionxform = str  # type: ignore[assignment,method-assign]  # systemd's keys are case-sensitive
    parsed.read_string((DEPLOY / name).read_text())
    return parsed


def test_the_upkeep_timer_starts_the_upkeep_service_hourly():
    timer, service = unit("benchwarmers-upkeep.timer"), unit("benchwarmers-upkeep.service")
    assert dict(timer["Timer"]) == {
        "OnCalendar": "hourly",
        "RandomizedDelaySec": "15min",
        "Persistent": "true",
        "Unit": "benchwarmers-upkeep.service",
    }
    assert timer["Install"]["WantedBy"] == "timers.target"
    assert service["Service"]["Type"] == "oneshot"
    assert service["Service"]["ExecStart"].split()[1:] == ["upkeep"]
    # The same user, home and settings as the server's unit: one home, one upkeep lock.
    served = unit("benchwarmers.service")["Service"]
    for key in ("User", "Group", "EnvironmentFile", "ReadWritePaths"):
        assert service["Service"][key] == served[key], key
    home = "Environment=BENCHWARMERS_HOME=/var/lib/benchwarmers/home\n"
    assert home in (DEPLOY / "benchwarmers.service").read_text()
    assert home in (DEPLOY / "benchwarmers-upkeep.service").read_text()
    assert service["Service"]["ExecStart"].split()[0] == served["ExecStart"].split()[0]


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze is not installed here")
def test_the_upkeep_units_pass_systemd_analyze_verify(tmp_path):
    # verify checks that ExecStart's program exists: point it at this environment's benchwarmers.
    for name in ("benchwarmers-upkeep.timer", "benchwarmers-upkeep.service"):
        text = (DEPLOY / name).read_text().replace("/var/lib/benchwarmers/venv/bin/benchwarmers", str(BENCHWARMERS))
        (tmp_path / name).write_text(text)
    done = subprocess.run(
        ["systemd-analyze", "verify", "--man=no", "benchwarmers-upkeep.timer", "benchwarmers-upkeep.service"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "benchwarmers-upkeep" not in done.stderr, done.stderr
