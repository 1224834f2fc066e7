"""A full disk (issue #32, item 2): while it is full, panels, verdicts and config writes get 503
`storage_full` with Retry-After and `/readyz` says why; the first write after room is made succeeds
on the same server (no restart: the writer's failed transaction was rolled back); every row that was
acknowledged is stored, none that was refused, and `PRAGMA integrity_check` is ok.

The disk is filled two ways:
- `Tmpfs`: the bench's home on a real 64 MB tmpfs, filled by a file until ENOSPC, where this machine
  lets the test mount one (CI runs as root); skipped where mounting is refused.
- `PageLimit`: an injected disk full at the store's seam that needs no privilege: SQLite's own
  `PRAGMA max_page_count` on the writer's connection, so SQLite itself raises SQLITE_FULL for a
  write that needs a new page (panels and verdicts with long notes do; an update in place does not,
  so the settings write there is a task shape's long description).
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import re
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from sqlalchemy import event, select
from sqlalchemy.exc import DBAPIError
from typer.testing import CliRunner

from benchwarmers.bench import state as state_module
from benchwarmers.bench.admin.alerts import list_alerts
from benchwarmers.bench.services import Bench
from benchwarmers.bench.state import BenchState
from benchwarmers.bench.upkeep.disk import check_disk
from benchwarmers.bench.upkeep.watch import Watch
from benchwarmers.cli.app import app
from benchwarmers.settings import Settings
from benchwarmers.store.bulk import insert_rows
from benchwarmers.store.db import create_engine
from benchwarmers.store.disk import disk_full
from benchwarmers.store.inline_sqlite import writer_connection
from benchwarmers.store.schema import alerts, panels, verdicts
from tests.fakes.upstream import FakeUpstream
from tests.support.benchserver import BenchServer, add_fake_endpoint, listed
from tests.support.panels import collection

BENCHWARMERS = str(Path(sys.executable).with_name("benchwarmers"))
LONG = " ".join(["a note long enough to need pages of its own"] * 400)  # ~18 kB: a write that needs room
MOST_PAGES = 4294967294  # SQLite's own limit: the page limit lifted


def full_body(folder: Path, free: str) -> dict[str, Any]:
    return {
        "error": {
            "message": f"the disk holding the bench's data is full ({folder}: {free} free); nothing was recorded: "
            "free space there and try again",
            "type": "server_error",
            "param": None,
            "code": "storage_full",
        }
    }


class Tmpfs:
    """A real small filesystem under the bench's home; `fill` takes every byte left, `free` gives it back."""

    def __init__(self, mount: Path) -> None:
        self.home = mount / "home"
        self._filler = mount / "filler"

    def attach(self, server: BenchServer) -> None:
        pass

    def fill(self) -> None:
        # SQLite's log emptied first (a TRUNCATE checkpoint), so every commit needs new room: a log
        # left long would take commits into frames it already has until it wraps.
        with sqlite3.connect(self.home / "bench.db", timeout=10) as db:
            assert db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0] == 0  # not busy
        with self._filler.open("wb", buffering=0) as out:
            for chunk in (b"\0" * (1 << 20), b"\0" * 4096):
                with pytest.raises(OSError) as refused:
                    while True:
                        out.write(chunk)
                assert refused.value.errno == errno.ENOSPC

    def free(self) -> None:
        self._filler.unlink()

    def free_text(self) -> str:
        return "0 B"


class PageLimit:
    """SQLite's `PRAGMA max_page_count` on the server's writer connection (and on any it opens next):
    the database may not grow past its size when `fill` is called."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self.limit = MOST_PAGES
        self._state: Any = None

    def attach(self, server: BenchServer) -> None:
        self._state = server.bench.state
        event.listen(self._state.write_engine.sync_engine, "connect", self._on_connect)

    def _on_connect(self, dbapi_connection: Any, _record: Any) -> None:
        cursor = dbapi_connection.cursor()
        cursor.execute(f"PRAGMA max_page_count={self.limit}")
        cursor.close()

    def _apply(self) -> None:
        # The server is idle between the test's requests: its writer connection is free to set.
        raw = writer_connection(self._state._writer)
        assert raw is not None
        self.limit = raw.execute(f"PRAGMA max_page_count={self.limit}").fetchone()[0]

    def fill(self) -> None:
        self.limit = 1  # SQLite keeps it at the database's size: it cannot go lower
        self._apply()

    def free(self) -> None:
        self.limit = MOST_PAGES
        self._apply()

    def free_text(self) -> str:
        return r"[0-9.]+ [kMG]?B"


@contextlib.contextmanager
def small_filesystem(mount: Path, size: str) -> Iterator[Tmpfs]:
    """A tmpfs of `size` at `mount` for the test's life; the test is skipped where mounting is refused."""
    mount.mkdir()
    try:
        mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", mount], capture_output=True)
        refused = mounted.stderr.decode().strip() if mounted.returncode else None
    except OSError as exc:  # no mount command
        refused = str(exc)
    if refused is not None:
        pytest.skip(f"this machine refuses a tmpfs mount ({refused}); the page-limit case runs")
    try:
        yield Tmpfs(mount)
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=True)


@pytest.fixture(params=["tmpfs", "page limit"])
def disk(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Tmpfs | PageLimit]:
    if request.param == "page limit":
        yield PageLimit(tmp_path / "home")
        return
    with small_filesystem(tmp_path / "disk", "64m") as tmpfs:
        yield tmpfs


def panel(client: httpx2.Client, server: BenchServer, text: str) -> httpx2.Response:
    body = {"model": "bench/solo", "messages": [{"role": "user", "content": text}]}
    return client.post(f"{server.v1}/chat/completions", json=body)


def verdict(client: httpx2.Client, server: BenchServer, call: str, note: str) -> httpx2.Response:
    return client.post(f"{server.url}/bench/verdict", json={"call": call, "useful": True, "note": note})


def config_write(client: httpx2.Client, server: BenchServer, disk: Tmpfs | PageLimit, n: int) -> httpx2.Response:
    """A settings write; under the page limit one that needs room (an update in place needs none): a
    task shape with a long description."""
    if isinstance(disk, Tmpfs):
        return client.put(f"{server.url}/api/settings", json={"max_explorers": n})
    return client.put(f"{server.url}/api/shapes/legal", json={"description": f"{n} {LONG}"})


def refused_as_full(reply: httpx2.Response, disk: Tmpfs | PageLimit) -> None:
    assert reply.status_code == 503, reply.text
    assert reply.headers["retry-after"] == "10"
    error, expected = reply.json()["error"], full_body(disk.home, "FREE")["error"]
    assert {**error, "message": ""} == {**expected, "message": ""}
    assert re.fullmatch(re.escape(expected["message"]).replace("FREE", disk.free_text()), error["message"])


def stored(home: Path) -> tuple[set[str], dict[str, str], list[tuple[str]]]:
    """Finished panels, each verdict's note, and SQLite's integrity check, read after the server stopped."""

    async def main() -> tuple[set[str], dict[str, str]]:
        engine = create_engine(f"sqlite+aiosqlite:///{home / 'bench.db'}")
        async with engine.connect() as conn:
            found = set((await conn.scalars(select(panels.c.id).where(panels.c.response.is_not(None)))).all())
            notes = {call: note for call, note in (await conn.execute(select(verdicts.c.call, verdicts.c.note))).all()}
        await engine.dispose()
        return found, notes

    found, notes = asyncio.run(main())
    with sqlite3.connect(home / "bench.db") as db:
        checked = db.execute("PRAGMA integrity_check").fetchall()
    return found, notes, checked


def test_a_full_disk_is_503_storage_full_and_the_next_write_after_room_is_made_succeeds(disk, fake_upstream):
    fake_upstream.script("phi-4", latency=0.01)
    server = BenchServer(disk.home, disk_alert_mb=0).start()
    try:
        add_fake_endpoint(server, fake_upstream, models=[listed("phi-4")])
        collection(server, "solo", ["phi-4"], max_explorers=0)
        acknowledged_panels, acknowledged_notes = [], {}
        with httpx2.Client(timeout=30) as client:
            for i in range(3):
                reply = panel(client, server, f"question {i}")
                assert reply.status_code == 200, reply.text
                acknowledged_panels.append(reply.json()["bench"]["panel"])
                call = reply.json()["bench"]["seats"][0]["call"]
                assert verdict(client, server, call, f"note {i}").status_code == 200
                acknowledged_notes[call] = f"note {i}"
            first, second = list(acknowledged_notes)[:2]
            disk.attach(server)

            disk.fill()
            refused_as_full(panel(client, server, LONG), disk)
            refused_as_full(verdict(client, server, first, LONG), disk)
            refused_as_full(config_write(client, server, disk, 1), disk)
            ready = client.get(f"{server.url}/readyz")
            assert ready.status_code == 503
            assert ready.json() == {
                "status": "not ready",
                "database": "ok",
                "reasons": ["disk: full: writes are refused with 503 storage_full until there is room"],
            }

            disk.free()  # each write below is the first of its kind after room was made: none is retried
            assert verdict(client, server, second, "after").status_code == 200
            acknowledged_notes[second] = "after"
            settings = config_write(client, server, disk, 2)
            assert settings.status_code == 200, settings.text
            reply = panel(client, server, LONG)
            assert reply.status_code == 200, reply.text
            acknowledged_panels.append(reply.json()["bench"]["panel"])
            assert client.get(f"{server.url}/readyz").json() == {"status": "ready", "database": "ok"}
            shown = client.get(f"{server.url}/api/settings").json()["max_explorers"]
            described = client.get(f"{server.url}/api/shapes").json().get("legal")
    finally:
        server.stop()

    # The write acknowledged after room was made is what the config says; the refused one is not.
    if isinstance(disk, Tmpfs):
        assert (shown, described) == (2, None)
    else:
        assert described == f"2 {LONG}"
    found, notes, checked = stored(disk.home)
    assert found == set(acknowledged_panels)  # the refused panel was not finished
    assert notes == acknowledged_notes  # the refused verdict's note is nowhere
    assert checked == [("ok",)]


def test_the_cli_on_a_full_disk_prints_one_error_line_naming_the_data_folder(tmp_path):
    """`benchwarmers verdict` itself, in its own process, on a tmpfs that is full."""
    with small_filesystem(tmp_path / "disk", "16m") as disk:
        call = judged_call(disk.home)
        disk.fill()
        env = {**os.environ, "BENCHWARMERS_HOME": str(disk.home)}
        done = subprocess.run(
            [BENCHWARMERS, "verdict", call, "--useful", "--note", LONG], env=env, capture_output=True, text=True
        )
    assert (done.returncode, done.stdout) == (1, ""), done.stderr
    assert done.stderr == f"error: {full_body(disk.home, '0 B')['error']['message']}\n"


def test_the_cli_under_the_page_limit_prints_one_error_line(tmp_path, monkeypatch):
    """The same in this process, with the page limit on the CLI's own writer connection."""
    home = tmp_path / "home"
    call = judged_call(home)
    monkeypatch.setenv("BENCHWARMERS_HOME", str(home))
    made = state_module.create_write_engine

    def limited(url: str, reader: Any) -> Any:
        engine = made(url, reader)

        @event.listens_for(engine.sync_engine, "connect")
        def no_room(dbapi_connection: Any, _record: Any) -> None:
            cursor = dbapi_connection.cursor()
            cursor.execute("PRAGMA max_page_count=1")  # kept at the database's size
            cursor.close()

        return engine

    monkeypatch.setattr(state_module, "create_write_engine", limited)
    result = CliRunner().invoke(app, ["verdict", call, "--useful", "--note", LONG])
    assert result.exit_code == 1
    assert isinstance(result.exception, SystemExit)  # no traceback: typer's exit
    assert re.fullmatch(
        re.escape(f"error: {full_body(home, 'FREE')['error']['message']}\n").replace("FREE", r"[0-9.]+ [kMG]?B"),
        result.output,
    )


def judged_call(home: Path) -> str:
    """A finished panel's call id, in a fresh bench at `home`."""
    with FakeUpstream() as fake:
        fake.script("phi-4", latency=0.01)
        server = BenchServer(home, disk_alert_mb=0).start()
        try:
            add_fake_endpoint(server, fake, models=[listed("phi-4")])
            collection(server, "solo", ["phi-4"], max_explorers=0)
            reply = httpx2.post(
                f"{server.v1}/chat/completions",
                json={"model": "bench/solo", "messages": [{"role": "user", "content": "hi"}]},
                timeout=30,
            )
            assert reply.status_code == 200, reply.text
        finally:
            server.stop()
    return str(reply.json()["bench"]["seats"][0]["call"])


def test_low_disk_alert_is_raised_once_by_the_watch_and_resolved_when_space_is_back(tmp_path):
    home = tmp_path / "home"

    async def main() -> None:
        # A threshold no disk is under: the alert is due at once.
        async with Bench(Settings(home=home, disk_alert_mb=10**12), actor="test") as bench:
            await Watch(bench.state).run_once()
            assert await check_disk(bench.state) is None  # raised once, not again
            alerts = await list_alerts(bench.state)
        assert [(a["kind"], a["label"], a["subject"]) for a in alerts] == [("low_disk", "disk space low", str(home))]
        assert re.fullmatch(
            rf"Only [0-9.]+ [kMG]?B free on the disk of the data folder {re.escape(str(home))} \(the alert is raised "
            r"under BENCHWARMERS_DISK_ALERT_MB=1000000000000\)\. Free space there or move the data to a larger disk "
            r'\(docs/DEPLOY\.md "A full disk"\): once it is full, panels, verdicts and config changes are refused '
            r"with 503 storage_full until there is room again\.",
            alerts[0]["message"],
        )
        async with Bench(Settings(home=home, disk_alert_mb=1), actor="test") as bench:
            assert await check_disk(bench.state) == "resolved"
            assert await list_alerts(bench.state) == []
            assert await check_disk(bench.state) is None

    asyncio.run(main())


ORPHAN = {"call": "p-nowhere.member1", "useful": True, "note": "", "real": [], "false": [], "caller": "t"}
ORPHAN |= {"created_at": 1.0, "current": True, "source": "human"}  # a verdict on a seat that is not there


@pytest.mark.parametrize("path", ["sqlalchemy", "bulk"])
def test_a_commit_that_fails_leaves_the_writer_usable(tmp_path, path):
    """What a full disk did at COMMIT, on any machine: SQLite refuses the COMMIT itself (here a foreign
    key checked only then, `PRAGMA defer_foreign_keys`), on both ways a transaction commits. The
    SQLAlchemy transaction that failed COMMIT left inactive refused every later write of the process
    with PendingRollbackError; now the next write succeeds."""

    async def main() -> list[str]:
        state = BenchState(Settings(home=tmp_path / "home"))
        await state.open()
        try:
            with pytest.raises(DBAPIError):  # IntegrityError from SQLAlchemy, OperationalError from the raw COMMIT
                async with state.write() as conn:
                    if path == "sqlalchemy":
                        await conn.exec_driver_sql("PRAGMA defer_foreign_keys=ON")
                        await conn.execute(verdicts.insert().values(ORPHAN))
                    else:  # on the sqlite3 connection only: the transaction commits there (store/bulk.py)
                        raw = writer_connection(conn)
                        assert raw is not None
                        raw.execute("PRAGMA defer_foreign_keys=ON")
                        await insert_rows(conn, verdicts, [ORPHAN])
            async with state.write() as conn:
                await conn.execute(alerts.insert().values(kind="k", subject="s", message="m", created_at=1.0))
            async with state.read() as conn:
                return list((await conn.scalars(select(alerts.c.subject))).all()) + list(
                    (await conn.scalars(select(verdicts.c.call))).all()
                )
        finally:
            await state.close()

    assert asyncio.run(main()) == ["s"]


def test_postgres_sqlstate_53100_is_a_full_disk_and_other_server_errors_are_not():
    """PostgreSQL's errors as SQLAlchemy's asyncpg dialect raises them (its own translation of asyncpg's)."""
    import asyncpg
    from sqlalchemy.dialects.postgresql.asyncpg import AsyncAdapt_asyncpg_connection, AsyncAdapt_asyncpg_dbapi

    def raised(error: Exception) -> DBAPIError:
        with pytest.raises(AsyncAdapt_asyncpg_dbapi.Error) as translated:
            AsyncAdapt_asyncpg_connection._handle_exception_no_connection(AsyncAdapt_asyncpg_dbapi(asyncpg), error)
        return DBAPIError.instance("INSERT", None, translated.value, AsyncAdapt_asyncpg_dbapi.Error)

    full = raised(asyncpg.exceptions.DiskFullError("could not extend file: No space left on device"))
    assert disk_full(full)
    assert not disk_full(raised(asyncpg.exceptions.CannotConnectNowError("the database system is starting up")))
    assert not disk_full(raised(asyncpg.exceptions.TooManyConnectionsError("too many clients")))  # 53300
