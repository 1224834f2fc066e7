"""`benchwarmers collection ...`: named groups of models, served as `bench/<name>`."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson
import typer

from benchwarmers.bench.names import collection_name
from benchwarmers.cli.common import console, err_console, fail, print_json, table, with_bench

if TYPE_CHECKING:
    from benchwarmers.bench.services import Bench

app = typer.Typer(help="Collections: named groups of models, served as bench/<name>.", no_args_is_help=True)


MEMBER = typer.Option(None, "--member", help="model alias (repeat for each member)")
DESCRIPTION = typer.Option(None, "--description", help="what the collection is for (≤ 300 characters)")
TAG = typer.Option(None, "--tag", help="lower-case word (repeat, at most 8)")
SHAPE = typer.Option(None, "--shape", help="task shape, e.g. review (default: decided per request)")
REPLY = typer.Option(
    None, "--reply", help="all (every answer), merged (one merged answer) or pick (one seat's own message)"
)
MERGER = typer.Option(None, "--merger", help="model alias that merges answers in merged mode")
MAX_EXPLORERS = typer.Option(None, "--max-explorers", help="explorer seats at most (default 2)")
MAX_CALLS = typer.Option(None, "--max-calls", help="seats at most, members included (default 5)")
REQUIRE_TAG = typer.Option(
    None, "--require-tag", help="seat only models carrying this model tag (repeat; see `model show`)"
)
EXCLUDE_TAG = typer.Option(
    None,
    "--exclude-tag",
    help="never seat a model carrying this model tag, member or explorer (repeat), e.g. trains-on-prompts",
)
AUTO_SWAP = typer.Option(
    None,
    "--auto-swap/--no-auto-swap",
    help="let the bench swap a member for a decisively better explorer itself (see `benchwarmers advise`)",
)
STAND_INS = typer.Option(
    None,
    "--stand-ins/--no-stand-ins",
    help="a member that is cooling, paced out or retired gets a stand-in for the panel: the best eligible model",
)

DAILY_PANELS = typer.Option(
    None, "--daily-panels", help="panels a day it may answer, refused (429) until the reset after that; 0: no budget"
)
DAILY_TOKENS = typer.Option(
    None, "--daily-tokens", help="tokens a day its seats may spend, as they report them; 0: no budget"
)

# One list of the options `add` and `edit` share: (parameter, the collection field it sets, type, option).
OPTIONS: tuple[tuple[str, str, Any, Any], ...] = (
    ("member", "members", list[str] | None, MEMBER),
    ("description", "description", str | None, DESCRIPTION),
    ("tag", "tags", list[str] | None, TAG),
    ("shape", "shape", str | None, SHAPE),
    ("reply", "reply", str | None, REPLY),
    ("merger", "merger", str | None, MERGER),
    ("max_explorers", "max_explorers", int | None, MAX_EXPLORERS),
    ("max_calls", "max_calls", int | None, MAX_CALLS),
    ("auto_swap", "auto_swap", bool | None, AUTO_SWAP),
    ("require_tag", "require_tags", list[str] | None, REQUIRE_TAG),
    ("exclude_tag", "exclude_tags", list[str] | None, EXCLUDE_TAG),
    ("daily_panels", "daily_panels", int | None, DAILY_PANELS),
    ("daily_tokens", "daily_tokens", int | None, DAILY_TOKENS),
    ("stand_ins", "stand_ins", bool | None, STAND_INS),
)
REPEATED = ("members", "tags", "require_tags", "exclude_tags")  # an empty list is an option not given


def _collection_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """Give `func(bench, name, **options)` a signature with every option of OPTIONS after NAME."""
    bench, name, *_ = inspect.signature(func).parameters.values()
    options = [
        inspect.Parameter(parameter, inspect.Parameter.KEYWORD_ONLY, default=option, annotation=annotation)
        for parameter, _, annotation, option in OPTIONS
    ]
    func.__signature__ = inspect.Signature([bench, name, *options])  # type: ignore[attr-defined]
    return func


def _fields(options: dict[str, Any]) -> dict[str, Any]:
    """The options as collection fields: None, or a repeated option given no time, is not given."""
    return {
        field: (options.get(parameter) or None) if field in REPEATED else options.get(parameter)
        for parameter, field, _, _ in OPTIONS
    }


@app.command("add")
@with_bench
@_collection_options
async def add(bench: Bench, name: str = typer.Argument(...), **options: Any) -> None:
    """Create a collection."""
    from benchwarmers.bench.admin.collection_rules import explorer_seats
    from benchwarmers.nouns.collections import Collection

    created = await bench.collections.add_collection(Collection.parse({"name": name, **_fields(options)}))
    snapshot = await bench.state.snapshot()
    console.print(
        f"created bench/{created['name']}: {len(created['members'])} member(s) + "
        f"{explorer_seats(created, snapshot.gateway)} explorer seat(s)",
        markup=False,
    )
    await _warn(bench, created)


async def _warn(bench: Bench, saved: Any) -> None:
    for warning in await bench.collections.warnings(saved):
        err_console.print(f"warning: {warning}", markup=False)


@app.command("edit")
@with_bench
@_collection_options
async def edit(bench: Bench, name: str = typer.Argument(...), **options: Any) -> None:
    """Change a collection (only the options given change; --member replaces the member list)."""
    from pydantic import ValidationError

    from benchwarmers.nouns.collections import CollectionEdit, type_refusal

    fields = _fields(options)
    try:
        changes = CollectionEdit.model_validate(fields).model_dump(exclude_none=True)
    except ValidationError as exc:
        raise type_refusal(exc, fields) from None
    edited = await bench.collections.edit_collection(name, changes)
    console.print(f"updated bench/{edited['name']}", markup=False)
    await _warn(bench, edited)


@app.command("list")
@with_bench
async def list_(bench: Bench, as_json: bool = typer.Option(False, "--json", help="print JSON")) -> None:
    """List collections."""
    from benchwarmers.bench.admin.collection_rules import explorer_seats
    from benchwarmers.bench.records import collection_fields

    collections = await bench.collections.list_collections()
    if as_json:
        print_json([collection_fields(c) for c in collections])
        return
    snapshot = await bench.state.snapshot()
    rows = [
        (
            f"bench/{c['name']}",
            ", ".join(c["members"]),
            explorer_seats(c, snapshot.gateway),
            c["shape"] or "auto",
            c["reply"],
            c["description"],
        )
        for c in collections
    ]
    table(None, ["model", "members", "explorers", "shape", "reply", "description"], rows)


@app.command("show")
@with_bench
async def show(bench: Bench, name: str = typer.Argument(...)) -> None:
    """Show one collection as JSON."""
    from benchwarmers.bench.records import collection_fields

    print_json(collection_fields(await bench.collections.collection(name)))


@app.command("remove")
@with_bench
async def remove(bench: Bench, name: str = typer.Argument(...)) -> None:
    """Delete a collection (its recorded panels stay)."""
    await bench.collections.remove_collection(name)
    console.print(f"removed bench/{collection_name(name)}", markup=False)


@app.command("export")
@with_bench
async def export(bench: Bench, file: Path = typer.Argument(None, help="write here (default: stdout)")) -> None:
    """Export every collection as JSON (import reads the same file back)."""
    from benchwarmers.bench.records import collection_fields

    data = [collection_fields(c) for c in await bench.collections.list_collections()]
    text = orjson.dumps(data, option=orjson.OPT_INDENT_2).decode() + "\n"
    if file is None:
        console.file.write(text)
    else:
        file.write_text(text)
        console.print(f"exported {len(data)} collection(s) to {file}", markup=False)


@app.command("import")
@with_bench
async def import_(bench: Bench, file: Path = typer.Argument(..., help="a file written by `collection export`")) -> None:
    """Create or replace collections from an exported JSON file (all or nothing)."""
    try:
        data = orjson.loads(file.read_bytes())
    except orjson.JSONDecodeError as exc:
        raise fail(f"{file} is not JSON: {exc.msg}") from None
    if not isinstance(data, list) or not all(isinstance(item, dict) for item in data):
        raise fail(f"{file} must hold a JSON list of collections, as `collection export` writes")
    result = await bench.collections.import_collections(data)
    console.print(
        f"imported: {result['created']} created, {result['updated']} updated, {result['unchanged']} unchanged",
        markup=False,
    )
