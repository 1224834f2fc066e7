"""`benchwarmers endpoint ...`: the providers the bench may call."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from benchwarmers.bench.bounds import KINDS
from benchwarmers.bench.presets import PRESETS, endpoint_options
from benchwarmers.cli.common import (
    LIMIT,
    RPD,
    RPM,
    TPM,
    console,
    describe_limits,
    fail,
    print_json,
    progress_bar,
    rate_windows,
    table,
    with_bench,
)
from benchwarmers.cli.models import moved_line
from benchwarmers.errors import InvalidRequest, UpstreamRefused

if TYPE_CHECKING:
    from benchwarmers.bench.services import Bench

app = typer.Typer(help="Endpoints: the providers (base URL, kind, key) the bench may call.", no_args_is_help=True)


@app.command("add")
@with_bench
async def add(
    bench: Bench,
    name: str = typer.Argument(..., help="a short name; models become <name>/<model id>"),
    base_url: str = typer.Option(
        None,
        "--base-url",
        help="OpenAI-compatible base URL, e.g. https://api.groq.com/openai/v1 (with --kind anthropic, the "
        "Anthropic SDK's, e.g. https://api.anthropic.com)",
    ),
    kind: str = typer.Option(None, "--kind", help=f"wire and listing format: {', '.join(KINDS)} (default openai)"),
    api_key_env: str = typer.Option(None, "--api-key-env", help="environment variable holding the API key"),
    api_key: str = typer.Option(None, "--api-key", help="API key to store encrypted (prefer --api-key-env)"),
    free_tier: bool = typer.Option(None, "--free-tier/--no-free-tier", help="calls through it cost nothing"),
    preset: str = typer.Option(None, "--preset", help=f"fill URL, kind and key variable: {', '.join(PRESETS)}"),
) -> None:
    """Register a provider endpoint."""
    if preset:
        given = {"base_url": base_url, "kind": kind, "api_key_env": api_key_env, "api_key": api_key}
        options = endpoint_options(preset, **given, free_tier=free_tier)
        base_url, kind, api_key_env, free_tier = (options[k] for k in ("base_url", "kind", "api_key_env", "free_tier"))
    elif not base_url:
        raise InvalidRequest(f"give --base-url, or --preset with one of: {', '.join(PRESETS)}", param="base_url")
    kind = kind or "openai"
    endpoint = await bench.endpoints.add_endpoint(
        name, base_url, kind, api_key_env=api_key_env, api_key=api_key, free_tier=bool(free_tier)
    )
    key = endpoint["api_key"] or (f"${endpoint['api_key_env']}" if endpoint["api_key_env"] else "no key")
    console.print(f"added endpoint {name} ({kind}, {endpoint['base_url']}, key: {key})", markup=False)
    console.print(f"next: benchwarmers endpoint refresh {name}", markup=False)


@app.command("list")
@with_bench
async def list_(bench: Bench, as_json: bool = typer.Option(False, "--json", help="print JSON")) -> None:
    """List endpoints (stored keys show only their last four characters)."""
    endpoints = await bench.endpoints.list_endpoints()
    if as_json:
        print_json(endpoints)
        return
    rows = [
        (
            e["name"],
            e["kind"],
            e["base_url"],
            e["api_key"] or (f"${e['api_key_env']}" if e["api_key_env"] else "-"),
            "yes" if e["free_tier"] else "no",
            e["refresh_error"] or ("ok" if e["refreshed_at"] else "never refreshed"),
        )
        for e in endpoints
    ]
    table(None, ["name", "kind", "base URL", "key", "free tier", "last refresh"], rows)


@app.command("refresh")
@with_bench
async def refresh(bench: Bench, name: str = typer.Argument(None, help="one endpoint (default: all)")) -> None:
    """Read each endpoint's model listing and record what it says."""
    names = [name] if name else [e["name"] for e in await bench.endpoints.list_endpoints()]
    failed = 0
    with progress_bar() as progress:
        task = progress.add_task("refreshing", total=len(names))
        for each in names:
            progress.update(task, description=f"refreshing {each}")
            try:
                summary = await bench.endpoints.refresh_endpoint(each)
            except UpstreamRefused as exc:
                if name:
                    raise
                failed += 1
                console.print(exc.message, markup=False)
            else:
                console.print(
                    f"{each}: {summary['listed']} models listed, {summary['added']} new, {summary['gone']} gone",
                    markup=False,
                )
            progress.advance(task)
    if failed:
        raise typer.Exit(1)


@app.command("rename")
@with_bench
async def rename(
    bench: Bench,
    old: str = typer.Argument(..., help="the endpoint's name now"),
    new: str = typer.Argument(..., help="its new name"),
) -> None:
    """Rename an endpoint, and every alias under its prefix (OLD/... becomes NEW/...)."""
    result = await bench.endpoints.rename_endpoint(old, new)
    if not result["changed"]:
        console.print(f"endpoint {old} is already called {new}; nothing changed", markup=False)
        return
    console.print(
        f"renamed endpoint {old} to {new} and {len(result['aliases'])} alias(es) under {old}/; "
        + moved_line(result).replace("moved with it", "moved with them"),
        markup=False,
    )


@app.command("limits")
@with_bench
async def limits(
    bench: Bench,
    name: str = typer.Argument(...),
    rpm: int = RPM,
    tpm: int = TPM,
    rpd: int = RPD,
    limit: list[str] = LIMIT,
) -> None:
    """Set the endpoint's own rate limits, shared by all its models (a provider's per-key limits)."""
    windows = rate_windows(rpm, tpm, rpd, limit)
    if not windows:
        raise fail("give --rpm, --tpm, --rpd or --limit WINDOW=N")
    endpoint = await bench.endpoints.set_limits(name, windows)
    console.print(f"{name}: paced by {describe_limits(endpoint['limits'])} (all its models together)", markup=False)


@app.command("remove")
@with_bench
async def remove(
    bench: Bench,
    name: str = typer.Argument(...),
    force: bool = typer.Option(False, "--force", help="even while collections seat its models"),
) -> None:
    """Remove an endpoint and its models from the roster (recorded panels keep their text). Refused
    while a collection seats one of its models, unless --force."""
    await bench.endpoints.remove_endpoint(name, force=force)
    console.print(f"removed endpoint {name}", markup=False)
