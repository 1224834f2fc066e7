"""`benchwarmers verdict` and `benchwarmers export`: judging seats, and taking the log away."""

from __future__ import annotations

import os
import sys
from enum import StrEnum
from pathlib import Path
from typing import Any, BinaryIO

import orjson
import typer

from benchwarmers.bench.core import Bench
from benchwarmers.bench.evidence.board import evidence_line
from benchwarmers.bench.panels.service import Caller
from benchwarmers.cli.common import console, fail, with_bench
from benchwarmers.store import calls
from benchwarmers.store import evidence as evidence_rows


@with_bench
async def verdict(
    bench: Bench,
    call: str = typer.Argument(..., help="the seat's call id, e.g. p20261129-231501-7f3a.member1"),
    useful: bool = typer.Option(None, "--useful/--not-useful", help="was the answer useful?"),
    note: str = typer.Option("", "--note", help="why"),
    real: list[str] = typer.Option(None, "--real", help="a claim that checked out (repeat)"),
    false: list[str] = typer.Option(None, "--false", help="a claim that was false (repeat)"),
) -> None:
    """Judge one seat's answer."""
    if useful is None:
        raise fail("say --useful or --not-useful")
    result = await bench.gateway.verdict(
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


def _seat_line(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "call": row["call"],
        "panel": row["panel_id"],
        "collection": row["collection"],
        "seat": row["seat"],
        "alias": row["alias"],
        "endpoint": row["endpoint"],
        "shape": row["shape"],
        "status": row["status"],
        "seconds": row["seconds"],
        "answer": row["answer"],
        "error": row["error"],
        "usage": row["usage"],
        "caller": row["caller"],
        "at": row["created_at"],
        "request": row["request"],
    }


def _verdict_line(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "call": row["call"],
        "panel": row["panel_id"],
        "alias": row["alias"],
        "shape": row["shape"],
        "useful": row["useful"],
        "note": row["note"],
        "real": row["real"],
        "false": row["false"],
        "caller": row["caller"],
        "current": row["current"],
        "at": row["created_at"],
    }


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
        ..., help="calls (one seat per line), verdicts (one verdict per line) or evidence (one judged seat per line)"
    ),
    output: Path = typer.Option(None, "--output", "-o", help="write here (default: stdout)"),
) -> None:
    """Export the call log or the verdicts as JSON lines (images only as placeholders)."""
    handle = _private(output) if output else sys.stdout.buffer
    count = 0
    try:
        async with bench.read() as conn:
            if kind is ExportKind.evidence:
                rows, line = evidence_rows.iter_judged(conn), evidence_line
            else:
                rows = calls.iter_seats(conn) if kind is ExportKind.calls else calls.iter_verdicts(conn)
                line = _seat_line if kind is ExportKind.calls else _verdict_line
            async for row in rows:
                handle.write(orjson.dumps(line(row)) + b"\n")
                count += 1
    finally:
        if output:
            handle.close()
    if output:
        console.print(f"exported {count} {kind.value} to {output}", markup=False)
