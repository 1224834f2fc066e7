"""Numbers read from HTTP headers, bounded: the one parser for every header the bench reads as a number.

A client's `x-stainless-retry-count` and `Content-Length`, a provider's `retry-after` and rate-limit
counts: whatever is sent, a bad or huge value reads as None (the caller ignores it, or answers 400 where
the header is required), never an exception. `int()` of 5,000 digits raises ValueError, `float()` of 400
reads as inf, and `int(inf)` raises OverflowError: none of them ever sees such a value here.
"""

from __future__ import annotations

import re

# No header of ours means anything past 18 digits: a length, a count, an epoch in milliseconds (13).
MAX_DIGITS = 18
# [0-9], not \d: `str.isdigit` and \d also accept '²' and '٣'.
_WHOLE = re.compile(rf"[0-9]{{1,{MAX_DIGITS}}}")
_DECIMAL = re.compile(rf"[0-9]{{1,{MAX_DIGITS}}}(?:\.[0-9]{{1,{MAX_DIGITS}}})?")


def _text(value: str | bytes | None) -> str | None:
    if value is None:
        return None
    return (value.decode("latin-1") if isinstance(value, bytes) else value).strip(" \t")


def header_int(value: str | bytes | None) -> int | None:
    """A whole number in ASCII digits (at most MAX_DIGITS of them), else None."""
    text = _text(value)
    return int(text) if text is not None and _WHOLE.fullmatch(text) else None


def header_number(value: str | bytes | None) -> float | None:
    """A non-negative decimal such as "12" or "59.56" (at most MAX_DIGITS digits each side), else None."""
    text = _text(value)
    return float(text) if text is not None and _DECIMAL.fullmatch(text) else None
