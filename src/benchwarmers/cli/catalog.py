"""`benchwarmers catalog refresh`, `benchwarmers alerts`, `benchwarmers discover`: keeping what the
bench knows of each model true, and finding models worth adding."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import typer

from benchwarmers.catalog.modelsdev import MODELS_DEV_URL
from benchwarmers.cli.common import Grouped, console, hint, print_json, progress_bar, table, with_bench

if TYPE_CHECKING:
    from benchwarmers.bench.services import Bench

app = typer.Typer(
    help="The catalog: what the bench knows of each model, and where it learned it.", no_args_is_help=True
)
discover_app = typer.Typer(
    help="Models from models.dev worth adding, free first, marked reachable / on bench / also on bench.",
    invoke_without_command=True,
)


def _when(at: float | None) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(at)) if at else ""


def _window(value: int | None) -> Grouped | str:
    return Grouped(value) if value else "?"


# -- catalog refresh ------------------------------------------------------------------------------


@app.command("refresh")
@with_bench
async def refresh(
    bench: Bench,
    endpoint: list[str] = typer.Option(None, "--endpoint", "-e", help="only this endpoint (repeatable)"),
    models_dev_url: str = typer.Option(MODELS_DEV_URL, "--models-dev-url", help="where to fetch models.dev from"),
    no_models_dev: bool = typer.Option(
        False, "--no-models-dev", help="do not fetch models.dev; use the cached or bundled copy"
    ),
) -> None:
    """Refresh models.dev, the providers' free tiers and every enabled endpoint's listing (a failed source
    keeps its last good facts)."""
    from benchwarmers.bench.admin.refresh import FREE_TIERS_SOURCE, SourceResult, refresh_all

    names = endpoint or [e["name"] for e in await bench.endpoints.list_endpoints() if e["enabled"]]
    failed = 0
    with progress_bar() as progress:
        task = progress.add_task("refreshing", total=1 + len(names))

        def step(source: str, result: SourceResult | None) -> None:
            nonlocal failed
            if result is None:
                progress.update(task, description=f"refreshing {source}")
                return
            progress.advance(task)
            if result.ok:
                console.print(f"{source}: {result.detail}", markup=False)
            else:
                if source not in ("models.dev", FREE_TIERS_SOURCE):  # those fall back to a copy; an endpoint has none
                    failed += 1
                console.print(f"{source}: failed: {result.detail}", markup=False)

        await refresh_all(
            bench.state, models_dev_url=None if no_models_dev else models_dev_url, only=names, progress=step
        )
    if failed:
        raise typer.Exit(1)


# -- alerts --------------------------------------------------------------------------------------


@with_bench
async def alerts(
    bench: Bench,
    ack: int = typer.Option(None, "--ack", help="acknowledge this alert"),
    show_all: bool = typer.Option(False, "--all", help="acknowledged ones too"),
    as_json: bool = typer.Option(False, "--json", help="print JSON"),
) -> None:
    """Alerts: models that went paid, are retiring or were retired for failing; verdicts owed (`--ack ID`
    to acknowledge one)."""
    from benchwarmers.bench.admin import alerts as bench_alerts

    if ack is not None:
        alert = await bench_alerts.acknowledge(bench.state, ack)
        if as_json:
            print_json(alert)
            return
        console.print(f"acknowledged alert {alert['id']} ({alert['label']}: {alert['subject']})", markup=False)
        if alert["kind"] == "went_paid":
            console.print(
                f"{alert['subject']} may sit explorer seats again while it is free "
                f"(`benchwarmers model set {alert['subject']} --free` if you accept its price)",
                markup=False,
            )
        return
    found = await bench_alerts.list_alerts(bench.state, include_acknowledged=show_all)
    if as_json:
        print_json(found)
        return
    if not found:
        console.print("no open alerts" if not show_all else "no alerts", markup=False)
        return
    rows = [
        (a["id"], a["label"], a["subject"], _when(a["created_at"]), _state(a), a["message"])
        for a in found
    ]  # fmt: skip
    table(None, ["id", "kind", "subject", "raised", "state", "message"], rows)


def _state(alert: dict[str, Any]) -> str:
    if alert["resolved_at"]:
        return f"resolved {_when(alert['resolved_at'])}"
    if alert["acknowledged_at"]:
        return f"acknowledged {_when(alert['acknowledged_at'])}"
    return "open"


# -- discover ------------------------------------------------------------------------------------


def _marks(found: dict[str, Any]) -> str:
    parts = []
    if found["on_bench"]:
        parts.append(f"on bench: {found['on_bench']}")
    elif found["reachable"] and found["verified"]:
        parts.append(f"reachable via {found['reachable']}")
    elif found["reachable"]:
        parts.append(f"served by {found['reachable']}? (listing not read: refresh it)")
    elif found["unlisted"]:
        parts.append(f"not in {found['unlisted']}'s listing")
    if found["also_on_bench"]:
        parts.append(f"also on bench: {', '.join(found['also_on_bench'])}")
    return "; ".join(parts)


def _tier(found: dict[str, Any]) -> str:
    """Its provider's free tier, with the source and the date it was checked."""
    tier = found.get("free_tier")
    return f"{tier['summary']} ({tier['source']}, checked {tier['checked']})" if tier else ""


@with_bench
async def _discover_list(bench: Bench, **options: Any) -> None:
    from benchwarmers.bench.upkeep import discover as bench_discover

    as_json = options.pop("as_json")
    found = await bench_discover.discover(bench.state, **options)
    if as_json:
        print_json(found)
        return
    rows = [
        (f["id"], _window(f["context_window"]), "yes" if f["vision"] else "no", "yes" if f["free"] else "no",
         f["family"] or "?", _marks(f), _tier(f))
        for f in found
    ]  # fmt: skip
    table(None, ["model", "window", "images", "free", "family", "marks", "free tier"], rows)
    if found:
        hint("add one: benchwarmers discover add PROVIDER/MODEL")


@discover_app.callback()
def discover(
    ctx: typer.Context,
    free: bool = typer.Option(False, "--free", help="free models only"),
    vision: bool = typer.Option(False, "--vision", help="models that take images only"),
    min_context: int = typer.Option(None, "--min-context", help="context window of at least N tokens"),
    provider: str = typer.Option(None, "--provider", help="one models.dev provider, e.g. openrouter"),
    limit: int = typer.Option(50, "--limit", help="show at most N (0 = all)"),
    as_json: bool = typer.Option(False, "--json", help="print JSON"),
) -> None:
    """List models worth adding (free first) with `discover`; put one on the bench with `discover add`."""
    if ctx.invoked_subcommand is not None:
        return
    _discover_list(free=free, vision=vision, min_context=min_context, provider=provider, limit=limit, as_json=as_json)


@discover_app.command("add")
@with_bench
async def discover_add(
    bench: Bench,
    target: str = typer.Argument(..., metavar="PROVIDER/MODEL", help="e.g. openrouter/qwen/qwen3-coder:free"),
) -> None:
    """Put a models.dev model on the roster through the endpoint that reaches its provider."""
    from benchwarmers.bench.upkeep import discover as bench_discover

    model = await bench_discover.add(bench.state, target)
    console.print(
        f"added {model['alias']} (window {_window(model['context_window'])}, images "
        f"{'yes' if model['vision'] else 'no' if model['vision'] is False else '?'}, free "
        f"{'yes' if model['free'] else 'no' if model['free'] is False else '?'}, family {model['family'] or '?'})",
        markup=False,
    )
    check = model.get("check")
    if check:
        images = f"; images: {check['vision']}" if check["vision"] else ""
        console.print(f"check: {check['status']}: {check['text']}{images}", markup=False)
        for learned in check["learned"]:
            console.print(f"recorded: {learned}", markup=False)
        if check["fix"]:
            console.print(f"what to do: {check['fix']}", markup=False)
    console.print(f"next: benchwarmers collection add NAME --member {model['alias']} ...", markup=False)
