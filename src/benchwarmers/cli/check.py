"""`benchwarmers check`: does every endpoint and every model on a collection work, and if not, what to do."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import typer

from benchwarmers.bench.bounds import CHECK_TIMEOUT
from benchwarmers.cli.common import console, print_json, progress_bar, table, with_bench

if TYPE_CHECKING:
    from benchwarmers.bench.services import Bench


def _reachable(value: bool | None) -> str:
    return "not asked" if value is None else ("yes" if value else "no")


def window_text(model: dict[str, Any]) -> str:
    if model["window"] is None:
        return "?"
    text = f"{model['window']:,} ({model['window_source']})"
    return f"{text}: {model['window_note']}" if model["window_note"] else text


@with_bench
async def check(
    bench: Bench,
    target: str = typer.Argument(None, metavar="[ENDPOINT|ALIAS]", help="one endpoint, or one model (default: all)"),
    per_call: float = typer.Option(CHECK_TIMEOUT, "--timeout", min=1, max=600, help="seconds each call may take"),
    as_json: bool = typer.Option(False, "--json", help="print JSON"),
) -> None:
    """Check each endpoint (reachable, key, listing) and each model on a collection (a one-token call,
    an image when it claims vision, its window); say what failed and what to do. Exit 1 on a problem:
    an empty answer, or a model not called because it is cooling down after a 429, is one.
    A model that claims vision and refuses the image is recorded as text-only; a priced one is noted."""
    from benchwarmers.bench.admin.checks import run_checks

    with progress_bar(bar=False) as progress:
        progress.add_task("checking", total=None)
        found = await run_checks(bench.state, target, per_call=per_call)
    if as_json:
        print_json(found)
    else:
        rows = [
            (e["name"], e["status"], _reachable(e["reachable"]), e["key"], e["listing"], e["fix"])
            for e in found["endpoints"]
        ]
        table(None, ["endpoint", "status", "reachable", "key", "listing", "what to do"], rows)
        if found["models"]:
            rows = [
                (m["alias"], m["status"], m["text"], m["vision"] or "not claimed", window_text(m), m["fix"])
                for m in found["models"]
            ]
            table(None, ["model", "status", "one-token call", "images", "window", "what to do"], rows)
        for model in found["models"]:
            for learned in model["learned"]:
                console.print(f"recorded for {model['alias']}: {learned}", markup=False)
            if model["note"]:
                console.print(f"note for {model['alias']}: {model['note']}", markup=False)
            for allowance in model["allowances"]:
                console.print(f"allowance of {model['alias']}: {allowance}", markup=False)
        checked = f"{len(found['endpoints'])} endpoints and {len(found['models'])} models"
        problems = found["problems"]
        console.print(
            f"{problems} problem{'s' if problems != 1 else ''} in {checked}" if problems else f"all good: {checked}",
            markup=False,
        )
    if found["problems"]:
        raise typer.Exit(1)
