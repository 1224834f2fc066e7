"""Pacing ("guard"): every upstream call takes a slot under its endpoint's and its model's known
limits before it is made, so the bench stays under a provider's limits instead of learning them
from 429s.

A slot is the request (1) and its estimated tokens, reserved in every limit that applies at once:
the endpoint's own limits (its models share them) and the model's (catalog/pace.py). The limits
are `limits` moving windows, in this process's memory or, with BENCHWARMERS_REDIS_URL, in Redis,
so every process on every host draws on one budget.

Each window is kept a little longer than the provider's (the guard: 2% of the period, from 250 ms
to 1 s): a call reaches the provider a moment after its slot was taken (a new TLS connection alone
takes 100–300 ms), and not every call takes the same moment, so a window exactly as long as the
provider's would let the provider see one call too many. Redis expires keys in whole seconds, so
there the window is rounded up to one (which also covers hosts whose clocks differ by less).

Tokens are counted in units of at most `TOKEN_ENTRIES` a window (a moving window keeps one entry
per unit), each call's rounded up, so rounding only ever paces more tightly. After a reply, its
usage beyond the reservation is counted too, and what a provider's headers say remains of a
window is believed when it is less than the bench counted (calls made before the limit was known,
or by other clients of the same key).

Allowances (a day or a month, catalog/pace.py) whose reset is known are fixed windows, counted as
the provider counts them: from the last reset to the next, in a counter named after the window's
start (`limits` counters, in memory or Redis), so a slot refused there frees up at the reset
itself. A slot taken in the guard before a reset counts in the next window too: the call may reach
the provider after its reset. In memory, a window this process has not counted yet starts from
the seats the store recorded since the reset (`seed`), so a restart does not hand out the day's
allowance twice; Redis keeps the counters across restarts itself. Calls that are not seats
(checks, probes) are not in the store: after a restart they are forgotten, at most a few a day.

Time for the fixed windows and for when slots free up is the pacer's `clock` (injectable: a test
runs a day in a second); moving windows keep the storage's own clock.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Protocol, cast

from benchwarmers.catalog.pace import DAY, Limit, parse_window
from benchwarmers.errors import Unavailable
from benchwarmers.upstream.ratelimits import parse_rate_limits

if TYPE_CHECKING:
    from limits.aio.storage import Storage

    from benchwarmers.bench.snapshot import Snapshot

log = logging.getLogger("benchwarmers.pacing")

GUARD_SHARE = 0.02
MIN_GUARD = 0.25
MAX_GUARD = 1.0
TOKEN_ENTRIES = 10_000


def async_storage_uri(url: str) -> str:
    """`redis://host:6379/0` as `limits` names its asyncio Redis storage."""
    if url.startswith("async+"):
        return url
    if url.startswith("unix://"):
        return "async+redis+unix://" + url.removeprefix("unix://")
    return "async+" + url


def limits_storage(redis_url: str | None) -> Storage:
    """Counters in this process's memory, or in the Redis every process shares.

    `limits` is imported here, when the first paced call needs a storage: a CLI command that opens
    the bench but calls no provider does not load it."""
    from limits.aio.storage import MemoryStorage, Storage
    from limits.errors import ConfigurationError
    from limits.storage import storage_from_string

    if not redis_url:
        return MemoryStorage()
    try:
        storage = storage_from_string(async_storage_uri(redis_url), implementation="redispy", wrap_exceptions=True)
    except ConfigurationError as exc:
        raise Unavailable(
            f"BENCHWARMERS_REDIS_URL is set but cannot be used ({exc}); install the redis extra "
            "(`pip install 'benchwarmers[redis]'`) or unset it to count per process"
        ) from None
    assert isinstance(storage, Storage)
    return storage


class _MovingWindows(Protocol):
    """The moving-window calls of a `limits` storage, with the window in seconds: memory storage
    takes fractions of a second; Redis is given whole seconds (see `Pacer._window`)."""

    async def acquire_entry(self, key: str, limit: int, expiry: float, amount: int = 1) -> bool: ...

    async def get_moving_window(self, key: str, limit: int, expiry: float) -> tuple[float, int]: ...

    async def check(self) -> bool: ...

    async def incr(self, key: str, expiry: int, amount: int = 1) -> int: ...

    async def get(self, key: str) -> int: ...


def guard(period: int) -> float:
    """How much longer than the provider's period a window is kept."""
    return min(MAX_GUARD, max(MIN_GUARD, period * GUARD_SHARE))


@dataclass(frozen=True)
class Scope:
    """What a limit belongs to: `endpoint groq` (all its models) or `model groq/llama-3.3-70b`."""

    kind: str  # endpoint | model
    name: str
    limits: tuple[Limit, ...]


def scopes_of(snapshot: Snapshot, alias: str) -> tuple[Scope, ...]:
    """The limits a call to `alias` is paced by: its endpoint's (shared by all its models) and its own."""
    model = snapshot.models[alias]
    endpoint = snapshot.endpoints[model.endpoint]
    return Scope("endpoint", endpoint.name, endpoint.limits), Scope("model", alias, model.limits)


@dataclass(frozen=True)
class _Budget:
    scope: Scope
    limit: Limit
    unit: int  # tokens a window entry stands for (1 for requests)
    entries: int  # entries the window holds

    @classmethod
    def of(cls, scope: Scope, limit: Limit) -> _Budget:
        unit = 1 if limit.kind == "requests" else max(1, math.ceil(limit.amount / TOKEN_ENTRIES))
        return cls(scope, limit, unit, limit.amount // unit)

    @property
    def key(self) -> str:
        # The amount is part of the key: a changed limit starts a window of its own.
        limit = self.limit
        return f"benchwarmers/pace/{self.scope.kind}/{self.scope.name}/{limit.kind}/{limit.period}/{limit.amount}"

    def cost(self, tokens: int) -> int:
        return 1 if self.limit.kind == "requests" else math.ceil(max(0, tokens) / self.unit)

    def owner(self) -> str:
        return f"{self.scope.kind} {self.scope.name}"

    def fixed_key(self, start: float) -> str:
        """A fixed window's counter: one per window, named after its start."""
        return f"{self.key}@{int(start)}"


@dataclass(frozen=True)
class Allowance:
    """What is left of one day or month window of a scope."""

    scope: Scope
    limit: Limit
    used: int  # requests, or tokens
    resets_at: float | None  # a fixed window's next reset; None: a moving window

    @property
    def left(self) -> int:
        return max(0, self.limit.amount - self.used)

    def describe(self) -> str:
        """`requests-day: 12 of 50 left, resets at 00:00 UTC (2026-12-03T00:00:00+00:00)`."""
        when = ""
        if self.resets_at is not None:
            when = f" ({datetime.fromtimestamp(self.resets_at, UTC).isoformat()})"
        return f"{self.limit.window}: {self.left:,} of {self.limit.amount:,} left, {self.limit.reset_text()}{when}"


# What the store says a scope spent since a moment: (scope, limit, since) → requests or tokens.
Seed = Callable[[Scope, Limit, float], Awaitable[int]]


@dataclass
class Slot:
    """A call's reservation: what it took of each limit (tokens are settled after the reply)."""

    taken: list[tuple[_Budget, int]] = field(default_factory=list)
    tokens: int = 0
    waited: float = 0.0  # seconds spent waiting for it


@dataclass(frozen=True)
class Refusal:
    """No slot: why, and when one frees up (None: never, the call alone is over a limit)."""

    why: str
    frees_at: float | None


SHARED_CHECK_INTERVAL = 1.0  # seconds a successful check of the shared store is trusted


class SharedStoreUnavailable(Unavailable):
    code = "rate_limits_unavailable"

    def __init__(self) -> None:
        super().__init__(
            "the shared rate-limit store (BENCHWARMERS_REDIS_URL) is not answering, so the providers' "
            "limits cannot be kept across processes; nothing was called, try again shortly",
            headers={"Retry-After": "1"},
        )


class Pacer:
    """Slots under known limits; one per process, shared by every call it makes."""

    def __init__(
        self, redis_url: str | None = None, *, clock: Callable[[], float] = time.time, seed: Seed | None = None
    ) -> None:
        self.redis_url = redis_url
        self.clock = clock  # epoch seconds: when fixed windows reset and slots free up
        self.seed = seed  # what the store says was spent, for a fixed window first counted here
        self._seeded: set[str] = set()
        self._windows: _MovingWindows | None = None
        # One reservation at a time in this process: checking every limit, then taking from each,
        # is then all-or-nothing here (across processes a race can only waste a slot, never add one).
        self._lock: asyncio.Lock | None = None
        self._answered_at = -math.inf  # when the shared store last answered a check

    @property
    def shared(self) -> bool:
        return bool(self.redis_url)

    def _storage(self) -> _MovingWindows:
        if self._windows is None:
            # Made on first use: commands that never call a model never connect to Redis.
            self._windows = cast(_MovingWindows, limits_storage(self.redis_url))
        return self._windows

    async def ensure_shared(self, now: float | None = None) -> None:
        """Refuse a panel with 503 while the shared store (Redis) is away: its calls could not be
        paced against what other processes spend, and free tiers would be overrun. Asked at most
        once a second while the store answers; every time while it does not, so service returns
        with it."""
        if not self.shared:
            return
        now = time.monotonic() if now is None else now
        if now - self._answered_at < SHARED_CHECK_INTERVAL:
            return
        try:
            answered = bool(await self._storage().check())
        except Exception:
            answered = False
        if not answered:
            raise SharedStoreUnavailable()
        self._answered_at = now

    def _window(self, period: int) -> float:
        """The window kept for a provider's period: the period plus the guard (whole seconds in Redis)."""
        seconds = period + guard(period)
        return math.ceil(seconds) if self.shared else seconds

    def _budgets(self, scopes: Sequence[Scope]) -> list[_Budget]:
        return [_Budget.of(scope, limit) for scope in scopes for limit in scope.limits]

    async def take(self, scopes: Sequence[Scope], tokens: int) -> Slot | Refusal:
        """A slot now, or why not and when one frees up. Never waits."""
        budgets = self._budgets(scopes)
        if not budgets:
            return Slot(tokens=tokens)
        for budget in budgets:
            if budget.cost(tokens) > budget.entries:
                return Refusal(
                    f"the request's ~{tokens:,} tokens are more than {budget.owner()}'s {budget.limit.describe()}",
                    None,
                )
        if self._lock is None:
            self._lock = asyncio.Lock()
        try:
            async with self._lock:
                return await self._take(budgets, tokens)
        except Exception as exc:
            # A shared counter that is down must not stop every call: the call goes unpaced.
            log.warning("pacing storage failed (%s); call not paced", type(exc).__name__)
            return Slot(tokens=tokens)

    async def _take(self, budgets: list[_Budget], tokens: int) -> Slot | Refusal:
        storage = self._storage()
        now = self.clock()
        blocked: Refusal | None = None
        for budget in budgets:
            cost = budget.cost(tokens)
            bounds = budget.limit.bounds(now)
            if bounds is not None:
                count, frees_at = await self._fixed_count(budget, *bounds), bounds[1]
            else:
                window = self._window(budget.limit.period)
                oldest, count = await storage.get_moving_window(budget.key, budget.entries, window)
                frees_at = oldest + window
            full = count + cost > budget.entries
            if full and (blocked is None or (blocked.frees_at is not None and frees_at > blocked.frees_at)):
                blocked = Refusal(f"{budget.owner()}'s {budget.limit.describe()} are used up", frees_at)
        if blocked is not None:
            return blocked
        slot = Slot(tokens=tokens)
        for budget in budgets:
            cost = budget.cost(tokens)
            if cost == 0:
                continue
            if not await self._acquire(budget, cost, now):
                # Another process took it between the check and now: what was taken stays taken.
                return Refusal(f"{budget.owner()}'s {budget.limit.describe()} are used up", now + MIN_GUARD)
            slot.taken.append((budget, cost))
        return slot

    async def _acquire(self, budget: _Budget, cost: int, now: float) -> bool:
        """Take `cost` entries of a budget's window now; False when it had no room."""
        bounds = budget.limit.bounds(now)
        if bounds is None:
            window = self._window(budget.limit.period)
            return await self._storage().acquire_entry(budget.key, budget.entries, window, cost)
        start, end = bounds
        if not self._counted(budget.fixed_key(start)):
            await self._fixed_count(budget, start, end)  # seeded from the store first
        taken = await self._storage().incr(budget.fixed_key(start), self._expiry(end, now), cost)
        if end - now < guard(budget.limit.period):
            # It may reach the provider after the reset: the next window counts it too.
            following = (budget.limit.bounds(end) or (end, end))[1]
            await self._fixed_count(budget, end, following)
            await self._storage().incr(budget.fixed_key(end), self._expiry(following, now), cost)
        return taken <= budget.entries

    def _counted(self, key: str) -> bool:
        """Whether a fixed window's counter needs no seeding from the store (any more)."""
        return self.shared or self.seed is None or key in self._seeded

    def _expiry(self, end: float, now: float) -> int:
        """Seconds a fixed window's counter is kept: until its end and the guard (whole seconds)."""
        return max(1, math.ceil(end - now + MAX_GUARD))

    async def _fixed_count(self, budget: _Budget, start: float, end: float) -> int:
        """Entries a fixed window holds; in memory, a window first counted here starts from what
        the store says was spent since its start."""
        key = budget.fixed_key(start)
        storage = self._storage()
        seed = self.seed
        if seed is None or self._counted(key):
            return await storage.get(key)
        self._seeded.add(key)
        try:
            spent = await seed(budget.scope, budget.limit, start) if start <= self.clock() else 0
        except BaseException:
            self._seeded.discard(key)  # read it again next time
            raise
        entries = min(budget.entries, math.ceil(max(0, spent) / budget.unit))
        if entries > 0:
            return await storage.incr(key, self._expiry(end, self.clock()), entries)
        return await storage.get(key)

    async def allowances(self, scopes: Sequence[Scope]) -> list[Allowance]:
        """What is left of each day and month window of `scopes` (the allowances a free tier runs out of)."""
        now = self.clock()
        found: list[Allowance] = []
        if self._lock is None:
            self._lock = asyncio.Lock()
        try:
            async with self._lock:  # a window seeded from the store is read once it is seeded
                found = await self._allowances(scopes, now)
        except Exception as exc:
            log.warning("pacing storage failed (%s); allowances not read", type(exc).__name__)
        return found

    async def _allowances(self, scopes: Sequence[Scope], now: float) -> list[Allowance]:
        found: list[Allowance] = []
        for budget in self._budgets(scopes):
            if budget.limit.period < DAY:
                continue
            bounds = budget.limit.bounds(now)
            if bounds is None:
                window = self._window(budget.limit.period)
                _, count = await self._storage().get_moving_window(budget.key, budget.entries, window)
            else:
                count = await self._fixed_count(budget, *bounds)
            used = min(budget.limit.amount, count * budget.unit)
            found.append(Allowance(budget.scope, budget.limit, used, bounds[1] if bounds else None))
        return found

    async def wait(self, scopes: Sequence[Scope], tokens: int, deadline: float) -> Slot | Refusal:
        """A slot, waiting for one until `deadline` (epoch seconds); a refusal when none frees up in time."""
        started, slept = self.clock(), False
        while True:
            found = await self.take(scopes, tokens)
            if isinstance(found, Slot):
                found.waited = self.clock() - started if slept else 0.0
                return found
            if found.frees_at is None or found.frees_at > deadline:
                return found
            slept = True
            await asyncio.sleep(max(0.0, found.frees_at - self.clock()))

    async def align(self, model: str, headers: Mapping[str, str], known: Sequence[Limit] = ()) -> None:
        """Believe the provider about what is left of `model`'s windows: where its headers say less
        remains than this count leaves, take the difference. `known`: the model's limits, whose
        resets say which of its windows are fixed."""
        info = parse_rate_limits(headers) if headers else None
        if info is None or not info.remaining:
            return
        if self._lock is None:
            self._lock = asyncio.Lock()
        try:
            async with self._lock:
                for window, amount in info.limits.items():
                    parsed, remaining = parse_window(window), info.remaining.get(window)
                    if parsed is None or remaining is None or amount <= 0:
                        continue
                    limit = Limit(parsed[0], parsed[1], amount)
                    limit = next((k for k in known if k.kind == limit.kind and k.period == limit.period), limit)
                    if limit.amount != amount:
                        continue  # the user's limit for this window is another: the bench counts under it
                    budget = _Budget.of(Scope("model", model, ()), limit)
                    await self._fill(budget, budget.entries - remaining // budget.unit)
        except Exception as exc:
            log.warning("pacing storage failed (%s); provider's count not taken", type(exc).__name__)

    async def _fill(self, budget: _Budget, used: int) -> None:
        """Make the window hold at least `used` entries, as far as it has room."""
        count = await self._count(budget)
        missing = min(used, budget.entries) - count
        if missing > 0:
            await self._acquire(budget, missing, self.clock())

    async def _count(self, budget: _Budget) -> int:
        """Entries the budget's window holds now."""
        bounds = budget.limit.bounds(self.clock())
        if bounds is not None:
            return await self._fixed_count(budget, *bounds)
        window = self._window(budget.limit.period)
        _, count = await self._storage().get_moving_window(budget.key, budget.entries, window)
        return count

    async def settle(self, slot: Slot, used: int | None) -> None:
        """Count the tokens a reply says it used beyond what was reserved, as far as each window
        has room (a window cannot hold more than its limit: the rest is the provider's to refuse)."""
        if used is None or used <= slot.tokens:
            return
        tokens = [(budget, cost) for budget, cost in slot.taken if budget.limit.kind == "tokens"]
        if not tokens:
            return
        try:
            for budget, cost in tokens:
                extra = budget.cost(used) - cost
                room = min(extra, budget.entries - await self._count(budget))
                if room > 0:
                    await self._acquire(budget, room, self.clock())
        except Exception as exc:
            log.warning("pacing storage failed (%s); tokens used not counted", type(exc).__name__)
