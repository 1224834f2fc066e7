"""Moving a whole bench between databases: `benchwarmers export bench` and `benchwarmers import`.

The export is JSON lines: a header naming the schema revision, then one line per row (endpoints
without their provider keys, models and roster overrides, facts, collections, settings, roles,
the changes log, panels, seats, verdicts, alerts). The import reads them into an empty database
of the same schema revision, in one transaction, and tells running servers.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Iterable
from typing import TYPE_CHECKING, Any

from benchwarmers import __version__
from benchwarmers.errors import Conflict, InvalidRequest
from benchwarmers.store import transfer
from benchwarmers.store.changes import CHANGED
from benchwarmers.store.db import SCHEMA_REVISION

if TYPE_CHECKING:
    from benchwarmers.bench.state import BenchState

KIND = "benchwarmers-bench"


async def export_bench(state: BenchState) -> AsyncGenerator[dict[str, Any], None]:
    yield {"kind": KIND, "version": __version__, "schema": SCHEMA_REVISION}
    async with state.read() as conn:
        async for table, row in transfer.iter_rows(conn):
            yield {"table": table, "row": row}


async def import_bench(state: BenchState, lines: Iterable[dict[str, Any]]) -> dict[str, int]:
    """Read an export into this (empty) database; rows imported by table."""
    found = iter(lines)
    header = next(found, None)
    if not isinstance(header, dict) or header.get("kind") != KIND:
        raise InvalidRequest("not a bench export: its first line should come from `benchwarmers export bench`")
    if header.get("schema") != SCHEMA_REVISION:
        raise InvalidRequest(
            f"the export is of schema {header.get('schema')} and this bench is at {SCHEMA_REVISION}: "
            "export again with the same Benchwarmers version as this one"
        )

    def rows() -> Iterable[tuple[str, dict[str, Any]]]:
        for number, line in enumerate(found, start=2):
            table, row = (line.get("table"), line.get("row")) if isinstance(line, dict) else (None, None)
            if not isinstance(table, str) or not isinstance(row, dict):
                raise InvalidRequest(f"line {number} is not a row of a bench export")
            yield table, row

    async with state.write() as conn:
        if not await transfer.is_empty(conn):
            raise Conflict(
                "this database already holds a bench: import into a new, empty one "
                "(point BENCHWARMERS_DATABASE_URL at it; it is migrated on first use)",
                code="bench_not_empty",
            )
        try:
            counted = await transfer.load_rows(conn, rows())
        except ValueError as exc:
            raise InvalidRequest(f"the export does not fit this schema: {exc}") from None
        conn.info[CHANGED] = True  # running servers reload the config
    await state.reload_history()
    return counted
