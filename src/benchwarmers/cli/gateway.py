"""`benchwarmers gateway ...`: the gateway's limits and timeouts (kept in the database, logged).

`gateway set` has one option per field of the settings model, its help written from the field's
description and range, so a new setting is on the command line as soon as it is in the model.
The model is pydantic's, slow to import and to read: `set` joins the group only when `gateway ...`
itself runs, never for `benchwarmers --help` or any other command.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import typer
from typer.core import TyperGroup

from benchwarmers.cli.common import console, print_json, table, with_bench

if TYPE_CHECKING:
    from benchwarmers.bench.services import Bench


class _GatewayGroup(TyperGroup):
    """The group, with `set` added (and its options built) the first time a subcommand is looked up."""

    def _with_set(self) -> None:
        if "set" not in self.commands:
            one = typer.Typer(add_completion=False)
            one.command("set")(with_bench(_setting_options(set_)))
            self.add_command(typer.main.get_command(one), "set")

    def list_commands(self, ctx: Any) -> list[str]:
        self._with_set()
        return super().list_commands(ctx)

    def get_command(self, ctx: Any, cmd_name: str) -> Any:  # typer's click types are private
        self._with_set()
        return super().get_command(ctx, cmd_name)


app = typer.Typer(
    cls=_GatewayGroup, help="Gateway settings: seat limits, timeouts, exploration share.", no_args_is_help=True
)


def option_help(name: str) -> str:
    from benchwarmers.nouns import gateway as gateway_config

    default = gateway_config.number(gateway_config.GATEWAY_DEFAULTS[name])
    return f"{gateway_config.description(name)} [{gateway_config.range_text(name, short=True)}; default {default}]"


def _setting_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """Give `func(bench, **values)` a signature with one `--kebab-name` option per setting."""
    from benchwarmers.nouns import gateway as gateway_config

    options = [
        inspect.Parameter(
            name,
            inspect.Parameter.KEYWORD_ONLY,
            default=typer.Option(None, f"--{name.replace('_', '-')}", help=option_help(name), show_default=False),
            annotation=(int if gateway_config.whole(name) else float) | None,
        )
        for name in gateway_config.FIELDS
    ]
    bench = next(iter(inspect.signature(func).parameters.values()))
    func.__signature__ = inspect.Signature([bench, *options])  # type: ignore[attr-defined]
    return func


@app.command("show")
@with_bench
async def show(bench: Bench, as_json: bool = typer.Option(False, "--json", help="print JSON")) -> None:
    """Show every gateway setting: its value, default, range and meaning."""
    from benchwarmers.nouns import gateway as gateway_config

    settings = (await bench.state.snapshot()).gateway.model_dump()
    if as_json:
        print_json(settings)
        return
    rows = [
        (
            name,
            gateway_config.number(settings[name]),
            gateway_config.number(gateway_config.GATEWAY_DEFAULTS[name]),
            gateway_config.range_text(name, short=True),
            gateway_config.description(name),
        )
        for name in gateway_config.FIELDS
    ]
    table(None, ["setting", "value", "default", "range", "what it does"], rows)


async def set_(bench: Bench, **values: Any) -> None:
    """Change gateway settings (only the options given change; a value out of range changes nothing)."""
    from benchwarmers.nouns import gateway as gateway_config

    after = await bench.gateway_settings.set_gateway(**values)
    console.print(", ".join(f"{k} {gateway_config.number(after[k])}" for k in gateway_config.FIELDS), markup=False)
