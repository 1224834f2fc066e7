"""`benchwarmers key ...`: gateway keys for apps that call the bench (see docs/SECURITY.md)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING

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


@app.command("create")
@with_bench
async def create(
    bench: Bench,
    name: str = typer.Argument(..., help="who the key is for, e.g. ci or notes-app (written on every call)"),
    collection: list[str] = typer.Option(None, "--collection", help="a collection it may call (repeat; default all)"),
    rpm: int = typer.Option(None, "--rpm", help="requests a minute it may make (default: no limit)"),
) -> None:
    """Make a key. It is printed once, here, and never stored: copy it now."""
    key, record = await bench.keys.create(name, collection or None, rpm)
    # The key alone on stdout, so `KEY=$(benchwarmers key create ci)` works; the rest on stderr.
    console.print(key, markup=False)
    limit = f", {rpm} requests a minute" if rpm else ""
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
            _when(k["last_used_at"]),
            "revoked " + _when(k["revoked_at"]) if k["revoked_at"] else "active",
        ]
        for k in keys
    ]
    table(None, ["name", "key", "may call", "rpm", "last used", "state"], rows)


@app.command("revoke")
@with_bench
async def revoke(bench: Bench, name: str = typer.Argument(..., help="the key's name")) -> None:
    """Revoke a key: it stops working on the next request, in every running server."""
    await bench.keys.revoke(name)
    console.print(f"key {name!r} revoked", markup=False)
