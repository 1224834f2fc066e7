"""The whole bench as rows, table by table, for moving it to another database (SQLite → PostgreSQL).

Every table in dependency order, each row as it is stored, but never a secret: an endpoint's
sealed provider key is left out (the new database is sealed by another home's key, and the export
is a plain file), and gateway keys and notification targets are left out (issue and add them
again). The schema revision goes first, so an import refuses a file from another version instead
of guessing.
"""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator, Iterable
from typing import Any

from sqlalchemy import LargeBinary, Table, func, select, text
from sqlalchemy.ext.asyncio import AsyncConnection

from benchwarmers.store.schema import endpoints, gateway_keys, metadata, notify_deliveries, notify_targets

# Notification targets are secrets sealed by this home's key (add them again, like gateway keys).
SKIPPED_TABLES = frozenset({gateway_keys.name, notify_targets.name, notify_deliveries.name})
SECRET_COLUMNS = {endpoints.name: ("api_key_enc", "api_key_last4")}
BATCH = 500


class NotEmpty(Exception):
    """The database being imported into already holds a bench."""


def tables() -> list[Table]:
    """The tables moved, parents before children (so foreign keys hold while rows go in)."""
    return [t for t in metadata.sorted_tables if t.name not in SKIPPED_TABLES]


def _plain(table: Table, row: dict[str, Any]) -> dict[str, Any]:
    for column in SECRET_COLUMNS.get(table.name, ()):
        row[column] = None
    for binary in table.columns:
        value = row.get(binary.name)
        if isinstance(binary.type, LargeBinary) and value is not None:
            row[binary.name] = base64.b64encode(value).decode()
    return row


async def iter_rows(conn: AsyncConnection) -> AsyncIterator[tuple[str, dict[str, Any]]]:
    """(table name, row) for every row the bench holds, secrets left out."""
    for table in tables():
        order = list(table.primary_key.columns) or list(table.columns)[:1]
        result = await conn.stream(select(table).order_by(*order))
        async for row in result.mappings():
            yield table.name, _plain(table, {str(name): value for name, value in row.items()})


async def is_empty(conn: AsyncConnection) -> bool:
    """True when no table holds a row (a freshly migrated database)."""
    for table in tables():
        if await conn.scalar(select(func.count()).select_from(table)):
            return False
    return True


def _stored(table: Table, row: dict[str, Any]) -> dict[str, Any]:
    known = {c.name: c for c in table.columns}
    unknown = set(row) - set(known)
    if unknown:
        raise ValueError(f"table {table.name} has no column {', '.join(sorted(unknown))}")
    for name, column in known.items():
        if isinstance(column.type, LargeBinary) and isinstance(row.get(name), str):
            row[name] = base64.b64decode(row[name])
    return row


async def load_rows(conn: AsyncConnection, rows: Iterable[tuple[str, dict[str, Any]]]) -> dict[str, int]:
    """Insert every (table name, row) in one transaction; rows counted by table."""
    by_name = {t.name: t for t in tables()}
    counted: dict[str, int] = {}
    pending: list[dict[str, Any]] = []
    current: Table | None = None
    for name, row in rows:
        table = by_name.get(name)
        if table is None:
            raise ValueError(f"unknown table {name!r}")
        if table is not current or len(pending) >= BATCH:
            if current is not None and pending:
                await conn.execute(current.insert(), pending)
            pending, current = [], table
        pending.append(_stored(table, row))
        counted[name] = counted.get(name, 0) + 1
    if current is not None and pending:
        await conn.execute(current.insert(), pending)
    if conn.dialect.name == "postgresql":
        await _advance_sequences(conn)
    return counted


async def _advance_sequences(conn: AsyncConnection) -> None:
    """Rows came with their ids: each id sequence must start after the largest one."""
    for table in tables():
        for column in table.primary_key.columns:
            if column.autoincrement is True or (column.type.python_type is int and len(table.primary_key.columns) == 1):
                sequence = await conn.scalar(
                    text("SELECT pg_get_serial_sequence(:table, :column)"),
                    {"table": table.name, "column": column.name},
                )
                if sequence:
                    largest = await conn.scalar(select(func.max(column)))
                    await conn.execute(
                        text("SELECT setval(:sequence, :value, :called)"),
                        {"sequence": sequence, "value": largest or 1, "called": largest is not None},
                    )
