"""Rate limits as the bench paces by them: a kind (requests or tokens), a period and an amount.

Providers name their windows in their headers (`requests`, `tokens-minute`, `req-minute`,
`requests-day`: see upstream/ratelimits.py); the user names them the same way
(`requests-minute`, `tokens-minute`, `requests-day`, `requests-10s`...). A window is read as
`<kind>-<period>`: kinds are requests (`req`, `request`) and tokens (`token`); periods are second,
minute, hour, day or a whole number of seconds (`10s`, up to a day). A bare `requests` or
`tokens` counts per minute: that is what OpenAI and OpenRouter mean by it (Groq's bare `requests`
is per day, so it paces more loosely than it could, never more tightly). Windows of any other
kind (`input-tokens`, `tokens-query-cost`) are not paced.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

KINDS = {"requests": "requests", "request": "requests", "req": "requests", "tokens": "tokens", "token": "tokens"}
PERIODS = {"second": 1, "minute": 60, "hour": 3600, "day": 86400}
_PERIOD_WORDS = {**PERIODS, "sec": 1, "min": 60}
_PERIOD_NAMES = {seconds: name for name, seconds in PERIODS.items()}
BARE_PERIOD = 60  # `requests` / `tokens` with no period: per minute
_SECONDS = re.compile(r"([1-9]\d{0,4})s")


@dataclass(frozen=True, order=True)
class Limit:
    """At most `amount` requests (or tokens) in any `period` seconds."""

    kind: str  # requests | tokens
    period: int  # seconds, 1 to a day
    amount: int

    @property
    def window(self) -> str:
        """The window's name as overrides store it: `requests-minute`, `tokens-day`, `requests-10s`..."""
        return f"{self.kind}-{_PERIOD_NAMES.get(self.period, f'{self.period}s')}"

    def describe(self) -> str:
        """`20 requests a minute`, `1 request a second`, `6,000 tokens every 10 seconds`."""
        kind = self.kind if self.amount != 1 else self.kind.removesuffix("s")
        named = _PERIOD_NAMES.get(self.period)
        return f"{self.amount:,} {kind} " + (f"a {named}" if named else f"every {self.period} seconds")


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
    """The paced limits among `windows` ({name: amount}), by (kind, period); others are left out."""
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


def known_limits(announced: Any, override: Any) -> tuple[Limit, ...]:
    """A model's limits: those its provider announced, each replaced by the user's for the same
    kind and period, plus the user's others."""
    merged = limits_of(announced)
    merged.update(limits_of(override))
    return tuple(sorted(merged.values()))


def check_windows(windows: Mapping[str, Any]) -> dict[str, int]:
    """The user's windows as they are stored (canonical names; 0 means "remove"); ValueError names
    the first window or amount that is not one."""
    checked: dict[str, int] = {}
    for name, amount in windows.items():
        parsed = parse_window(name)
        if parsed is None:
            raise ValueError(
                f"{name!r} is not a rate-limit window: use requests-<period> or tokens-<period>, "
                f"with a period of {', '.join(PERIODS)} or a number of seconds such as 10s"
            )
        if isinstance(amount, bool) or not isinstance(amount, int) or amount < 0:
            raise ValueError(f"{name} must be a whole number of {parsed[0]}, 0 to remove it (got {amount!r})")
        checked[Limit(parsed[0], parsed[1], max(amount, 1)).window] = amount
    return checked


def updated_windows(current: Any, changes: Mapping[str, int]) -> dict[str, int]:
    """The stored windows after `changes` (canonical names from `check_windows`): 0 removes one."""
    merged = {
        Limit(*parsed, 1).window: amount
        for name, amount in (current.items() if isinstance(current, Mapping) else ())
        if (parsed := parse_window(str(name))) is not None and isinstance(amount, int)
    }
    for window, amount in changes.items():
        if amount:
            merged[window] = amount
        else:
            merged.pop(window, None)
    return dict(sorted(merged.items()))
