"""The value of free: the tokens the bench's calls used, and what they would have cost at list prices.

Every call counts — seats, mergers and decision calls — with the usage its provider reported. Its
list price is the model's (see `catalog/prices.py`: the maker's own price, else the serving
endpoint's, else unknown); tokens at an unknown price are counted apart and never priced. `free_usd`
is the part of the cost run on models the bench counts as free today: what running on free saved.

Days are the server's local calendar days: `days=7` is today and the six days before it.
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from benchwarmers.bench.bounds import DEFAULT_DAYS, GROUPINGS, MAX_DAYS
from benchwarmers.bench.providers import catalog_of, endpoint_provider
from benchwarmers.catalog.families import family_of
from benchwarmers.catalog.modelsdev import ModelsDev
from benchwarmers.catalog.prices import ListPrice, list_price
from benchwarmers.errors import InvalidRequest
from benchwarmers.store import usage as usage_rows

if TYPE_CHECKING:
    from benchwarmers.bench.snapshot import Snapshot
    from benchwarmers.bench.state import BenchState


def day_of(ts: float) -> str:
    return time.strftime("%Y-%m-%d", time.localtime(ts))


def since_midnight(days: int, now: float | None = None) -> float:
    """The start (local midnight) of the first of the last `days` calendar days, today included."""
    today = dt.datetime.fromtimestamp(time.time() if now is None else now).date()
    first = today - dt.timedelta(days=days - 1)
    return dt.datetime.combine(first, dt.time.min).timestamp()


def tokens_of(usage: Any) -> tuple[int, int] | None:
    """(prompt, completion) tokens from a reported usage; None when it reports neither."""
    if not isinstance(usage, Mapping):
        return None

    def count(*keys: str) -> int | None:
        for key in keys:
            value = usage.get(key)
            if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
                return value
        return None

    prompt, completion = count("prompt_tokens", "input_tokens"), count("completion_tokens", "output_tokens")
    if prompt is None and completion is None:
        return None
    return prompt or 0, completion or 0


@dataclass
class Tally:
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: Decimal = Decimal(0)
    free_cost: Decimal = Decimal(0)
    unpriced_tokens: int = 0
    unreported_calls: int = 0  # answered, but the provider reported no usage

    def add(self, row: Mapping[str, Any], price: ListPrice, free: bool) -> None:
        self.calls += 1
        counted = tokens_of(row["usage"])
        if counted is None:
            self.unreported_calls += row["status"] != "error"
            return
        prompt, completion = counted
        self.prompt_tokens += prompt
        self.completion_tokens += completion
        if not price.known:
            self.unpriced_tokens += prompt + completion
            return
        cost = price.cost(prompt, completion)
        self.cost += cost
        if free:
            self.free_cost += cost

    def public(self) -> dict[str, Any]:
        return {
            "calls": self.calls,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "cost_usd": float(self.cost),
            "free_usd": float(self.free_cost),
            "unpriced_tokens": self.unpriced_tokens,
            "unreported_calls": self.unreported_calls,
        }


def usd(value: float) -> str:
    """Dollars to the cent from a dollar up, else to a millionth: `$12.30`, `$0.50`, `$0.000413`."""
    if value >= 1:
        return f"${value:,.2f}"
    whole, _, cents = f"{value:.6f}".partition(".")
    return f"${whole}.{cents.rstrip('0').ljust(2, '0')}"


def per_million(price: Mapping[str, Any]) -> str:
    """A public price as `$0.15 / $0.60` (USD per million tokens in / out), `?` when unknown."""
    if price["prompt"] is None or price["completion"] is None:
        return "?"
    return f"{usd(price['prompt'])} / {usd(price['completion'])}"


def price_source(price: Mapping[str, Any]) -> str:
    """`maker: models.dev openai (gpt-4o-mini)`: whose price, and the id it is listed under there."""
    if price["source"] == "unknown":
        return "unknown"
    return f"{price['source']}: {price['where']} ({price['model']})"


def model_price(catalog: ModelsDev, snapshot: Snapshot, alias: str, endpoint: str) -> ListPrice:
    """The list price of a model on the roster, or of one that left it (by the id in its alias)."""
    model = snapshot.models.get(alias)
    if model is None:
        model_id = alias.removeprefix(f"{endpoint}/")
        return list_price(catalog, model_id=model_id, family=family_of(model_id))
    served_by = snapshot.endpoints[model.endpoint]
    return list_price(
        catalog,
        model_id=model.model_id,
        family=model.family,
        endpoint=served_by.name,
        endpoint_provider=endpoint_provider(catalog, served_by),
        price_fact=model.facts.get("price"),
    )


async def price_list(state: BenchState) -> dict[str, ListPrice]:
    """alias → its list price, for every model on the roster (the Models page shows them)."""
    catalog = catalog_of(state.settings)
    snapshot = await state.snapshot()
    return {alias: model_price(catalog, snapshot, alias, m.endpoint) for alias, m in snapshot.models.items()}


async def priced_calls(
    state: BenchState, since: float | None
) -> tuple[list[dict[str, Any]], dict[str, ListPrice], dict[str, bool]]:
    """The calls since `since` (None: ever), the list price of each model they name, and whether the
    bench counts it free today (models no longer on the roster are not)."""
    catalog = catalog_of(state.settings)
    snapshot = await state.snapshot()
    async with state.read() as conn:
        rows = await usage_rows.calls_since(conn, since)
    served = {row["alias"]: row["endpoint"] for row in rows}
    prices = {alias: model_price(catalog, snapshot, alias, endpoint) for alias, endpoint in served.items()}
    free = {alias: bool(snapshot.models[alias].free) for alias in prices if alias in snapshot.models}
    return rows, prices, free


def _group_key(row: Mapping[str, Any], by: str) -> str:
    if by == "collection":
        return f"bench/{row['collection']}"
    if by == "key":
        return str(row["caller"])
    return str(row["alias"])


def tally_calls(
    rows: Iterable[Mapping[str, Any]], by: str, prices: Mapping[str, ListPrice], free: Mapping[str, bool]
) -> tuple[Tally, dict[str, Tally], dict[str, Tally]]:
    """(total, by group, by day) over the calls (pure; `prices` and `free` are per alias)."""
    total = Tally()
    groups: dict[str, Tally] = {}
    days: dict[str, Tally] = {}
    for row in rows:
        price, is_free = prices[row["alias"]], free.get(row["alias"], False)
        total.add(row, price, is_free)
        groups.setdefault(_group_key(row, by), Tally()).add(row, price, is_free)
        days.setdefault(day_of(row["at"]), Tally()).add(row, price, is_free)
    return total, groups, days


async def cost_report(state: BenchState, *, days: int | None = DEFAULT_DAYS, by: str = "model") -> dict[str, Any]:
    """Tokens and their cost at list prices over the last `days` days (None: every call ever), in
    total, per group and per day."""
    if by not in GROUPINGS:
        raise InvalidRequest(f"by must be one of {', '.join(GROUPINGS)} (got {by!r})", param="by")
    if days is not None and not 1 <= days <= MAX_DAYS:
        raise InvalidRequest(f"days must be a whole number from 1 to {MAX_DAYS} (got {days})", param="days")
    since = None if days is None else since_midnight(days)
    rows, prices, free = await priced_calls(state, since)
    total, groups, per_day = tally_calls(rows, by, prices, free)
    ranked = sorted(groups.items(), key=lambda g: (-g[1].cost, -(g[1].prompt_tokens + g[1].completion_tokens), g[0]))
    listed = []
    for name, tally in ranked:
        entry: dict[str, Any] = {"name": name, **tally.public()}
        if by == "model":
            entry["price"] = prices[name].public()
            entry["free"] = free.get(name)
        listed.append(entry)
    unpriced = sorted({r["alias"] for r in rows if not prices[r["alias"]].known and tokens_of(r["usage"]) is not None})
    return {
        "days": days,
        "since": since,
        "since_day": None if since is None else day_of(since),
        "by": by,
        "total": total.public(),
        "groups": listed,
        "per_day": [{"day": day, **tally.public()} for day, tally in sorted(per_day.items())],
        "unpriced_models": unpriced,
    }
