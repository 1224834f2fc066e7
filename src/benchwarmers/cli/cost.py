"""`benchwarmers cost`: the tokens the bench used and what they would have cost at list prices."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import typer

from benchwarmers.bench.bounds import DEFAULT_DAYS, GROUPINGS, MAX_DAYS
from benchwarmers.cli.common import Grouped, console, print_json, table, with_bench

if TYPE_CHECKING:
    from benchwarmers.bench.services import Bench


def _tokens(entry: dict[str, Any]) -> tuple[Grouped, Grouped]:
    return Grouped(entry["prompt_tokens"]), Grouped(entry["completion_tokens"])


@with_bench
async def cost(
    bench: Bench,
    days: int = typer.Option(DEFAULT_DAYS, "--days", min=1, max=MAX_DAYS, help="today and the N-1 days before it"),
    by: str = typer.Option("model", "--by", help=f"group by {' | '.join(GROUPINGS)} (key: the caller)"),
    as_json: bool = typer.Option(False, "--json", help="print JSON"),
) -> None:
    """Tokens used and what they would have cost at list prices (the maker's own price, else the
    endpoint's), per model, collection or key and per day; unknown prices are counted apart."""
    from benchwarmers.bench.evidence.cost import cost_report, per_million, price_source, usd

    report = await cost_report(bench.state, days=days, by=by)
    if as_json:
        print_json(report)
        return
    total = report["total"]
    console.print(
        f"since {report['since_day']} ({days} day{'s' if days != 1 else ''}): {total['calls']:,} calls, "
        f"{total['prompt_tokens']:,} tokens in, {total['completion_tokens']:,} out",
        markup=False,
    )
    if not total["calls"]:
        return
    console.print(
        f"at list prices: {usd(total['cost_usd'])}, of which on free models: {usd(total['free_usd'])}", markup=False
    )
    if total["unpriced_tokens"]:
        console.print(
            f"not priced: {total['unpriced_tokens']:,} tokens of models with no known list price "
            f"({', '.join(report['unpriced_models'])})",
            markup=False,
        )
    if total["unreported_calls"]:
        console.print(f"not counted: {total['unreported_calls']:,} answers that reported no usage", markup=False)
    rows: list[tuple[Any, ...]]
    if by == "model":
        rows = [
            (g["name"], g["calls"], *_tokens(g), usd(g["cost_usd"]) if g["price"]["source"] != "unknown" else "?",
             per_million(g["price"]), price_source(g["price"]))
            for g in report["groups"]
        ]  # fmt: skip
        table(None, ["model", "calls", "tokens in", "tokens out", "list cost", "$ per M in / out", "price"], rows)
    else:
        rows = [
            (g["name"], g["calls"], *_tokens(g), usd(g["cost_usd"]), usd(g["free_usd"]), Grouped(g["unpriced_tokens"]))
            for g in report["groups"]
        ]
        table(None, [by, "calls", "tokens in", "tokens out", "list cost", "on free", "not priced"], rows)
    days_rows = [
        (d["day"], d["calls"], *_tokens(d), usd(d["cost_usd"]), usd(d["free_usd"]), Grouped(d["unpriced_tokens"]))
        for d in report["per_day"]
    ]
    table(None, ["day", "calls", "tokens in", "tokens out", "list cost", "on free", "not priced"], days_rows)
