"""The SQLite writer's connection, used in the event loop's own thread.

aiosqlite gives every call to its own thread: a write of a few rows costs two thread switches per
driver call (a cursor, the statement, the commit ...), and under load those switches were a fifth
of the gateway's CPU per panel (docs/BENCHMARKS.md). The writer's statements are short (WAL,
`synchronous=NORMAL`: a commit appends to the log and does not sync), so this connection keeps
aiosqlite's API for SQLAlchemy and makes each call in place. The two things that could hold the
loop are moved out of it:

- waiting for another process's write lock: `busy_timeout` is 0 here, and a BEGIN that finds the
  database locked is tried again after an `asyncio.sleep` (store/db.py, `_begin_immediate`);
- checkpoints: see store/db.py.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable, Generator
from typing import Any

import aiosqlite
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import AsyncConnection


class _RunAtOnce:
    """Stands in for aiosqlite's queue to its thread: SQLAlchemy's adapter puts some calls there
    directly (setting the isolation level); they are made at once and their future resolved."""

    def put_nowait(self, item: tuple[asyncio.Future[Any] | None, Callable[[], Any]]) -> None:
        future, function = item
        try:
            result = function()
        except Exception as exc:
            if future is not None:
                future.set_exception(exc)
        else:
            if future is not None:
                future.set_result(result)


class InlineConnection(aiosqlite.Connection):
    """aiosqlite's connection, with every call made in the calling thread (its thread never starts)."""

    def __init__(self, connector: Callable[[], sqlite3.Connection]) -> None:
        super().__init__(connector, iter_chunk_size=64)
        self._tx = _RunAtOnce()  # type: ignore[assignment]

    @property
    def raw(self) -> sqlite3.Connection | None:
        """The `sqlite3` connection itself, for statements made in place (store/bulk.py)."""
        return self._connection

    def __await__(self) -> Generator[Any, None, InlineConnection]:
        return self._connect().__await__()

    async def _connect(self) -> InlineConnection:
        if self._connection is None:
            self._connection = self._connector()
        return self

    async def _execute(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        if not self._running or self._connection is None:
            raise ValueError("Connection closed")
        return fn(*args, **kwargs)

    def stop(self) -> None:
        self._running = False
        if self._connection is not None:
            self._connection.close()
            self._connection = None

    async def close(self) -> None:
        self.stop()


def writer_connection(conn: AsyncConnection | Connection) -> sqlite3.Connection | None:
    """The SQLite writer's `sqlite3` connection behind `conn` (SQLAlchemy's async connection, or the
    sync one its events see), if that is what `conn` is."""
    sync = conn.sync_connection if isinstance(conn, AsyncConnection) else conn
    driver = sync.connection.driver_connection if sync is not None else None
    return driver.raw if isinstance(driver, InlineConnection) else None


def inline_creator(database: str) -> Callable[[], Any]:
    """An `async_creator` for SQLAlchemy: the writer's connection to `database`."""

    async def connect() -> InlineConnection:
        # timeout=0: never wait in sqlite3 itself (see `_execute`); the loop's thread is the only user.
        return await InlineConnection(lambda: sqlite3.connect(database, timeout=0, check_same_thread=False))

    return connect
