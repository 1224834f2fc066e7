"""`benchwarmers shape ...` and `benchwarmers decision ...`: task shapes and who labels them."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from benchwarmers.cli.common import console, print_json, table, with_bench

if TYPE_CHECKING:
    from benchwarmers.bench.services import Bench

shapes_app = typer.Typer(help="Task shapes: verdicts are counted per shape.", no_args_is_help=True)
decision_app = typer.Typer(
    help="Decision models: label a request's shape when nothing else does.", no_args_is_help=True
)


@shapes_app.command("list")
@with_bench
async def list_shapes(bench: Bench, as_json: bool = typer.Option(False, "--json", help="print JSON")) -> None:
    """List shapes and their descriptions."""
    shapes = (await bench.state.snapshot()).shapes
    if as_json:
        print_json(shapes)
        return
    table(None, ["shape", "description"], list(shapes.items()))


@shapes_app.command("set")
@with_bench
async def set_shape(
    bench: Bench,
    name: str = typer.Argument(...),
    description: str = typer.Option(..., "--description", help="what requests of this shape ask for"),
) -> None:
    """Add a shape or change its description (decision models choose by it)."""
    await bench.shapes.set_shape(name, description)
    console.print(f"shape {name}: {description.strip()}", markup=False)


@shapes_app.command("remove")
@with_bench
async def remove_shape(bench: Bench, name: str = typer.Argument(...)) -> None:
    """Remove a shape (recorded verdicts keep it)."""
    await bench.shapes.remove_shape(name)
    console.print(f"removed shape {name}", markup=False)


@decision_app.command("add")
@with_bench
async def add_decision(
    bench: Bench,
    alias: str = typer.Argument(..., help="a model on the roster"),
    kind: str = typer.Option("chat", "--kind", help="chat (asks in JSON) or choice (a native decision API)"),
) -> None:
    """Register a decision model; it is asked once now to prove it answers."""
    row = await bench.shapes.add_decision_model(alias, kind)
    where = f" at /{row['path']}" if row["path"] else ""
    console.print(f"decision model {alias} ({kind}{where}) answered; it labels automatic shapes", markup=False)


@decision_app.command("list")
@with_bench
async def list_decision(bench: Bench, as_json: bool = typer.Option(False, "--json", help="print JSON")) -> None:
    """List decision models, in the order they are tried."""
    rows = (await bench.state.snapshot()).decision_models
    if as_json:
        print_json(list(rows))
        return
    table(None, ["alias", "kind", "path"], [(r["alias"], r["kind"], r["path"] or "") for r in rows])


@decision_app.command("remove")
@with_bench
async def remove_decision(bench: Bench, alias: str = typer.Argument(...)) -> None:
    """Stop using a model as a decision model."""
    await bench.shapes.remove_decision_model(alias)
    console.print(f"removed decision model {alias}", markup=False)
