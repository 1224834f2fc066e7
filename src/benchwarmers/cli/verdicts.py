"""`benchwarmers verdict` and `benchwarmers export`: judging seats, and taking the log away."""

from __future__ import annotations

import contextlib
import os
import sys
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

import orjson
import typer

from benchwarmers.bench.caller import Caller
from benchwarmers.cli.common import console, fail, with_bench

if TYPE_CHECKING:
    from benchwarmers.bench.services import Bench


@with_bench
async def verdict(
    bench: Bench,
    call: str = typer.Argument(..., help="the seat's call id, e.g. p20261129-231501-7f3a09c2.member1"),
    useful: bool = typer.Option(None, "--useful/--not-useful", help="was the answer useful?"),
    note: str = typer.Option("", "--note", help="why"),
    real: list[str] = typer.Option(None, "--real", help="a claim that checked out (repeat)"),
    false: list[str] = typer.Option(None, "--false", help="a claim that was false (repeat)"),
) -> None:
    """Judge one seat's answer."""
    if useful is None:
        raise fail("say --useful or --not-useful")
    result = await bench.verdicts.record(
        {"call": call, "useful": useful, "note": note, "real": real or [], "false": false or []}, Caller()
    )
    if not result["recorded"]:
        console.print(f"{call}: the same verdict is already recorded; nothing written", markup=False)
    else:
        console.print(
            f"{call}: {'replaced the earlier verdict' if result['replaced'] else 'verdict recorded'}"
            f" ({'useful' if useful else 'not useful'})",
            markup=False,
        )


class ExportKind(StrEnum):
    calls = "calls"
    verdicts = "verdicts"
    evidence = "evidence"
    bench = "bench"


def _private(path: Path) -> BinaryIO:
    """The export file, readable by its owner only (it holds prompts and answers), even if it existed."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    if os.name != "nt":
        os.fchmod(fd, 0o600)
    return os.fdopen(fd, "wb")


@with_bench
async def export(
    bench: Bench,
    kind: ExportKind = typer.Argument(
        ...,
        help="calls (one seat per line), verdicts (one verdict per line), evidence (one judged seat per line), "
        "or bench (the whole bench, for `benchwarmers import`: no provider or gateway keys)",
    ),
    output: Path = typer.Option(None, "--output", "-o", help="write here (default: stdout)"),
) -> None:
    """Export the call log, the verdicts or the whole bench as JSON lines (images only as placeholders)."""
    from benchwarmers.bench.admin.transfer import export_bench

    handle = _private(output) if output else sys.stdout.buffer
    count = 0
    lines = export_bench(bench.state) if kind is ExportKind.bench else bench.log.export(kind.value)
    try:
        # Closed here if a write fails (a closed pipe), so its read ends now, not in asyncio's shutdown.
        async with contextlib.aclosing(lines):
            async for line in lines:
                handle.write(orjson.dumps(line) + b"\n")
                count += 1
    finally:
        if output:
            handle.close()
    if output:
        console.print(f"exported {count} {kind.value} to {output}", markup=False)
