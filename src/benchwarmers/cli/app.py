"""The `benchwarmers` command."""

from __future__ import annotations

import typer

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
    purge,
    serve,
    shapes,
    suite,
    suite_seed,
    verdicts,
)
from benchwarmers.cli import init as init_cmd

app = typer.Typer(
    help="Benchwarmers: one prompt to a bench of models, every answer labelled, verdicts that learn.",
    no_args_is_help=True,
    add_completion=True,
    pretty_exceptions_enable=False,
)
app.command("serve")(serve.serve)
app.command("ask")(ask.ask)
app.command("log")(log.log)
app.command("verdict")(verdicts.verdict)
app.command("export")(verdicts.export)
app.command("purge")(purge.purge)
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
app.add_typer(gateway.app, name="gateway")
app.add_typer(shapes.shapes_app, name="shape")
app.add_typer(shapes.decision_app, name="decision")
app.add_typer(catalog.app, name="catalog")
suite.app.command("seed")(suite_seed.seed)  # the lead folds this into cli/suite.py
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
