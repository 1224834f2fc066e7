"""The dashboard's login URL from the CLI: `benchwarmers dashboard-url`, and what `serve` prints.

With BENCHWARMERS_REQUIRE_KEYS and no admin token the dashboard's token is the home's
`dashboard-token`: the URL holds it, so `serve` prints it only to a terminal (under systemd or Docker
stdout is a log) and otherwise says how to get it. The CLI's own commands open the bench's database
directly, so they work in every mode and the changes log names them `cli`.
"""

from __future__ import annotations

import os
import pty
import select
import stat
import subprocess
import time
from pathlib import Path

import httpx2
import pytest
from typer.testing import CliRunner

from benchwarmers.bench.services import Bench
from benchwarmers.cli.app import app
from benchwarmers.store.changes import list_changes
from tests.support.benchserver import free_port
from tests.support.serveprocess import BENCHWARMERS, ServeProcess, run_admin

TOKEN_URL = "http://127.0.0.1:8123/login?token="


@pytest.fixture
def keyed_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    monkeypatch.setenv("BENCHWARMERS_HOME", str(home))
    monkeypatch.setenv("BENCHWARMERS_REQUIRE_KEYS", "1")
    for name in ("BENCHWARMERS_ADMIN_TOKEN", "BENCHWARMERS_URL", "BENCHWARMERS_PUBLIC_URL", "BENCH_BIND"):
        monkeypatch.delenv(name, raising=False)
    return home


def test_dashboard_url_prints_the_token_files_login_url_and_rotates_it(keyed_home: Path) -> None:
    shown = CliRunner().invoke(app, ["dashboard-url"])
    assert shown.exit_code == 0, shown.output
    token = (keyed_home / "dashboard-token").read_text().strip()
    assert shown.stdout == f"{TOKEN_URL}{token}\n"
    assert stat.S_IMODE((keyed_home / "dashboard-token").stat().st_mode) == 0o600
    assert CliRunner().invoke(app, ["dashboard-url"]).stdout == shown.stdout  # kept, not made anew

    rotated = CliRunner().invoke(app, ["dashboard-url", "--rotate"])
    assert rotated.exit_code == 0
    new = (keyed_home / "dashboard-token").read_text().strip()
    assert new != token
    assert rotated.stdout == f"{TOKEN_URL}{new}\n"
    assert rotated.stderr == "A new dashboard token: running servers take it on their next request.\n"


def test_dashboard_url_follows_the_bind_and_the_public_url(keyed_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BENCH_BIND", "127.0.0.1:9001")
    assert CliRunner().invoke(app, ["dashboard-url"]).stdout.startswith("http://127.0.0.1:9001/login?token=")
    monkeypatch.setenv("BENCHWARMERS_PUBLIC_URL", "https://bench.example/")
    assert CliRunner().invoke(app, ["dashboard-url"]).stdout.startswith("https://bench.example/login?token=")


def test_dashboard_url_as_installed_and_with_an_admin_token(keyed_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("BENCHWARMERS_REQUIRE_KEYS")
    open_bench = CliRunner().invoke(app, ["dashboard-url"])
    assert (open_bench.exit_code, open_bench.stdout) == (0, "http://127.0.0.1:8123/\n")
    assert open_bench.stderr == "No login needed: as installed the dashboard is open on this machine.\n"
    assert not (keyed_home / "dashboard-token").exists()

    monkeypatch.setenv("BENCHWARMERS_ADMIN_TOKEN", "a" * 40)
    assert CliRunner().invoke(app, ["dashboard-url"]).stdout == f"{TOKEN_URL}{'a' * 40}\n"
    refused = CliRunner().invoke(app, ["dashboard-url", "--rotate"])
    assert (refused.exit_code, refused.stderr) == (
        1,
        "error: the admin token lives in BENCHWARMERS_ADMIN_TOKEN: set a new one there and restart the bench\n",
    )
    assert not (keyed_home / "dashboard-token").exists()


def test_the_cli_changes_a_keyed_bench_directly_and_the_log_names_it(keyed_home: Path) -> None:
    made = CliRunner().invoke(app, ["key", "create", "ci"])
    assert made.exit_code == 0, made.output

    async def actors(bench: Bench) -> list[tuple[str, str, str]]:
        async with bench.state.read() as conn:
            return [(c["actor"], c["action"], c["name"]) for c in await list_changes(conn, subject="key")]

    assert run_admin(keyed_home, actors) == [("cli", "create", "ci")]


def test_serve_to_a_log_says_how_to_get_the_login_url_without_printing_it(tmp_path: Path) -> None:
    home, log = tmp_path / "home", tmp_path / "serve.log"
    server = ServeProcess(home, log, BENCHWARMERS_REQUIRE_KEYS="1").start()
    try:
        token = (home / "dashboard-token").read_text().strip()
        printed = server.log_text()
        assert token not in printed
        assert (
            "Dashboard login: gateway keys do not open it; `benchwarmers dashboard-url` prints its login URL "
            f"(the token is in {home / 'dashboard-token'})"
        ) in printed
    finally:
        server.stop()


def test_serve_at_a_terminal_prints_the_login_url_and_it_logs_the_browser_in(tmp_path: Path) -> None:
    home, port = tmp_path / "home", free_port()
    env = {**os.environ, "BENCHWARMERS_HOME": str(home), "BENCHWARMERS_REQUIRE_KEYS": "1", "COLUMNS": "300"}
    env.pop("BENCHWARMERS_ADMIN_TOKEN", None)
    leader, follower = pty.openpty()
    process = subprocess.Popen(
        [BENCHWARMERS, "serve", "--bind", f"127.0.0.1:{port}"],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=follower,
        stderr=subprocess.STDOUT,
    )
    os.close(follower)
    try:
        seen, deadline = b"", time.monotonic() + 30
        marker = b"Log in to the dashboard (once per browser): "
        while marker not in seen or not seen.split(marker, 1)[1].count(b"\n"):
            assert time.monotonic() < deadline, seen.decode(errors="replace")
            ready, _, _ = select.select([leader], [], [], 1)
            if ready:
                seen += os.read(leader, 4096)
        url = seen.split(marker, 1)[1].split(b"\n", 1)[0].decode().strip()
        token = (home / "dashboard-token").read_text().strip()
        assert url == f"http://127.0.0.1:{port}/login?token={token}"
        for _ in range(600):  # the server is printing before it listens: wait for it to answer
            try:
                exchanged = httpx2.get(url)
                break
            except httpx2.TransportError:
                time.sleep(0.05)
        assert (exchanged.status_code, exchanged.headers["location"]) == (303, "/")
        session = {"bw_session": exchanged.cookies["bw_session"]}
        assert httpx2.get(f"http://127.0.0.1:{port}/api/keys", cookies=session).status_code == 200
        assert httpx2.get(f"http://127.0.0.1:{port}/api/keys").status_code == 401
    finally:
        process.terminate()
        process.wait(timeout=15)
        os.close(leader)
