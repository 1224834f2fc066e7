"""`benchwarmers gateway ...`: the gateway's limits and timeouts (kept in the database, logged).

`gateway set` has one option per field of the settings model, its help written from the field's
description and range, so a new setting is on the command line as soon as it is in the model.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import typer

from benchwarmers.bench import gateway_config
from benchwarmers.bench.gateway_config import FIELDS, GATEWAY_DEFAULTS
from benchwarmers.bench.services import Bench
from benchwarmers.cli.common import console, print_json, table, with_bench

app = typer.Typer(help="Gateway settings: seat limits, timeouts, exploration share.", no_args_is_help=True)


def option_help(name: str) -> str:
    default = gateway_config.number(GATEWAY_DEFAULTS[name])
    return f"{gateway_config.description(name)} [{gateway_config.range_text(name, short=True)}; default {default}]"


def _setting_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """Give `func(bench, **values)` a signature with one `--kebab-name` option per setting."""
    options = [
        inspect.Parameter(
            name,
            inspect.Parameter.KEYWORD_ONLY,
            default=typer.Option(None, f"--{name.replace('_', '-')}", help=option_help(name), show_default=False),
            annotation=(int if gateway_config.whole(name) else float) | None,
        )
        for name in FIELDS
    ]
    bench = next(iter(inspect.signature(func).parameters.values()))
    func.__signature__ = inspect.Signature([bench, *options])  # type: ignore[attr-defined]
    return func


@app.command("show")
@with_bench
async def show(bench: Bench, as_json: bool = typer.Option(False, "--json", help="print JSON")) -> None:
    """Show every gateway setting: its value, default, range and meaning."""
    settings = (await bench.state.snapshot()).gateway
    if as_json:
        print_json(settings)
        return
    rows = [
        (
            name,
            gateway_config.number(settings[name]),
            gateway_config.number(GATEWAY_DEFAULTS[name]),
            gateway_config.range_text(name, short=True),
            gateway_config.description(name),
        )
        for name in FIELDS
    ]
    table(None, ["setting", "value", "default", "range", "what it does"], rows)


@app.command("set")
@with_bench
@_setting_options
async def set_(bench: Bench, **values: Any) -> None:
    """Change gateway settings (only the options given change; a value out of range changes nothing)."""
    after = await bench.gateway_settings.set_gateway(**values)
    console.print(", ".join(f"{k} {gateway_config.number(after[k])}" for k in FIELDS), markup=False)
