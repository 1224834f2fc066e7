"""Rows written in bulk: through the SQLite writer's own connection when there is one, else SQLAlchemy.

A panel's rows are written twice (its id reserved, then the finished panel with its seats), and
SQLAlchemy's work around each statement (cache key, parameters, execution context, result) cost
five times SQLite's own: 0.60 against 0.11 ms of CPU per one-seat panel (docs/BENCHMARKS.md). The
SQLite writer runs in the event loop's thread (store/inline_sqlite.py), so within its transaction
these statements go straight to its `sqlite3` connection, one `executemany` each. What is stored
is the same either way: JSON columns are encoded as SQLAlchemy encodes them (None as `null`), and
every other value is passed as it is. Elsewhere (PostgreSQL, the readers) SQLAlchemy writes them.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Mapping, Sequence
from functools import cache
from typing import Any

from sqlalchemy import JSON, Insert, Table, Update, bindparam
from sqlalchemy.dialects import sqlite
from sqlalchemy.exc import IntegrityError, OperationalError
from sqlalchemy.ext.asyncio import AsyncConnection

from benchwarmers.store.db import json_dumps
from benchwarmers.store.inline_sqlite import writer_connection

Encode = Callable[[Mapping[str, Any]], tuple[Any, ...]]
_SQLITE = sqlite.dialect(paramstyle="qmark")


async def insert_rows(conn: AsyncConnection, table: Table, rows: Sequence[Mapping[str, Any]]) -> None:
    """INSERT every row (all with the same keys); raises SQLAlchemy's IntegrityError on a clash."""
    if not rows:
        return
    raw = writer_connection(conn)
    if raw is None:
        await conn.execute(table.insert(), list(rows))
        return
    sql, encode = _insert(table, tuple(rows[0]))
    _run(raw, sql, [encode(row) for row in rows])


async def update_rows(conn: AsyncConnection, table: Table, key: str, rows: Sequence[Mapping[str, Any]]) -> None:
    """UPDATE the row whose `key` column equals each row's `key`, setting its other keys."""
    if not rows:
        return
    raw = writer_connection(conn)
    columns = tuple(name for name in rows[0] if name != key)
    if raw is None:
        query = table.update().where(table.c[key] == bindparam("row_key"))
        await conn.execute(query, [{**{name: row[name] for name in columns}, "row_key": row[key]} for row in rows])
        return
    sql, encode = _update(table, key, columns)
    _run(raw, sql, [encode(row) for row in rows])


def _run(raw: sqlite3.Connection, sql: str, values: list[tuple[Any, ...]]) -> None:
    try:
        raw.executemany(sql, values)
    except sqlite3.IntegrityError as exc:
        # The same exceptions SQLAlchemy raises, so callers catch one kind whichever path wrote.
        raise IntegrityError(sql, None, exc) from None
    except sqlite3.OperationalError as exc:  # a full disk (store/disk.py), say
        raise OperationalError(sql, None, exc) from None


@cache
def _insert(table: Table, columns: tuple[str, ...]) -> tuple[str, Encode]:
    return _compiled(table.insert().values({name: bindparam(name) for name in columns}), table)


@cache
def _update(table: Table, key: str, columns: tuple[str, ...]) -> tuple[str, Encode]:
    statement = table.update().where(table.c[key] == bindparam(key)).values({name: bindparam(name) for name in columns})
    return _compiled(statement, table)


def _compiled(statement: Insert | Update, table: Table) -> tuple[str, Encode]:
    """SQLAlchemy renders the statement once, with `?` marks; the encoder orders each row's values."""
    compiled = statement.compile(dialect=_SQLITE)
    order = tuple(compiled.positiontup or ())
    return str(compiled), _encoder(table, order)


def _encoder(table: Table, columns: tuple[str, ...]) -> Encode:
    """A row's values in `columns` order, JSON columns encoded by the engines' own serializer."""
    json_at = {i for i, name in enumerate(columns) if isinstance(table.c[name].type, JSON)}
    if not json_at:
        return lambda row: tuple(row[name] for name in columns)
    plan = tuple((name, i in json_at) for i, name in enumerate(columns))
    return lambda row: tuple(json_dumps(row[name]) if is_json else row[name] for name, is_json in plan)
