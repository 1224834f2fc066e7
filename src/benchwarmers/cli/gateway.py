"""`benchwarmers gateway ...`: the gateway's limits and timeouts (kept in the database, logged)."""

from __future__ import annotations

import typer

from benchwarmers.bench.core import Bench
from benchwarmers.cli.common import console, print_json, table, with_bench

app = typer.Typer(help="Gateway settings: seat limits, timeouts, exploration share.", no_args_is_help=True)


@app.command("show")
@with_bench
async def show(bench: Bench, as_json: bool = typer.Option(False, "--json", help="print JSON")) -> None:
    """Show every gateway setting."""
    settings = (await bench.snapshot()).gateway
    if as_json:
        print_json(settings)
        return
    table(None, ["setting", "value"], sorted(settings.items()))


@app.command("set")
@with_bench
async def set_(
    bench: Bench,
    max_explorers: int = typer.Option(None, "--max-explorers", help="explorer seats at most (default 2)"),
    max_calls: int = typer.Option(None, "--max-calls", help="seats at most, members included (default 5)"),
    seat_timeout: float = typer.Option(None, "--seat-timeout", help="seconds a seat may take (default 120)"),
    decision_timeout: float = typer.Option(None, "--decision-timeout", help="seconds for a decision model (5)"),
    ping_interval: float = typer.Option(None, "--ping-interval", help="seconds between stream pings (5)"),
    replay_window: float = typer.Option(None, "--replay-window", help="seconds a replay gets the recorded panel"),
    endpoint_concurrency: int = typer.Option(None, "--endpoint-concurrency", help="calls in flight per endpoint"),
    epsilon: float = typer.Option(None, "--epsilon", help="share of explorer seats chosen by evidence (0.2)"),
    failing_after: int = typer.Option(None, "--failing-after", help="failures in a row before an alert (5)"),
    retention_days: int = typer.Option(None, "--retention-days", help="purge prompts older than N days (0: keep)"),
) -> None:
    """Change gateway settings (only the options given change)."""
    after = await bench.admin.set_gateway(
        max_explorers=max_explorers,
        max_calls=max_calls,
        seat_timeout=seat_timeout,
        decision_timeout=decision_timeout,
        ping_interval=ping_interval,
        replay_window=replay_window,
        endpoint_concurrency=endpoint_concurrency,
        epsilon=epsilon,
        failing_after=failing_after,
        retention_days=retention_days,
    )
    console.print(", ".join(f"{k} {v}" for k, v in sorted(after.items())), markup=False)
