"""Reading providers' rate-limit headers: how long to wait, and what is left.

Every provider spells these differently:
- OpenAI / Groq: `x-ratelimit-{limit,remaining,reset}-{requests,tokens}`, resets as "2m59.56s"
- OpenRouter: `x-ratelimit-{limit,remaining}` and `x-ratelimit-reset` as epoch milliseconds
- Cerebras: `x-ratelimit-{limit,remaining,reset}-{requests-day,tokens-minute}`, resets in seconds
- Mistral: `x-ratelimit-{limit,remaining}-{req-minute,tokens-minute}`
- Anthropic: `anthropic-ratelimit-{requests,tokens,input-tokens,output-tokens}-{limit,remaining,reset}`,
  resets as RFC 3339 times ("2025-01-01T00:00:30Z")
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

from benchwarmers.header_numbers import header_number

_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_DURATION = re.compile(r"(?:\d+(?:\.\d+)?(?:ms|h|m|s)\s*)+")
_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|h|m|s)")
_UNIT_SECONDS = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001}

_WINDOW_FIRST = re.compile(r"x-ratelimit-(limit|remaining|reset)(?:-([a-z0-9-]+))?")
_WINDOW_LAST = re.compile(r"(?:x-|anthropic-)?ratelimit-([a-z0-9-]+?)-(limit|remaining|reset)")
# OpenRouter's bare `x-ratelimit-*` counts requests.
_DEFAULT_WINDOW = "requests"
# Reset values this large are absolute times, not durations.
_EPOCH_MS = 1e12
_EPOCH_S = 1e9


@dataclass
class RateLimitInfo:
    """Limits and what remains of them, keyed by window (`requests`, `tokens-minute`, ...)."""

    limits: dict[str, int] = field(default_factory=dict)
    remaining: dict[str, int] = field(default_factory=dict)


def parse_duration(value: str) -> float | None:
    """Seconds in "2m59.56s", "1h2m3s", "120ms", "12s" or a bare number "12.5"; None if unreadable or huge."""
    text = value.strip().lower()
    if not text:
        return None
    if _NUMBER.fullmatch(text):
        return header_number(text)
    if not _DURATION.fullmatch(text):
        return None
    parts = [(header_number(number), unit) for number, unit in _DURATION_PART.findall(text)]
    if any(number is None for number, _ in parts):
        return None
    return sum((number or 0.0) * _UNIT_SECONDS[unit] for number, unit in parts)


def _leading_int(value: str) -> int | None:
    # IETF drafts append parameters ("100;w=60"); some providers send floats.
    match = _NUMBER.match(value.strip())
    number = header_number(match.group()) if match else None
    return None if number is None else int(number)


def _split_name(name: str) -> tuple[str, str] | None:
    """(field, window) for a rate-limit header name, e.g. ("reset", "tokens-minute")."""
    match = _WINDOW_FIRST.fullmatch(name)
    if match:
        return match.group(1), match.group(2) or _DEFAULT_WINDOW
    match = _WINDOW_LAST.fullmatch(name)
    if match:
        return match.group(2), match.group(1)
    return None


def _windows(headers: Mapping[str, str]) -> dict[str, dict[str, str]]:
    """Rate-limit headers grouped as window -> field -> raw value."""
    grouped: dict[str, dict[str, str]] = {}
    for name, value in headers.items():
        lowered = name.lower()
        if "ratelimit-" not in lowered:
            continue
        split = _split_name(lowered)
        if split is not None:
            grouped.setdefault(split[1], {})[split[0]] = value
    return grouped


def parse_rate_limits(headers: Mapping[str, str]) -> RateLimitInfo:
    info = RateLimitInfo()
    for window, fields in _windows(headers).items():
        for name, target in (("limit", info.limits), ("remaining", info.remaining)):
            if name in fields and (number := _leading_int(fields[name])) is not None:
                target[window] = number
    return info


def _moment(value: str, now: float) -> float | None:
    """Seconds from `now` to an RFC 3339 time (Anthropic's resets); None if it is not one."""
    try:
        when = datetime.fromisoformat(value.strip())
    except ValueError:
        return None
    if when.tzinfo is None:
        return None
    return max(0.0, when.timestamp() - now)


def _reset_seconds(value: str, now: float) -> float | None:
    seconds = parse_duration(value)
    if seconds is None:
        return _moment(value, now)
    if seconds >= _EPOCH_MS:
        return max(0.0, seconds / 1000 - now)
    if seconds >= _EPOCH_S:
        return max(0.0, seconds - now)
    return seconds


def _retry_after(value: str, now: float) -> float | None:
    seconds = parse_duration(value)
    if seconds is not None:
        return seconds
    try:
        when = parsedate_to_datetime(value.strip())
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        return None
    return max(0.0, when.timestamp() - now)


def retry_after_seconds(headers: Mapping[str, str], now: float, *, include_resets: bool = True) -> float | None:
    """Seconds to wait before the next call, from the most explicit header present.

    `retry-after-ms`, then `retry-after` (seconds or HTTP date), then the reset headers. Among
    resets, the windows with nothing remaining decide (the longest of them); when none is known
    to be exhausted, the soonest reset is used. `include_resets=False` reads only the explicit
    headers: reset headers ride on every response and mean nothing unless a limit was hit.
    """
    lowered = {name.lower(): value for name, value in headers.items()}
    if "retry-after-ms" in lowered:
        millis = parse_duration(lowered["retry-after-ms"])
        if millis is not None:
            return millis / 1000
    if "retry-after" in lowered:
        seconds = _retry_after(lowered["retry-after"], now)
        if seconds is not None:
            return seconds
    if not include_resets:
        return None
    exhausted: list[float] = []
    other: list[float] = []
    for fields in _windows(lowered).values():
        if "reset" not in fields:
            continue
        seconds = _reset_seconds(fields["reset"], now)
        if seconds is None:
            continue
        remaining = _leading_int(fields.get("remaining", ""))
        (exhausted if remaining is not None and remaining <= 0 else other).append(seconds)
    if exhausted:
        return max(exhausted)
    return min(other) if other else None


def reset_moments(headers: Mapping[str, str], now: float) -> dict[str, float]:
    """When each window resets (epoch seconds), for the windows whose reset header says."""
    found: dict[str, float] = {}
    for window, fields in _windows({name.lower(): value for name, value in headers.items()}).items():
        seconds = _reset_seconds(fields["reset"], now) if "reset" in fields else None
        if seconds is not None:
            found[window] = now + seconds
    return found


def daily_reset(headers: Mapping[str, str], now: float) -> str | None:
    """The fixed UTC hour a provider's daily window resets at, as `resets-day` keeps it ("00:00"),
    when a day window's reset header names a moment on a whole hour (within 90 s: the header is
    read a moment after it was written); None when it names none, or another moment (a moving
    window frees up whenever its oldest call leaves it, at any minute)."""
    for window, moment in sorted(reset_moments(headers, now).items()):
        if window.rpartition("-")[2] != "day":
            continue
        hour = round(moment / 3600) * 3600
        if abs(moment - hour) <= 90:
            return datetime.fromtimestamp(hour, UTC).strftime("%H:00")
    return None


def announced_windows(headers: Mapping[str, str], now: float | None = None) -> dict[str, int | str]:
    """What a response's headers announce, as a model's `rate_limits` fact keeps it: each window's
    limit, and `resets-day` when a daily window's reset names a fixed hour (catalog/pace.py)."""
    announced: dict[str, int | str] = {**parse_rate_limits(headers).limits}
    reset = daily_reset(headers, datetime.now(UTC).timestamp() if now is None else now)
    if announced and reset is not None:
        announced["resets-day"] = reset
    return announced
