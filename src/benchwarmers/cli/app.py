"""The `benchwarmers` command."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from typing import Any

import typer
from typer.core import TyperGroup, TyperOption

from benchwarmers import __version__
from benchwarmers.cli import (
    ask,
    backup,
    catalog,
    check,
    collection,
    cost,
    endpoints,
    evidence,
    gateway,
    keys,
    log,
    mcp,
    models,
    notify,
    purge,
    serve,
    shapes,
    suite,
    upkeep,
    verdicts,
)
from benchwarmers.cli import init as init_cmd


@contextlib.contextmanager
def _closed_pipe_ends_quietly() -> Iterator[None]:
    try:
        try:
            yield
        finally:
            sys.stdout.flush()  # output still buffered fails here, where it is caught, not at exit
    except BrokenPipeError:
        # `benchwarmers export calls | head`: the reader has gone, so stop quietly as a shell tool
        # stopped by SIGPIPE does, status 141 (128 + 13). stdout goes to devnull so that nothing
        # left in its buffer fails again on the way out (Python's own recipe for EPIPE).
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        raise typer.Exit(141) from None


def _plain_metavars(command: Any, ctx: Any) -> None:
    """Typer shows a flag's type as `<bool>` and a repeated option's as `<list[str]>`: a flag takes
    no value, and a repeated option one value each time (`--member ALIAS --member ALIAS`)."""
    help_option = command.get_help_option(ctx)
    for param in [*command.params, *([help_option] if help_option else [])]:
        if not isinstance(param, TyperOption) or param.metavar is not None:
            continue
        if param.is_flag:
            param.metavar = ""
        elif param.multiple:
            param.metavar = f"<{param.bare_type().removeprefix('list[').removesuffix(']')}>"
    for sub in getattr(command, "commands", {}).values():
        _plain_metavars(sub, ctx)


class Commands(TyperGroup):
    """The root command: help shows plain metavars, and a closed pipe is handled here, once for every command."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        _plain_metavars(self, ctx)  # before any help is shown: this parse may show the root's
        return super().parse_args(ctx, args)

    def invoke(self, ctx: Any) -> Any:  # typer.Context, as typer's own click types it
        with _closed_pipe_ends_quietly():
            return super().invoke(ctx)


app = typer.Typer(
    cls=Commands,
    help="Benchwarmers: one prompt to a bench of models, every answer labelled, verdicts that learn.",
    no_args_is_help=True,
    add_completion=True,
    pretty_exceptions_enable=False,
)
app.command("serve")(serve.serve)
app.command("dashboard-url")(serve.dashboard_url)
app.command("ask")(ask.ask)
app.command("log")(log.log)
app.command("verdict")(verdicts.verdict)
app.command("export")(verdicts.export)
app.command("purge")(purge.purge)
app.command("upkeep")(upkeep.upkeep)
app.command("backup")(backup.backup)
app.command("restore")(backup.restore)
app.command("import")(backup.import_)
app.command("leaderboard")(evidence.leaderboard)
app.command("report")(evidence.report)
app.command("advise")(evidence.advise)
app.command("cost")(cost.cost)
app.command("check")(check.check)
app.add_typer(evidence.roles, name="role")
app.command("mcp")(mcp.mcp)
app.add_typer(endpoints.app, name="endpoint")
app.add_typer(models.app, name="model")
app.add_typer(collection.app, name="collection")
app.add_typer(keys.app, name="key")
app.add_typer(notify.app, name="notify")
app.add_typer(gateway.app, name="gateway")
app.add_typer(shapes.shapes_app, name="shape")
app.add_typer(shapes.decision_app, name="decision")
app.add_typer(catalog.app, name="catalog")
app.add_typer(suite.app, name="suite")
app.command("alerts")(catalog.alerts)
app.add_typer(catalog.discover_app, name="discover")
app.command("init")(init_cmd.init)


def _show_version(given: bool) -> None:
    if given:
        typer.echo(__version__)
        raise typer.Exit()


@app.callback()
def root(
    version: bool = typer.Option(
        False, "--version", help="Print the version and exit.", callback=_show_version, is_eager=True
    ),
) -> None:
    """Benchwarmers: one prompt to a bench of models, every answer labelled, verdicts that learn.

    Shell completion: `benchwarmers --install-completion` (bash, zsh, fish, PowerShell)."""


@app.command("version")
def version() -> None:
    """Print the version."""
    typer.echo(__version__)


def main() -> None:
    app()
