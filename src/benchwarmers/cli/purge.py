"""`benchwarmers purge`: forget old prompts and answers, keep what the evidence is computed from."""

from __future__ import annotations

import time
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from benchwarmers.cli.common import console, fail, progress_bar, table, with_bench

if TYPE_CHECKING:
    from benchwarmers.bench.services import Bench

DAY = 86_400.0


def cutoff_of(before: str | None, days: int | None, now: float) -> float:
    if (before is None) == (days is None):
        raise fail("say which panels to purge: --before YYYY-MM-DD or --days N (one of them)")
    if days is not None:
        if days < 1:
            raise fail("--days must be 1 or more (the panels older than that many days are purged)")
        return now - days * DAY
    assert before is not None
    try:
        return datetime.fromisoformat(before).timestamp()  # a date or time without a zone is local time
    except ValueError:
        raise fail(f"--before {before!r} is not a date such as 2026-01-31 (or a time, 2026-01-31T18:00)") from None


def _size(bench: Bench) -> int | None:
    """The SQLite database's bytes on disk, log included; None on PostgreSQL."""
    if not bench.settings.db_url.startswith("sqlite"):
        return None
    path = bench.settings.home / "bench.db"
    return sum(p.stat().st_size for p in (path, Path(f"{path}-wal")) if p.exists())


def _megabytes(size: int | None) -> str:
    return "" if size is None else f"{size / 1_000_000:,.1f} MB"


@with_bench
async def purge(
    bench: Bench,
    before: str = typer.Option(None, "--before", help="purge panels from before this date (local time)"),
    days: int = typer.Option(None, "--days", help="purge panels older than N days"),
    yes: bool = typer.Option(False, "--yes", "-y", help="do not ask for confirmation"),
) -> None:
    """Purge old prompts and answers, keep the leaderboard's evidence, reclaim the space.

    Seats keep model, shape, status, seconds and usage; verdicts keep usefulness
    and how many claims were real or false. Requests, answers, error texts, notes
    and claim texts are emptied, then the database is rewritten (SQLite: VACUUM).
    """
    from benchwarmers.bench.upkeep.retention import purge as purge_calls
    from benchwarmers.bench.upkeep.retention import purgeable

    now = time.time()
    cutoff = cutoff_of(before, days, now)
    since = datetime.fromtimestamp(cutoff).strftime("%Y-%m-%d %H:%M")
    found = await purgeable(bench.state, cutoff)
    if not found["panels"]:
        console.print(f"nothing to purge: no panel from before {since} still holds its prompt", markup=False)
        return
    what = f"{found['panels']} panels from before {since} ({found['seats']} seats, {found['verdicts']} verdicts)"
    if not yes:
        try:
            typer.confirm(f"Purge the prompts and answers of {what}?", abort=True, err=True)
        except typer.Abort:
            raise fail("nothing purged (answer y, or pass --yes)") from None
    size = _size(bench)
    with progress_bar() as progress:
        step = progress.add_task("emptying prompts and answers", total=found["panels"])
        progress.update(step, description="emptying prompts and answers, then reclaiming their space")
        counts, emptied = await purge_calls(
            bench.state, cutoff, progress=lambda done: progress.advance(step, done["panels"])
        )
    rows: list[list[object]] = [[kind, counts[kind]] for kind in ("panels", "seats", "verdicts")]
    if size is not None:
        rows.append(["database size", f"{_megabytes(size)} → {_megabytes(_size(bench))}"])
    table(f"Purged what was said before {since}", ["", "emptied"], rows)
    if not emptied:
        console.print(
            "the database's write-ahead log is still in use and may hold old pages until the server's next "
            "checkpoint; run purge again with the server stopped to be sure",
            markup=False,
        )
