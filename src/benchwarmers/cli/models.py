"""`benchwarmers model ...`: the roster and the user's overrides."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import orjson
import typer

from benchwarmers.bench.bounds import DEFAULT_LIMIT, MAX_LIMIT
from benchwarmers.cli.common import (
    LIMIT,
    RPD,
    RPM,
    TPM,
    Grouped,
    console,
    describe_limits,
    print_json,
    rate_windows,
    table,
    with_bench,
)

if TYPE_CHECKING:
    from benchwarmers.bench.services import Bench

app = typer.Typer(help="Models on the roster: what the bench knows of each, and your overrides.", no_args_is_help=True)


def _window(value: int | None) -> Grouped | str:
    return Grouped(value) if value else "?"


def _yes(value: bool | None) -> str:
    return "?" if value is None else ("yes" if value else "no")


def _clock(at: float) -> str:
    """Local time; with the date when it is not today."""
    same_day = time.localtime(at)[:3] == time.localtime()[:3]
    return time.strftime("%H:%M:%S" if same_day else "%Y-%m-%d %H:%M", time.localtime(at))


def _status(model: dict[str, Any]) -> str:
    """The status, with the time a cooldown ends or a retired model is probed next."""
    if model["status"] == "cooldown" and model.get("cooldown_until"):
        return f"cooldown until {_clock(model['cooldown_until'])}"
    if model["status"] == "retired" and model.get("next_probe_at"):
        return f"retired, next probe {_clock(model['next_probe_at'])}"
    return str(model["status"])


@app.command("list")
@with_bench
async def list_(bench: Bench, as_json: bool = typer.Option(False, "--json", help="print JSON")) -> None:
    """List every model with its window, images, free, family and status."""
    models = await bench.models.list_models()
    if as_json:
        print_json(models)
        return
    rows = [
        (
            m["alias"],
            _window(m["context_window"]),
            _yes(m["vision"]),
            _yes(m["free"]),
            m["family"] or "?",
            _status(m),
        )
        for m in models
    ]
    table(None, ["alias", "window", "images", "free", "family", "status"], rows)


@app.command("show")
@with_bench
async def show(
    bench: Bench,
    alias: str = typer.Argument(...),
    as_json: bool = typer.Option(False, "--json", help="print JSON"),
) -> None:
    """Every fact about one model, with its source and when it was learned."""
    model = await bench.models.model(alias)
    if as_json:
        print_json(model)
        return
    console.print(f"{model['alias']}  ({_status(model)})", markup=False)
    for line in free_tier_lines(model):
        console.print(line, markup=False)
    rows = []
    for fact in model["sources"]:
        in_use = model["facts"].get(fact["fact"], {}).get("source") == fact["source"]
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(fact["learned_at"]))
        value = orjson.dumps(fact["value"]).decode() if isinstance(fact["value"], dict) else fact["value"]
        rows.append((fact["fact"], value, fact["source"] + (" (in use)" if in_use else ""), when))
    table(None, ["fact", "value", "source", "learned"], rows)
    for allowance in model["allowances"]:
        console.print(f"allowance ({allowance['scope']}): {allowance['text']}", markup=False)


def free_tier_lines(model: dict[str, Any]) -> list[str]:
    """Its free tier (limits, data use) with where and when that was read, and its tags."""
    lines = []
    tier = model.get("free_tier")
    if tier:
        lines.append(f"{tier['summary']}")
        lines.append(f"  source: {tier['source']} (checked {tier['checked']})")
        if tier.get("data_use_source") and tier["data_use_source"] != tier["source"]:
            lines.append(f"  data use: {tier['data_use_source']}")
        if tier.get("note"):
            lines.append(f"  note: {tier['note']}")
    if model.get("tags"):
        lines.append(f"tags: {', '.join(model['tags'])}")
    return lines


@app.command("set")
@with_bench
async def set_(
    bench: Bench,
    alias: str = typer.Argument(...),
    context: int = typer.Option(None, "--context", help="context window override, in tokens"),
    output: int = typer.Option(None, "--output", help="output cap override, in tokens"),
    vision: bool = typer.Option(None, "--vision/--no-vision", help="takes images (Vision / OCR)"),
    family: str = typer.Option(None, "--family", help="model family (explorers never share a member's)"),
    free: bool = typer.Option(None, "--free/--no-free", help="calls cost nothing"),
    enabled: bool = typer.Option(None, "--enable/--disable", help="may sit explorer seats"),
    concurrency: int = typer.Option(
        None, "--concurrency", help="calls at once through the llm client (a local plugin model: 1 unless set)"
    ),
    rpm: int = RPM,
    tpm: int = TPM,
    rpd: int = RPD,
    limit: list[str] = LIMIT,
) -> None:
    """Override what the catalog says of a model (recorded in the changes log). Rate limits replace
    the same windows its provider announced; calls to it are paced under them."""
    windows = rate_windows(rpm, tpm, rpd, limit)
    model = await bench.models.set_model(
        alias,
        context=context,
        output=output,
        vision=vision,
        family=family,
        free=free,
        enabled=enabled,
        concurrency=concurrency,
        limits=windows or None,
    )
    console.print(
        f"{model['alias']}: window {_window(model['context_window'])}, output {_window(model['output_cap'])}, "
        f"images {_yes(model['vision'])}, free {_yes(model['free'])}, family {model['family'] or '?'}, "
        f"{'enabled' if model['enabled'] else 'disabled'}"
        + (f", paced by: {describe_limits(model['limits'])}" if model["limits"] else ""),
        markup=False,
    )


@app.command("alias")
@with_bench
async def alias_(
    bench: Bench,
    alias: str = typer.Argument(..., help="the model's alias now"),
    new: str = typer.Argument(..., help="its new alias"),
) -> None:
    """Rename a model: collections, roles, decision models, its seats and verdicts, alerts follow."""
    result = await bench.models.rename(alias, new)
    if not result["changed"]:
        console.print(f"{alias} is already called {new}; nothing changed", markup=False)
        return
    console.print(f"renamed {alias} to {new}; {moved_line(result)}", markup=False)


def moved_line(moved: dict[str, Any]) -> str:
    """What followed a rename, in one line."""
    collections = moved["collections"]
    parts = [
        f"{len(collections)} collection(s)" + (f" ({', '.join(collections)})" if collections else ""),
        f"{moved['roles']} role(s)",
        f"{moved['decision_models']} decision model(s)",
        f"{moved['seats']} seat(s)",
        f"{moved['alerts']} alert(s)",
    ]
    return "moved with it: " + ", ".join(parts)


@app.command("restore")
@with_bench
async def restore(bench: Bench, alias: str = typer.Argument(...)) -> None:
    """Bring back a model retired for failing: asked again now, its failing alert resolved."""
    before = (await bench.models.model(alias))["status"]
    model = await bench.models.restore(alias)
    if before != "retired":
        console.print(f"{alias} is not retired ({_status(model)}); nothing changed", markup=False)
        return
    console.print(f"{alias} restored: members ask it again and it may sit explorer seats", markup=False)


@app.command("wrong")
@with_bench
async def wrong(
    bench: Bench,
    alias: str = typer.Argument(...),
    limit: int = typer.Option(DEFAULT_LIMIT, "--limit", min=1, max=MAX_LIMIT, help="claims at most"),
    as_json: bool = typer.Option(False, "--json", help="print JSON"),
) -> None:
    """The claims verdicts marked false in a model's answers, newest first, with the call of each."""
    from benchwarmers.bench.evidence.wrong import wrong_claims

    claims = await wrong_claims(bench.state, alias, limit)
    if as_json:
        print_json(claims)
        return
    if not claims:
        console.print(f"no verdict has marked a claim of {alias} false", markup=False)
        return
    rows = [(_clock(c["at"]), c["claim"], c["call"], c["shape"], c["judge"]) for c in claims]
    table(f"{alias}: claims marked false", ["judged", "claim", "call", "shape", "judge"], rows)
