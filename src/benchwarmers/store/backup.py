"""Copies of a SQLite bench with SQLite's online backup API: consistent while the bench serves.

The backup API copies the database page by page under SQLite's own locks, so a copy taken while
`serve` writes is the database as of one moment, and readers and writers of the live file wait
only while each step runs. Restoring writes a backup into the live file the same way.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

PAGES_A_STEP = 1024  # pages copied between releases of the lock (4 MB with 4 KB pages)


def sqlite_path(url: str) -> Path | None:
    """The file of a `sqlite+aiosqlite:///...` URL; None for any other database."""
    prefix = "sqlite+aiosqlite:///"
    return Path(url.removeprefix(prefix)) if url.startswith(prefix) else None


def _copy(source: sqlite3.Connection, target: sqlite3.Connection) -> None:
    source.backup(target, pages=PAGES_A_STEP)


def backup_file(database: Path, target: Path) -> int:
    """Copy `database` to `target` (replaced if it exists); the size of the copy in bytes."""
    temporary = target.with_name(f".{target.name}.partial")
    temporary.unlink(missing_ok=True)
    with sqlite3.connect(f"file:{database}?mode=ro", uri=True, timeout=30) as source:
        copy = sqlite3.connect(temporary)
        try:
            _copy(source, copy)
            copy.execute("PRAGMA journal_mode=DELETE")  # one self-contained file, no -wal beside it
        finally:
            copy.close()
    temporary.chmod(0o600)
    temporary.replace(target)
    return target.stat().st_size


def schema_revision(path: Path) -> str | None:
    """The Alembic revision of a SQLite file, or None when it is not a bench's database."""
    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as conn:
            row = conn.execute("SELECT version_num FROM alembic_version").fetchone()
    except sqlite3.DatabaseError:
        return None
    return str(row[0]) if row else None


def restore_file(backup: Path, database: Path) -> None:
    """Write `backup` over the live `database` (under SQLite's locks: a serving bench waits, then
    reads the restored data)."""
    with sqlite3.connect(f"file:{backup}?mode=ro", uri=True) as source:
        live = sqlite3.connect(database, timeout=30)
        try:
            _copy(source, live)
        finally:
            live.close()
