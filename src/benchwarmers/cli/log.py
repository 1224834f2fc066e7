"""`benchwarmers log`: recent panels, their prompts and their call ids, newest first."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import typer

from benchwarmers.bench.names import collection_name
from benchwarmers.cli.common import hint, print_json, table, with_bench

if TYPE_CHECKING:
    from benchwarmers.bench.records import LoggedSeat
    from benchwarmers.bench.services import Bench

PROMPT_SHOWN = 60  # characters of a prompt in the table
MAX_LIMIT = 1000


def _verdict(seat: LoggedSeat) -> str:
    if seat["verdict"] is not None:
        return "useful" if seat["verdict"]["useful"] else "not useful"
    return "owed" if seat["status"] == "ok" else ""


@with_bench
async def log(
    bench: Bench,
    owed: bool = typer.Option(False, "--owed", help="only panels with seats awaiting a verdict"),
    collection: str | None = typer.Option(None, "--collection", help="only this collection (NAME or bench/NAME)"),
    model: str = typer.Option(None, "--model", help="only panels where this model alias sat"),
    limit: int = typer.Option(20, "--limit", min=1, max=MAX_LIMIT, help="at most N panels"),
    as_json: bool = typer.Option(False, "--json", help="print JSON: the panels with their seats and verdicts"),
) -> None:
    """List recent panels, one line per seat with its call id (judge them with `benchwarmers verdict`)."""
    from benchwarmers.bench.panels.log import prompt_text

    collection = collection_name(collection) if collection else None
    # One more than shown: whether the list stops at the limit or the log ends there.
    panels = await bench.log.panels(limit=limit + 1, owed=owed, collection=collection, alias=model)
    more = len(panels) > limit
    panels = panels[:limit]
    if not panels:
        await bench.log.check_names(collection=collection, alias=model)
    if as_json:
        print_json(panels)
        return
    rows = []
    for panel in panels:
        at = time.strftime("%Y-%m-%d %H:%M", time.localtime(panel["created"]))
        prompt = " ".join(prompt_text(panel["request"], PROMPT_SHOWN).split())
        for seat in panel["seats"]:
            if owed and not (seat["status"] == "ok" and seat["verdict"] is None):
                continue
            rows.append(
                (
                    seat["call"],
                    at,
                    f"bench/{panel['collection']}",
                    seat["alias"],
                    seat["status"],
                    _verdict(seat),
                    prompt,
                )
            )
    table(None, ["call", "at", "collection", "model", "status", "verdict", "prompt"], rows)
    if more:
        total = await bench.log.count(owed=owed, collection=collection, alias=model)
        hint(
            f"the newest {limit} of {total:,} panels{' owing a verdict' if owed else ''} are shown: "
            f"--limit {min(total, MAX_LIMIT)} shows {'them all' if total <= MAX_LIMIT else 'more'}"
        )
    if rows and any(r[5] == "owed" for r in rows):
        hint("judge one: benchwarmers verdict CALL --useful|--not-useful [--note ...]")
    elif not rows:
        hint("no panels owe a verdict" if owed else "no panels yet: benchwarmers ask bench/NAME 'prompt'")
