"""Rate limits as the bench paces by them: a kind (requests or tokens), a period and an amount.

Providers name their windows in their headers (`requests`, `tokens-minute`, `req-minute`,
`requests-day`: see upstream/ratelimits.py); the user names them the same way
(`requests-minute`, `tokens-minute`, `requests-day`, `requests-10s`...). A window is read as
`<kind>-<period>`: kinds are requests (`req`, `request`) and tokens (`token`); periods are second,
minute, hour, day or a whole number of seconds (`10s`, up to a day). A bare `requests` or
`tokens` counts per minute: that is what OpenAI and OpenRouter mean by it (Groq's bare `requests`
is per day, so it paces more loosely than it could, never more tightly). Windows of any other
kind (`input-tokens`, `tokens-query-cost`) are not paced.

Allowances: a `day` or `month` window (`requests-day`, `tokens-month`) is a moving 24 hours or 30
days unless its reset is known, as two string entries of the same mapping: `"resets-day": "HH:MM"`
(the UTC time of day every daily window resets) and `"resets-month": "D"` (the day of the month,
at 00:00 UTC; a day a month lacks is its last). A window with a known reset is fixed: it counts from
the last reset to the next, as the provider does.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

KINDS = {"requests": "requests", "request": "requests", "req": "requests", "tokens": "tokens", "token": "tokens"}
DAY = 86400
MONTH = 30 * DAY  # a moving month: what a monthly allowance with no known reset is paced as
PERIODS = {"second": 1, "minute": 60, "hour": 3600, "day": DAY, "month": MONTH}
RESETS = {"resets-day": DAY, "resets-month": MONTH}  # the reset entries, by the period they fix
_PERIOD_WORDS = {**PERIODS, "sec": 1, "min": 60}
_PERIOD_NAMES = {seconds: name for name, seconds in PERIODS.items()}
BARE_PERIOD = 60  # `requests` / `tokens` with no period: per minute
_SECONDS = re.compile(r"([1-9]\d{0,4})s")
_TIME_OF_DAY = re.compile(r"([01]\d|2[0-3]):([0-5]\d)")


@dataclass(frozen=True, order=True)
class Limit:
    """At most `amount` requests (or tokens) in any `period` seconds."""

    kind: str  # requests | tokens
    period: int  # seconds, 1 to a day, or a month (30 days)
    amount: int
    # A fixed window's reset: a day's, seconds after 00:00 UTC; a month's, the day of the month.
    # None: a moving window.
    resets: int | None = None

    @property
    def window(self) -> str:
        """The window's name as overrides store it: `requests-minute`, `tokens-day`, `requests-10s`..."""
        return f"{self.kind}-{_PERIOD_NAMES.get(self.period, f'{self.period}s')}"

    def describe(self) -> str:
        """`20 requests a minute`, `1 request a second`, `6,000 tokens every 10 seconds`."""
        kind = self.kind if self.amount != 1 else self.kind.removesuffix("s")
        named = _PERIOD_NAMES.get(self.period)
        return f"{self.amount:,} {kind} " + (f"a {named}" if named else f"every {self.period} seconds")

    def reset_text(self) -> str:
        """When the window starts over: `resets at 00:00 UTC`, `resets on day 1 at 00:00 UTC`, or
        `a moving 24 hours` / `a moving 30 days` when the provider's reset is not known."""
        if self.resets is None:
            hours = self.period / 3600
            return f"a moving {self.period // DAY} days" if self.period >= MONTH else f"a moving {hours:g} hours"
        if self.period == DAY:
            return f"resets at {self.resets // 3600:02d}:{self.resets % 3600 // 60:02d} UTC"
        return f"resets on day {self.resets} at 00:00 UTC"

    def bounds(self, now: float) -> tuple[float, float] | None:
        """A fixed window's start and end (epoch seconds) around `now`; None for a moving one."""
        if self.resets is None:
            return None
        moment = datetime.fromtimestamp(now, UTC)
        if self.period == DAY:
            start = moment.replace(hour=0, minute=0, second=0, microsecond=0).timestamp() + self.resets
            start -= DAY if start > now else 0
            return start, start + DAY
        year, month = moment.year, moment.month
        start = _month_reset(year, month, self.resets)
        if start > now:
            year, month = (year, month - 1) if month > 1 else (year - 1, 12)
            start = _month_reset(year, month, self.resets)
        following = (year, month + 1) if month < 12 else (year + 1, 1)
        return start, _month_reset(*following, self.resets)


def windows_of(limits: Iterable[Limit]) -> dict[str, int | str]:
    """Limits as a mapping of windows again, their resets as the entries that name them."""
    found: dict[str, int | str] = {}
    for limit in limits:
        found[limit.window] = limit.amount
        if limit.resets is not None and limit.period == DAY:
            found["resets-day"] = f"{limit.resets // 3600:02d}:{limit.resets % 3600 // 60:02d}"
        elif limit.resets is not None:
            found["resets-month"] = str(limit.resets)
    return found


def _month_reset(year: int, month: int, day: int) -> float:
    """00:00 UTC of `day` of that month, or of its last day when it is shorter."""
    following = datetime(year + (month == 12), month % 12 + 1, 1, tzinfo=UTC)
    days = datetime.fromtimestamp(following.timestamp() - DAY, UTC).day
    return datetime(year, month, min(day, days), tzinfo=UTC).timestamp()


def parse_reset(name: str, value: Any) -> int | None:
    """A reset entry's value as `Limit.resets` keeps it: `resets-day` "HH:MM" as seconds after
    00:00 UTC, `resets-month` "D" (1 to 31) as the day; None when it is not one."""
    period = RESETS.get(name.strip().lower())
    text = str(value).strip() if isinstance(value, str | int) and not isinstance(value, bool) else ""
    if period == DAY and (match := _TIME_OF_DAY.fullmatch(text)):
        return int(match.group(1)) * 3600 + int(match.group(2)) * 60
    if period == MONTH and text.isdigit() and 1 <= int(text) <= 31:
        return int(text)
    return None


def resets_of(windows: Any) -> dict[int, int]:
    """The resets a mapping of windows names, by the period they fix (DAY, MONTH)."""
    if not isinstance(windows, Mapping):
        return {}
    found = {RESETS[name]: parse_reset(name, value) for name, value in windows.items() if name in RESETS}
    return {period: reset for period, reset in found.items() if reset is not None}


def parse_window(name: str) -> tuple[str, int] | None:
    """(kind, period in seconds) for a window name; None for a window that is not paced."""
    head, _, tail = name.strip().lower().partition("-")
    kind = KINDS.get(head)
    if kind is None:
        return None
    if not tail:
        return kind, BARE_PERIOD
    period = _PERIOD_WORDS.get(tail)
    if period is None and (seconds := _SECONDS.fullmatch(tail)) and int(seconds.group(1)) <= PERIODS["day"]:
        period = int(seconds.group(1))
    return (kind, period) if period is not None else None


def limits_of(windows: Any) -> dict[tuple[str, int], Limit]:
    """The paced limits among `windows` ({name: amount}), by (kind, period), fixed where the mapping
    names their reset; others are left out."""
    return _fixed(_amounts_of(windows), resets_of(windows))


def _fixed(limits: dict[tuple[str, int], Limit], resets: Mapping[int, int]) -> dict[tuple[str, int], Limit]:
    return {key: replace(limit, resets=resets.get(limit.period)) for key, limit in limits.items()}


def _amounts_of(windows: Any) -> dict[tuple[str, int], Limit]:
    found: dict[tuple[str, int], Limit] = {}
    if not isinstance(windows, Mapping):
        return found
    for name, amount in windows.items():
        parsed = parse_window(str(name))
        if parsed is None or isinstance(amount, bool) or not isinstance(amount, int) or amount <= 0:
            continue
        # Two header windows of one kind and period (`requests` and `requests-minute`): the tighter counts.
        if parsed not in found or amount < found[parsed].amount:
            found[parsed] = Limit(kind=parsed[0], period=parsed[1], amount=amount)
    return found


def known_limits(*layers: Any) -> tuple[Limit, ...]:
    """A model's limits from its sources' windows, the least trusted first (what the provider
    announced, then the user's): each window, and each reset, is the last layer's that names it."""
    merged: dict[tuple[str, int], Limit] = {}
    resets: dict[int, int] = {}
    for windows in layers:
        merged.update(_amounts_of(windows))
        resets.update(resets_of(windows))
    return tuple(sorted(_fixed(merged, resets).values()))


def check_windows(windows: Mapping[str, Any]) -> dict[str, int | str]:
    """The user's windows as they are stored (canonical names; 0, or "" for a reset, means
    "remove"); ValueError names the first window, amount or reset that is not one."""
    checked: dict[str, int | str] = {}
    for name, amount in windows.items():
        if name in RESETS:
            if amount in ("", 0, None):
                checked[name] = ""
            elif parse_reset(name, amount) is None:
                wanted = "a UTC time of day as HH:MM (00:00)" if RESETS[name] == DAY else "a day of the month, 1 to 31"
                raise ValueError(f"{name} must be {wanted}, or empty to remove it (got {amount!r})")
            else:
                checked[name] = str(amount).strip()
            continue
        parsed = parse_window(name)
        if parsed is None:
            raise ValueError(
                f"{name!r} is not a rate-limit window: use requests-<period> or tokens-<period>, "
                f"with a period of {', '.join(PERIODS)} or a number of seconds such as 10s "
                "(and resets-day HH:MM or resets-month D for when the daily or monthly ones reset)"
            )
        if isinstance(amount, bool) or not isinstance(amount, int) or amount < 0:
            raise ValueError(f"{name} must be a whole number of {parsed[0]}, 0 to remove it (got {amount!r})")
        checked[Limit(parsed[0], parsed[1], max(amount, 1)).window] = amount
    return checked


def updated_windows(current: Any, changes: Mapping[str, int | str]) -> dict[str, int | str]:
    """The stored windows after `changes` (canonical names from `check_windows`): 0 or "" removes one."""
    stored = current.items() if isinstance(current, Mapping) else ()
    merged: dict[str, int | str] = {
        Limit(*parsed, 1).window: amount
        for name, amount in stored
        if (parsed := parse_window(str(name))) is not None and isinstance(amount, int)
    }
    merged |= {name: str(value) for name, value in stored if name in RESETS and parse_reset(name, value) is not None}
    for window, amount in changes.items():
        if amount:
            merged[window] = amount
        else:
            merged.pop(window, None)
    return dict(sorted(merged.items()))
