"""`benchwarmers backup FILE` and `restore FILE` (SQLite; PostgreSQL: pg_dump), and `import FILE`
(a whole bench written by `export bench`, into an empty database)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import orjson
import typer

from benchwarmers.cli.common import console, fail, with_bench

if TYPE_CHECKING:
    from benchwarmers.bench.services import Bench


@with_bench
async def backup(
    bench: Bench, file: Path = typer.Argument(..., help="where to write the copy (replaced if it exists)")
) -> None:
    """Copy the bench's database while it serves (SQLite's online backup; PostgreSQL: pg_dump)."""
    from benchwarmers.bench.upkeep.backup import backup_to

    size = backup_to(bench.state, file)
    console.print(
        f"backed up {bench.settings.home / 'bench.db'} to {file} ({size:,} bytes); keep "
        f"{bench.settings.home / 'secret.key'} with it (it unlocks the stored provider keys)",
        markup=False,
    )


@with_bench
async def restore(
    bench: Bench, file: Path = typer.Argument(..., help="a file written by `benchwarmers backup`")
) -> None:
    """Put a backup in place of the bench's database (a running bench sees it at its next request)."""
    from benchwarmers.bench.upkeep.backup import restore_from

    revision = await restore_from(bench.state, file)
    console.print(f"restored {file} (schema {revision}, migrated to the newest)", markup=False)


@with_bench
async def import_(
    bench: Bench, file: Path = typer.Argument(..., help="a file written by `benchwarmers export bench -o FILE`")
) -> None:
    """Read a whole bench (`export bench`) into this empty database, e.g. SQLite → PostgreSQL."""
    from benchwarmers.bench.admin.transfer import import_bench

    try:
        with file.open("rb") as handle:
            counted = await import_bench(bench.state, (orjson.loads(line) for line in handle if line.strip()))
    except FileNotFoundError:
        raise fail(f"no export file at {file}") from None
    except orjson.JSONDecodeError as exc:
        raise fail(f"{file} is not JSON lines ({exc})") from None
    rows = ", ".join(f"{count} {table}" for table, count in counted.items() if count)
    console.print(f"imported {rows or 'nothing'}; set the endpoints' provider keys again", markup=False)
