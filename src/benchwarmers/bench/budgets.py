"""Daily budgets: panels (and tokens the seats reported) a collection, a gateway key or the suite may
spend a day, refused before any model is called once spent (429, Retry-After at the reset).

The store is the truth: a budget's spending is the panels recorded since its reset (store/budgets.py),
so every worker and host sharing the database counts the same panels. Counting them on every request
would put a COUNT on the hot path, so each process keeps a tally per budget that it corrects from the
store at most every SYNC_EVERY seconds, and on every request once the tally is near the budget, and
always before it refuses. Far from a budget a request costs no query; near it, what other processes
spent is read first. Panels admitted by this process but not yet reserved count too (`pending`), so
concurrent requests of one process never overshoot; across processes, two admitted in the same few
milliseconds near the end may both run (the refusal needs no lock; docs/GATEWAY.md, "Budgets").

A day runs from the reset hour (UTC, the gateway setting `budget_reset_hour`) to the next one.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable, Mapping
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Protocol

from benchwarmers.bench.budget_rules import day_start, next_reset
from benchwarmers.bench.caller import Caller
from benchwarmers.errors import BudgetExhausted
from benchwarmers.nouns.gateway import GatewaySettings
from benchwarmers.store import budgets as budget_rows
from benchwarmers.store import keys as key_rows

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncConnection

    from benchwarmers.bench.snapshot import Snapshot

SYNC_EVERY = 5.0  # seconds this process trusts its own tally of a budget far from its end
NEAR = 0.1  # within this share of a budget (and at least one panel), every request re-counts
SUITE = "suite"  # the suite's caller name (bench/suite/record.py), whose budget is a gateway setting


@dataclass(frozen=True)
class Budget:
    """One daily budget: what it belongs to and its amounts (None: that amount is not limited)."""

    kind: str  # collection | key | suite
    name: str
    panels: int | None
    tokens: int | None

    @property
    def subject(self) -> tuple[str, str]:
        """What the store counts: a collection's panels, or a caller's (a key's, the suite's)."""
        return ("collection" if self.kind == "collection" else "caller", self.name)

    @property
    def label(self) -> str:
        if self.kind == "collection":
            return f"collection bench/{self.name}"
        return "the suite" if self.kind == "suite" else f"gateway key {self.name!r}"


@dataclass
class Tally:
    since: float  # the reset it counts from
    panels: int
    tokens: int
    synced: float  # monotonic time it was read from the store
    pending: int = 0  # admitted by this process, not yet reserved


def budgets_of(collection: Mapping[str, Any], caller: Caller, gateway: GatewaySettings) -> list[Budget]:
    """The budgets a panel on `collection` by `caller` spends from."""
    found = []
    if collection.get("daily_panels") or collection.get("daily_tokens"):
        found.append(
            Budget("collection", collection["name"], collection.get("daily_panels"), collection.get("daily_tokens"))
        )
    if caller.name == SUITE:
        if gateway.suite_daily_panels:
            found.append(Budget("suite", SUITE, gateway.suite_daily_panels, None))
    elif caller.daily_panels or caller.daily_tokens:
        found.append(Budget("key", caller.name, caller.daily_panels, caller.daily_tokens))
    return found


def panel_tokens(outcomes: Iterable[Any]) -> int:
    """The tokens a panel's calls reported, as the store sums them: total_tokens, else prompt plus completion."""
    found = 0
    for outcome in outcomes:
        usage = outcome.usage or {}
        total = usage.get("total_tokens")
        if isinstance(total, int):
            found += total
            continue
        parts = usage.get("prompt_tokens"), usage.get("completion_tokens")
        if all(isinstance(p, int) for p in parts):
            found += sum(parts)  # type: ignore[arg-type]
    return found


def _near(amount: int, budget: int) -> bool:
    return amount >= budget - max(1, math.ceil(budget * NEAR))


class StateReads(Protocol):
    """What budgets read of the BenchState that holds them (bench/state.py, above this module)."""

    async def snapshot(self) -> Snapshot: ...
    def read(self) -> AbstractAsyncContextManager[AsyncConnection]: ...


class Budgets:
    """This process's tallies of every budget; `clock` is the wall clock days are reckoned by."""

    def __init__(self, state: StateReads, clock: Callable[[], float] = time.time) -> None:
        self.state = state
        self.clock = clock
        self._tallies: dict[tuple[str, str], Tally] = {}

    async def admit(self, collection: Mapping[str, Any], caller: Caller) -> list[Budget]:
        """Charge one panel to every budget it spends from, or refuse it (BudgetExhausted) when one is
        spent. The caller then calls `reserved` (its panel row is written) or `released` (refused later)."""
        snapshot = await self.state.snapshot()
        budgets = budgets_of(collection, caller, snapshot.gateway)
        if not budgets:
            return []
        hour = snapshot.gateway.budget_reset_hour
        now = self.clock()
        since = day_start(now, hour)
        for budget in budgets:
            tally = await self._tally(budget, since)
            if self._spent(budget, tally):
                tally = await self._sync(budget, since)  # never refuse on this process's view alone
                if self._spent(budget, tally):
                    raise self._refusal(budget, tally, now, next_reset(now, hour))
        for budget in budgets:
            self._tallies[budget.subject].pending += 1
        return budgets

    def reserved(self, budgets: Iterable[Budget]) -> None:
        """The panels' rows are written: they count in the store now, and in the tallies until re-read."""
        for budget in budgets:
            tally = self._tallies.get(budget.subject)
            if tally is not None:
                tally.pending = max(0, tally.pending - 1)
                tally.panels += 1

    def released(self, budgets: Iterable[Budget]) -> None:
        """A charged panel was refused before its row was written: it spent nothing."""
        for budget in budgets:
            tally = self._tallies.get(budget.subject)
            if tally is not None:
                tally.pending = max(0, tally.pending - 1)

    def spent_tokens(self, collection: str, caller: str, tokens: int) -> None:
        """A recorded panel's seats reported `tokens`: add them to the tallies that count it."""
        for subject in (("collection", collection), ("caller", caller)):
            tally = self._tallies.get(subject)
            if tally is not None:
                tally.tokens += tokens

    async def today(self) -> list[dict[str, Any]]:
        """Every budget set (collections', active keys', the suite's) with what it spent today."""
        snapshot = await self.state.snapshot()
        async with self.state.read() as conn:
            keys = await key_rows.list_keys(conn, include_revoked=False)
        found = [
            Budget("collection", name, c.get("daily_panels"), c.get("daily_tokens"))
            for name, c in sorted(snapshot.collections.items())
            if c.get("daily_panels") or c.get("daily_tokens")
        ]
        found += [
            Budget("key", k["name"], k["daily_panels"], k["daily_tokens"])
            for k in keys
            if k["daily_panels"] or k["daily_tokens"]
        ]
        if snapshot.gateway.suite_daily_panels:
            found.append(Budget("suite", SUITE, snapshot.gateway.suite_daily_panels, None))
        return [await self.status(b) for b in found]

    async def status(self, budget: Budget) -> dict[str, Any]:
        """What a budget has spent today, read from the store (Settings, `/metrics`, the CLI)."""
        hour = (await self.state.snapshot()).gateway.budget_reset_hour
        now = self.clock()
        tally = await self._sync(budget, day_start(now, hour), hot=False)
        return {
            "kind": budget.kind,
            "name": budget.name,
            "daily_panels": budget.panels,
            "daily_tokens": budget.tokens,
            "panels": tally.panels,
            "tokens": tally.tokens,
            "resets_at": next_reset(now, hour),
        }

    async def _tally(self, budget: Budget, since: float) -> Tally:
        tally = self._tallies.get(budget.subject)
        if (
            tally is None
            or tally.since != since
            or time.monotonic() - tally.synced >= SYNC_EVERY
            or (budget.panels is not None and _near(tally.panels + tally.pending, budget.panels))
            or (budget.tokens is not None and _near(tally.tokens, budget.tokens))
        ):
            tally = await self._sync(budget, since)
        return tally

    async def _sync(self, budget: Budget, since: float, *, hot: bool = True) -> Tally:
        """The budget's tally read from the store; on the request path (`hot`) a panels-only budget's
        tokens are not summed (shown on Settings and in /metrics, they are)."""
        column, name = budget.subject
        counted = budget.tokens is not None or not hot
        async with self.state.read() as conn:
            if column == "collection":
                panels, tokens = await budget_rows.spent(conn, since=since, collection=name, tokens=counted)
            else:
                panels, tokens = await budget_rows.spent(conn, since=since, caller=name, tokens=counted)
        old = self._tallies.get(budget.subject)
        pending = old.pending if old is not None else 0
        tally = Tally(since=since, panels=panels, tokens=tokens, synced=time.monotonic(), pending=pending)
        self._tallies[budget.subject] = tally
        return tally

    @staticmethod
    def _spent(budget: Budget, tally: Tally) -> bool:
        panels = budget.panels is not None and tally.panels + tally.pending >= budget.panels
        return panels or (budget.tokens is not None and tally.tokens >= budget.tokens)

    @staticmethod
    def _refusal(budget: Budget, tally: Tally, now: float, resets: float) -> BudgetExhausted:
        wait = max(1, math.ceil(resets - now))
        at = datetime.fromtimestamp(resets, UTC).strftime("%Y-%m-%d %H:%M UTC")
        used = tally.panels + tally.pending
        unit = "panels" if budget.panels is not None and used >= budget.panels else "tokens"
        spent = f"{used:,} of its {budget.panels:,} panels today" if unit == "panels" else ""
        if unit == "tokens":
            spent = f"{tally.tokens:,} of its {budget.tokens or 0:,} tokens today"
        if budget.kind == "suite":
            command = "benchwarmers gateway set --suite-daily-panels N"
        else:
            command = f"benchwarmers {budget.kind} edit {budget.name} --daily-{unit} N"  # collection | key
        return BudgetExhausted(
            f"the daily budget of {budget.label} is spent: {spent}. It resets at {at} (in {wait} s). "
            f"No model was called: retry after the reset, or raise the budget with `{command}`.",
            code="budget_exhausted",
            headers={"Retry-After": str(wait), "x-should-retry": "false"},
        )
