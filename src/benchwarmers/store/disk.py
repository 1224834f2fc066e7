"""The disk under the store: whether an error means it is full, and how much room its folder has.

SQLite says SQLITE_FULL ("database or disk is full") when a write finds no room, in the file or its
write-ahead log, and also when `PRAGMA max_page_count` is reached; the operating system says ENOSPC
(or EDQUOT, a quota) for the files the bench writes itself; PostgreSQL says SQLSTATE 53100 when its
own disk is full. Any of them is a full disk to the caller: nothing was written, and once room is
made the next write succeeds (BenchState.write rolls back what the failure left open).
"""

from __future__ import annotations

import errno
import os
import sqlite3
from pathlib import Path

from sqlalchemy import make_url
from sqlalchemy.exc import DBAPIError, PendingRollbackError, ResourceClosedError

_FULL_ERRNOS = (errno.ENOSPC, errno.EDQUOT)
_SQLITE_FULL_WORDS = "database or disk is full"
_POSTGRES_DISK_FULL = "53100"


def disk_full(exc: BaseException | None, _depth: int = 0) -> bool:
    """True when `exc` (or what it was raised from) says the disk had no room for a write."""
    if exc is None or _depth > 5:
        return False
    if isinstance(exc, PendingRollbackError | ResourceClosedError):
        return disk_full(exc.__cause__ or exc.__context__, _depth + 1)
    if isinstance(exc, DBAPIError):
        orig = exc.orig
        return disk_full(orig, _depth + 1) or disk_full(orig.__cause__ if orig is not None else None, _depth + 1)
    if isinstance(exc, sqlite3.Error):
        return getattr(exc, "sqlite_errorcode", None) == sqlite3.SQLITE_FULL or _SQLITE_FULL_WORDS in str(exc)
    if isinstance(exc, OSError):
        return exc.errno in _FULL_ERRNOS
    return getattr(exc, "sqlstate", None) == _POSTGRES_DISK_FULL


def data_folder(db_url: str, home: Path) -> Path:
    """The folder whose disk holds the bench's data: the SQLite database's, else the home folder."""
    if db_url.startswith("sqlite"):
        database = make_url(db_url).database
        if database:
            return Path(database).parent
    return home


def free_bytes(folder: Path) -> int | None:
    """Bytes an unprivileged writer may still use on `folder`'s disk (None when it cannot be read)."""
    try:
        found = os.statvfs(folder)
    except OSError:
        return None
    return found.f_bavail * found.f_frsize


def size_text(amount: int | None) -> str:
    """A byte count as a person reads it: 0 B, 812 kB, 3.2 MB, 312 MB (powers of 1,000, as `df -H`)."""
    if amount is None:
        return "unknown"
    for unit, scale in (("GB", 10**9), ("MB", 10**6), ("kB", 10**3)):
        if amount >= scale:
            value = amount / scale
            return f"{value:.1f} {unit}" if value < 10 else f"{value:.0f} {unit}"
    return f"{amount} B"
