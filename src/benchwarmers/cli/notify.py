"""`benchwarmers notify ...`: where new alerts are sent (Apprise URLs: ntfy, Slack, Discord, email, webhooks).

Apprise is an optional extra (`pip install 'benchwarmers[notify]'`). A URL holds its service's
secrets: it is stored sealed and shown back as its scheme and host only. `serve` sends new alerts
within seconds; without a server, `benchwarmers notify drain` (or the upkeep run) sends them.
"""

from __future__ import annotations

import sys
from datetime import UTC, datetime
from typing import TYPE_CHECKING

import typer

from benchwarmers.cli.common import console, fail, print_json, table, with_bench

if TYPE_CHECKING:
    from benchwarmers.bench.services import Bench

app = typer.Typer(help="Notifications: new alerts sent to ntfy, Slack, Discord, email...", no_args_is_help=True)


@app.command("add")
@with_bench
async def add(
    bench: Bench,
    url: str = typer.Argument(
        ..., help="an Apprise URL (ntfy://TOPIC, slack://..., json://HOST/PATH); '-' reads it from stdin"
    ),
    name: str = typer.Option(None, "--name", help="its name (default: from the URL's scheme and host)"),
) -> None:
    """Send every new alert to this target from now on (the URL is stored sealed, never shown again)."""
    if url == "-":  # kept out of the shell's history and the process list
        url = sys.stdin.readline().strip()
    target = await bench.notify.add(url, name)
    console.print(
        f"notification target {target['name']!r} added ({target['label']}): new alerts go to it; "
        f"try it with `benchwarmers notify test {target['name']}`",
        markup=False,
    )


def _when(at: float) -> str:
    return datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%d %H:%M UTC")


@app.command("list")
@with_bench
async def list_(bench: Bench, as_json: bool = typer.Option(False, "--json", help="print JSON")) -> None:
    """Targets (scheme and host only) with what was sent to each, what waits and what failed."""
    targets = await bench.notify.list_targets()
    if as_json:
        print_json(targets)
        return
    if not targets:
        console.print("no notification targets: add one with `benchwarmers notify add URL`", markup=False)
        return
    rows = [
        [t["name"], t["label"], _when(t["created_at"]), t["sent"], t["pending"], t["failed"], t["last_error"] or ""]
        for t in targets
    ]
    table(None, ["name", "target", "added", "sent", "waiting", "failed", "last error"], rows)


@app.command("remove")
@with_bench
async def remove(bench: Bench, name: str = typer.Argument(..., help="the target's name")) -> None:
    """Stop sending alerts to a target (its URL is deleted)."""
    removed = await bench.notify.remove(name)
    console.print(f"notification target {name!r} ({removed['label']}) removed", markup=False)


@app.command("test")
@with_bench
async def test(bench: Bench, name: str = typer.Argument(..., help="the target's name")) -> None:
    """Send a test notification to a target now."""
    tried = await bench.notify.test(name)
    if tried["status"] != "ok":
        raise fail(f"the test notification to {name!r} ({tried['label']}) failed: {tried['error']}")
    console.print(f"test notification sent to {name!r} ({tried['label']})", markup=False)


@app.command("drain")
@with_bench
async def drain(bench: Bench) -> None:
    """Send the new alerts that wait now (what `serve` does every few seconds), once."""
    from benchwarmers.bench.notify.drain import drain as run_drain

    console.print((await run_drain(bench.state)).describe(), markup=False)
