"""`benchwarmers key ...`: gateway keys for apps that call the bench (see docs/SECURITY.md)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import typer

from benchwarmers.cli.common import console, err_console, print_json, table, with_bench

if TYPE_CHECKING:
    from benchwarmers.bench.services import Bench

app = typer.Typer(help="Gateway keys: who may call the bench when keys are required.", no_args_is_help=True)


def _when(at: float | None) -> str:
    if at is None:
        return "never"
    return datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%d %H:%M UTC")


def _scope(collections: list[str] | None) -> str:
    return "all collections" if collections is None else ", ".join(f"bench/{c}" for c in collections)


def _budget(record: dict[str, Any]) -> str:
    amounts = (("daily_panels", "panels"), ("daily_tokens", "tokens"))
    return "".join(f", {record[k]:,} {what} a day" for k, what in amounts if record[k])


DAILY_PANELS = typer.Option(None, "--daily-panels", help="panels a day it may make (429 until the reset); 0: no budget")
DAILY_TOKENS = typer.Option(None, "--daily-tokens", help="tokens a day its panels' seats may spend; 0: no budget")


@app.command("create")
@with_bench
async def create(
    bench: Bench,
    name: str = typer.Argument(..., help="who the key is for, e.g. ci or notes-app (written on every call)"),
    collection: list[str] = typer.Option(None, "--collection", help="a collection it may call (repeat; default all)"),
    rpm: int = typer.Option(None, "--rpm", help="requests a minute it may make (default: no limit)"),
    daily_panels: int = DAILY_PANELS,
    daily_tokens: int = DAILY_TOKENS,
) -> None:
    """Make a key. It is printed once, here, and never stored: copy it now."""
    key, record = await bench.keys.create(
        name, collection or None, rpm, daily_panels=daily_panels, daily_tokens=daily_tokens
    )
    # The key alone on stdout, so `KEY=$(benchwarmers key create ci)` works; the rest on stderr.
    console.print(key, markup=False)
    limit = f", {rpm} requests a minute" if rpm else ""
    limit += _budget(record)
    err_console.print(
        f"key {record['name']!r} made ({_scope(record['collections'])}{limit}). "
        "It is shown only this once: send it as Authorization: Bearer <key>.",
        markup=False,
    )


@app.command("list")
@with_bench
async def list_(
    bench: Bench,
    revoked: bool = typer.Option(False, "--revoked", help="include revoked keys"),
    as_json: bool = typer.Option(False, "--json", help="print JSON"),
) -> None:
    """Keys with their last four characters, what they may call and when each was last used."""
    keys = await bench.keys.list_keys(include_revoked=revoked)
    if as_json:
        print_json(keys)
        return
    if not keys:
        console.print("no gateway keys yet: make one with `benchwarmers key create NAME`", markup=False)
        return
    rows = [
        [
            k["name"],
            f"…{k['last4']}",
            _scope(k["collections"]),
            k["rpm"] or "no limit",
            _budget(k).removeprefix(", ") or "none",
            _when(k["last_used_at"]),
            "revoked " + _when(k["revoked_at"]) if k["revoked_at"] else "active",
        ]
        for k in keys
    ]
    table(None, ["name", "key", "may call", "rpm", "daily budget", "last used", "state"], rows)


@app.command("edit")
@with_bench
async def edit(
    bench: Bench,
    name: str = typer.Argument(..., help="the key's name"),
    rpm: int = typer.Option(None, "--rpm", help="requests a minute it may make; 0: no limit"),
    daily_panels: int = DAILY_PANELS,
    daily_tokens: int = DAILY_TOKENS,
) -> None:
    """Change a key's limits (only the options given change); the key itself stays the same."""
    record = await bench.keys.edit(name, rpm=rpm, daily_panels=daily_panels, daily_tokens=daily_tokens)
    rate = f"{record['rpm']} requests a minute" if record["rpm"] else "no rate limit"
    console.print(f"key {name!r}: {rate}{_budget(record) or ', no daily budget'}", markup=False)


@app.command("revoke")
@with_bench
async def revoke(bench: Bench, name: str = typer.Argument(..., help="the key's name")) -> None:
    """Revoke a key: it stops working on the next request, in every running server."""
    await bench.keys.revoke(name)
    console.print(f"key {name!r} revoked", markup=False)
