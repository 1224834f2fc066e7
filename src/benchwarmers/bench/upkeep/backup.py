"""`benchwarmers backup` and `restore`: a consistent copy of a SQLite bench while it serves, and
putting one back. PostgreSQL has its own tools for this; the refusal says which."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from benchwarmers.errors import InvalidRequest, NotFound
from benchwarmers.store import backup
from benchwarmers.store.changes import config_version
from benchwarmers.store.db import migrate

if TYPE_CHECKING:
    from benchwarmers.bench.state import BenchState

PG_DUMP = (
    "the bench's database is PostgreSQL: back it up with pg_dump, which is consistent while the bench serves "
    '(`pg_dump -Fc -f bench.dump "$URL"`, with the URL without "+asyncpg"), and restore with '
    '`pg_restore --clean --if-exists -d "$URL" bench.dump`; keep secret.key from the home folder with it'
)


def _database(state: BenchState) -> Path:
    path = backup.sqlite_path(state.settings.db_url)
    if path is None:
        raise InvalidRequest(PG_DUMP, code="use_pg_dump")
    return path


def backup_to(state: BenchState, target: Path) -> int:
    """Copy the bench's SQLite database to `target`; bytes written."""
    database = _database(state)
    if not database.exists():
        raise NotFound(f"there is no database at {database} yet: nothing to back up")
    if target.resolve() == database.resolve():
        raise InvalidRequest("the backup file cannot be the database itself; name another file")
    return backup.backup_file(database, target)


async def restore_from(state: BenchState, source: Path) -> str:
    """Put the backup `source` in place of the bench's database; the backup's schema revision.
    Running servers see it at their next request (the config signal) and migrate nothing: a backup
    from an older version is migrated forward here."""
    database = _database(state)
    revision = backup.schema_revision(source)
    if revision is None:
        raise InvalidRequest(f"{source} is not a Benchwarmers database backup (no such file, or no schema in it)")
    # Our own connections are closed first: the copy takes the file's lock for as long as it runs.
    await state.close_connections()
    backup.restore_file(source, database)
    if state.write_engine is not None:
        await migrate(state.write_engine)  # a backup from an older version is brought forward
    state.invalidate()
    await state.reload_history()
    async with state.read() as conn:
        version = await config_version(conn)
    await state.signal.touch(version)
    return revision
