"""Opening the database: SQLite tuned for a local bench (or PostgreSQL by URL), migrations on open.

SQLite allows one writer at a time. Writes therefore go through their own engine with a single
connection that starts every transaction with BEGIN IMMEDIATE: writers in this process queue for
that connection instead of failing with "database is locked", and a writer in another process
(the CLI, another worker) is waited for in short asyncio sleeps (`_begin_immediate`). Reads use a
separate pool and never block on writes (WAL).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sqlite3
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson
from sqlalchemy import URL, event, inspect, make_url, text
from sqlalchemy.engine import Connection, CursorResult
from sqlalchemy.exc import DBAPIError, OperationalError, PendingRollbackError, ResourceClosedError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine
from sqlalchemy.util import await_only as await_

from benchwarmers.store.inline_sqlite import inline_creator, writer_connection

if TYPE_CHECKING:
    from alembic.config import Config

MIGRATIONS = Path(__file__).parent / "migrations"
# How long a writer waits for another process's write lock (the busy_timeout it replaces), and the
# pauses between its tries.
LOCK_WAIT_SECONDS = 10.0
_FIRST_PAUSE, _LONGEST_PAUSE = 0.0002, 0.005
_READER_WAIT_MS = 10_000  # SQLite's own wait for a lock, on every connection but the writer
_RESTART_WAIT_MS = 2  # how long a checkpoint's RESTART waits for another process's writer and for readers


def _tune_sqlite(dbapi_connection: Any, _record: Any) -> None:
    # WAL lets the server read while the CLI writes; busy_timeout waits instead of failing.
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute(f"PRAGMA busy_timeout={_READER_WAIT_MS}")
    cursor.close()


def _autocommit_driver(dbapi_connection: Any, _record: Any) -> None:
    # Let SQLAlchemy's "begin" event issue BEGIN IMMEDIATE instead of the driver's deferred BEGIN.
    dbapi_connection.isolation_level = None


def _no_busy_sleeps(dbapi_connection: Any, _record: Any) -> None:
    # The writer does not use SQLite's own wait for the write lock (`_begin_immediate` does), and
    # never checkpoints (copying the log into the file, with an fsync) in the event loop's thread:
    # `checkpoint` does it from a reader's connection.
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA busy_timeout=0")
    cursor.execute("PRAGMA wal_autocheckpoint=0")
    cursor.close()


def _lock_pauses() -> Iterator[float]:
    """The pauses between tries for another process's write lock, until LOCK_WAIT_SECONDS are up.

    SQLite's own busy handler sleeps 1, 2, 5, 10 ... up to 100 ms between tries, so a writer that
    missed a lock held for a fraction of a millisecond waited milliseconds, and with several workers
    writing one file every panel waited in that queue. Here the writer tries again after a short
    asyncio sleep (the loop serves other requests meanwhile), for as long as busy_timeout waited.
    """
    pause, deadline = _FIRST_PAUSE, time.monotonic() + LOCK_WAIT_SECONDS
    while time.monotonic() < deadline:
        yield pause
        pause = min(pause * 2, _LONGEST_PAUSE)


def _locked(exc: BaseException) -> bool:
    return "database is locked" in str(exc)


def _begin_immediate(conn: Connection) -> None:
    """BEGIN IMMEDIATE, waiting for another process's write lock without holding the event loop; a
    transaction already open on the driver's connection (`writer_transaction`'s) is joined."""
    raw = writer_connection(conn)
    if raw is not None and raw.in_transaction:
        return
    pauses = _lock_pauses()
    while True:
        try:
            conn.exec_driver_sql("BEGIN IMMEDIATE")
            return
        except OperationalError as exc:
            pause = next(pauses, None)
            if not _locked(exc) or pause is None:
                raise
        await_(asyncio.sleep(pause))  # SQLAlchemy runs this event in its greenlet: a real await


@asynccontextmanager
async def writer_transaction(conn: AsyncConnection) -> AsyncIterator[None]:
    """One transaction on SQLite's writer connection, begun and ended on its `sqlite3` connection.

    SQLAlchemy's own begin and commit cost ~40 µs of CPU a transaction (a greenlet each), more
    than writing a panel's rows (store/bulk.py). Statements made through SQLAlchemy inside join
    this transaction (`_begin_immediate`), and SQLAlchemy then ends it, as it would its own.
    """
    raw = writer_connection(conn)
    assert raw is not None, "writer_transaction is for SQLite's writer connection"
    pauses = _lock_pauses()
    while True:
        try:
            raw.execute("BEGIN IMMEDIATE")
            break
        except sqlite3.OperationalError as exc:
            pause = next(pauses, None)
            if not _locked(exc) or pause is None:
                raise OperationalError("BEGIN IMMEDIATE", None, exc) from None
        await asyncio.sleep(pause)
    try:
        yield
        if conn.in_transaction():
            await conn.commit()
        else:
            try:
                raw.commit()
            except sqlite3.Error as exc:
                raise OperationalError("COMMIT", None, exc) from None
    except BaseException:
        # A rollback that fails too must not hide why the transaction failed: the caller replaces
        # a connection left in a transaction (`writer_left_open`).
        with contextlib.suppress(Exception):
            await _roll_back(conn)
        raise


async def _roll_back(conn: AsyncConnection) -> None:
    """End what a failed transaction left open on the writer: SQLAlchemy's transaction, even one a
    failed COMMIT made inactive (until rolled back it refuses every later statement with
    PendingRollbackError: what a full disk left behind), and SQLite's own (a COMMIT that failed with
    SQLITE_FULL may leave it open)."""
    if conn.get_transaction() is not None and not conn.invalidated:
        await conn.rollback()
    raw = writer_connection(conn)
    if raw is not None and raw.in_transaction:
        raw.rollback()


def writer_left_open(conn: AsyncConnection) -> bool:
    """Whether a transaction is still open on the writer after a failure: the connection then is in a
    state not worth reasoning about, and is replaced."""
    if conn.closed:
        return False  # the next write opens another anyway
    if conn.invalidated or conn.get_transaction() is not None:
        return True
    raw = writer_connection(conn)
    return raw is not None and raw.in_transaction


def json_dumps(value: object) -> str:
    """How a JSON column's value is stored (None too: as `null`, as SQLAlchemy's JSON type does)."""
    return orjson.dumps(value).decode()


def _json_loads(value: object) -> object:
    # SQLite's JSON columns have numeric affinity: a stored `65000` comes back as the int itself.
    return orjson.loads(value) if isinstance(value, str | bytes) else value


# Every engine: our JSON codec, and statement parameters (prompts, answers) left out of error messages.
JSON_CODEC = {"json_serializer": json_dumps, "json_deserializer": _json_loads, "hide_parameters": True}


def shown_url(url: str) -> str:
    """A database URL as a log may show it: no user, no password and no query (which can carry either)."""
    try:
        parsed = make_url(url)
    except Exception:  # an unparsable URL fails on open, with its own error
        return "(the configured database)"
    shown = URL.create(parsed.drivername, host=parsed.host, port=parsed.port, database=parsed.database)
    return shown.render_as_string(hide_password=True)


def create_engine(url: str) -> AsyncEngine:
    """The engine for reads (and for everything, on PostgreSQL)."""
    if url.startswith("sqlite"):
        engine = create_async_engine(url, connect_args={"timeout": 10}, **JSON_CODEC)
        event.listen(engine.sync_engine, "connect", _tune_sqlite)
        return engine
    return create_async_engine(url, pool_pre_ping=True, **JSON_CODEC)


def create_write_engine(url: str, reader: AsyncEngine) -> AsyncEngine:
    """The engine for writes: on SQLite one connection, BEGIN IMMEDIATE; elsewhere the reader's."""
    if not url.startswith("sqlite"):
        return reader
    engine = create_async_engine(
        url,
        async_creator=inline_creator(make_url(url).database or ""),
        pool_size=1,
        max_overflow=0,
        pool_timeout=60,
        pool_reset_on_return=None,  # every use ends in a commit or a rollback (`BenchState.write`)
        **JSON_CODEC,
    )
    event.listen(engine.sync_engine, "connect", _tune_sqlite)
    event.listen(engine.sync_engine, "connect", _no_busy_sleeps)
    event.listen(engine.sync_engine, "connect", _autocommit_driver)
    event.listen(engine.sync_engine, "begin", _begin_immediate)
    return engine


# The newest migration's revision. A test checks it equals Alembic's head, so a new migration
# cannot be forgotten here; it lets a current database open without importing Alembic (~11 MB).
SCHEMA_REVISION = "0016"


def alembic_config() -> Config:
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    return config


def _revision(connection: Connection) -> str | None:
    if not inspect(connection).has_table("alembic_version"):
        return None
    return connection.exec_driver_sql("SELECT version_num FROM alembic_version").scalar()


# The workers of `serve --workers N` each migrate when they open (one may start while the database
# is away, and wait for it), so on PostgreSQL a migration holds this advisory lock: the second
# waits for the first's commit, then finds the schema current. On SQLite the migration's BEGIN
# IMMEDIATE already lets one writer in at a time.
_MIGRATION_LOCK = 0x62656E6368  # "bench"


def _upgrade(connection: Connection) -> None:
    if _revision(connection) == SCHEMA_REVISION:
        return
    if connection.dialect.name == "postgresql":
        connection.exec_driver_sql(f"SELECT pg_advisory_xact_lock({_MIGRATION_LOCK})")
        if _revision(connection) == SCHEMA_REVISION:
            return
    from alembic import command

    config = alembic_config()
    config.attributes["connection"] = connection
    command.upgrade(config, "head")


async def migrate(engine: AsyncEngine) -> None:
    """Bring the database to the newest schema (a no-op when it already is)."""
    async with engine.begin() as connection:
        await connection.run_sync(_upgrade)


def inserted_id(result: CursorResult[Any]) -> int:
    """The integer primary key of the one row an INSERT added."""
    # SQLAlchemy types it Optional; an INSERT of one row into a table with a primary key always has it.
    key = result.inserted_primary_key
    assert key is not None
    return int(key[0])


def unreachable(exc: BaseException | None, _depth: int = 0) -> bool:
    """True when `exc` says the database could not be reached or went away (a stopped PostgreSQL, a
    dropped connection, SQLite's lock wait running out), not that a statement was wrong. Also when it
    came of such an error (the rollback of a transaction whose connection was cut)."""
    if exc is None or _depth > 5:
        return False
    if isinstance(exc, PendingRollbackError | ResourceClosedError):
        return unreachable(exc.__cause__ or exc.__context__, _depth + 1)
    if isinstance(exc, DBAPIError):
        if exc.connection_invalidated:
            return True
        orig = exc.orig
        if orig is not None and type(orig).__module__ == "sqlite3":
            return any(words in str(orig) for words in _SQLITE_AWAY)
        return _server_gone(orig) or _server_gone(orig.__cause__ if orig is not None else None)
    return isinstance(exc, OSError | TimeoutError)


_SQLITE_AWAY = ("database is locked", "unable to open database", "disk I/O error")


# SQLSTATE classes of a server that is away, not of a bad statement: connection exceptions (08),
# operator intervention (57P: shutting down, starting up) and insufficient resources (53).
_AWAY = ("08", "57P", "53")


def _server_gone(error: BaseException | None) -> bool:
    state = getattr(error, "sqlstate", None)
    return isinstance(state, str) and state.startswith(_AWAY)


class LogFrames:
    """How many frames (pages) SQLite's write-ahead log holds now, for deciding when to checkpoint.

    Read from the wal-index header (`mxFrame`, bytes 16-19 of the `-shm` file, in the host's byte
    order: https://sqlite.org/walformat.html), a few microseconds with the file kept open. Commits
    are a poor measure of the log: one of the recorder's carries anything from one panel to dozens.
    0 when there is no such file (PostgreSQL, or SQLite not opened yet).
    """

    def __init__(self, url: str) -> None:
        database = make_url(url).database if url.startswith("sqlite") else None
        self._path = Path(f"{database}-shm") if database else None
        self._fd: int | None = None

    def __call__(self) -> int:
        if self._path is None:
            return 0
        try:
            if self._fd is None:
                self._fd = os.open(self._path, os.O_RDONLY)
            header = os.pread(self._fd, 4, 16)
        except OSError:
            return 0
        return int.from_bytes(header, sys.byteorder) if len(header) == 4 else 0

    def close(self) -> None:
        """Let go of the file (SQLite deletes it when the last connection closes)."""
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)


async def checkpoint(conn: AsyncConnection, writers_paused: AbstractAsyncContextManager[object]) -> None:
    """Copy SQLite's write-ahead log into the database file, then start the log over.

    PASSIVE copies the bulk without blocking anyone. Under steady writes it never catches up with
    the writer, and SQLite only starts the log over once every frame is copied, so on its own the
    log grew by ~13 MB a second at 300 panels/s (and every page lookup searched it). RESTART copies
    the few frames written since and starts the log over; it runs inside `writers_paused` (this
    process's writers wait their turn in the event loop), because racing them for the write lock it
    lost on a slow machine nearly every time. It gives up after `_RESTART_WAIT_MS` rather than wait
    for another process's writer or a long reader: the next checkpoint tries again.
    """
    if conn.dialect.name != "sqlite":
        return
    await conn.exec_driver_sql("PRAGMA wal_checkpoint(PASSIVE)")
    await conn.exec_driver_sql(f"PRAGMA busy_timeout={_RESTART_WAIT_MS}")
    try:
        async with writers_paused:
            await conn.exec_driver_sql("PRAGMA wal_checkpoint(RESTART)")
    finally:
        await conn.exec_driver_sql(f"PRAGMA busy_timeout={_READER_WAIT_MS}")


async def ping(conn: AsyncConnection) -> None:
    await conn.execute(text("SELECT 1"))
