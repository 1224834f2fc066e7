"""Bounded replies: a seat's answer is kept up to the gateway's cap (`answer_cap_kb`), never more.

A seat's reply is read only up to `read_limit(cap)` bytes: room for an answer of `cap` bytes
written with JSON escapes, plus the envelope around it (id, usage, finish reason). A longer body
is cut there and its connection closed, and `salvage` makes the prefix whole JSON again, so the
answer's first part is kept: the string it was cut in is closed at a safe point (never inside an
escape or a UTF-8 sequence) and every open container after it. What came after the cut (tool
calls, usage) is lost. `cap_text` then cuts the answer itself to the cap, at a character boundary.

Pure functions, and only a regular expression runs over the bytes: no Python loop per byte.
"""

from __future__ import annotations

import re
from typing import Any

import orjson

ESCAPES = 2  # a body may spend up to twice the answer's bytes on it (\n, \", \u00e9 for é: 2 bytes as 6)
ENVELOPE = 64 * 1024  # id, model, usage, finish reason; a reasoning field beside the content may not fit

# One JSON token: a whole string, or one the prefix ends inside (perhaps right after a backslash);
# a structural character; a scalar (number, true, false, null).
_TOKEN = re.compile(rb'"(?:[^"\\]++|\\.)*+(?:"|\\?\Z)|[{}\[\]:,]|[^\s{}\[\]:,"]++', re.S)
# A string's characters and whole escapes: where it stops, the rest is an escape the cut began.
_WHOLE = re.compile(rb'(?:[^"\\]++|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*+')
_HIGH_SURROGATE = re.compile(rb"\\u[dD][89abAB][0-9a-fA-F]{2}")
_OPEN, _CLOSE, _QUOTE, _BACKSLASH = b"{[", b"}]", ord('"'), ord("\\")


def read_limit(cap: int) -> int:
    """How many bytes of a reply are read for an answer of at most `cap` bytes."""
    return ESCAPES * cap + ENVELOPE


def cap_text(text: str, cap: int) -> tuple[str, int | None]:
    """`text` cut to at most `cap` bytes of UTF-8 at a character boundary, and the bytes kept when
    it was cut (None when it fits)."""
    if len(text) <= cap // 4:  # the common case: no character takes more than 4 bytes
        return text, None
    raw = text.encode("utf-8", "surrogatepass")
    if len(raw) <= cap:
        return text, None
    end = cap
    while end > 0 and raw[end] & 0xC0 == 0x80:  # raw[end] continues a character begun before the cut
        end -= 1
    return raw[:end].decode("utf-8", "surrogatepass"), end


def salvage(prefix: bytes) -> Any:
    """The JSON value whose first bytes are `prefix`, closed where it was cut; None when the prefix
    is not the start of JSON."""
    closed = close_json(prefix)
    if closed is None:
        return None
    try:
        return orjson.loads(closed)
    except orjson.JSONDecodeError:
        return None


def close_json(prefix: bytes) -> bytes | None:
    """`prefix` made whole: a string it ends inside is closed (when it is a value, not a key), and
    every open container after it; a key, colon, comma or scalar the cut may have shortened is
    dropped. None when nothing of a value is left."""
    # Each open container: its closer, and whether it is an object waiting for a key or a colon.
    closers: list[int] = []
    wants_key: list[bool] = []
    safe, safe_closers = -1, b""  # the last point after which the prefix can be closed
    for token in _TOKEN.finditer(prefix):
        start, end = token.span()
        first = prefix[start]
        if first == _QUOTE:
            whole = end - start >= 2 and prefix[end - 1] == _QUOTE and _ends_string(prefix, start, end)
            is_key = bool(wants_key) and wants_key[-1]
            if not whole:
                if is_key:
                    break
                return _close_string(prefix, start) + bytes(reversed(closers))
            if is_key:
                wants_key[-1] = False  # the colon and the value come next
                continue
        elif first in _OPEN:
            closers.append(ord("}") if first == ord("{") else ord("]"))
            wants_key.append(first == ord("{"))
            safe, safe_closers = end, bytes(reversed(closers))
            continue
        elif first in _CLOSE:
            if not closers:
                return None
            closers.pop()
            wants_key.pop()
        elif first == ord(":"):
            continue
        elif first == ord(","):
            if wants_key and closers[-1] == ord("}"):
                wants_key[-1] = True
            continue
        elif end == len(prefix):
            break  # a scalar the cut may have shortened (12 of 123, tr of true)
        # A value ended here.
        safe, safe_closers = end, bytes(reversed(closers))
        if not closers:
            break
    if safe < 0:
        return None
    return prefix[:safe] + safe_closers


def _ends_string(prefix: bytes, start: int, end: int) -> bool:
    """Whether the quote at `end - 1` closes the string begun at `start` (not an escaped quote
    the prefix ends after)."""
    backslashes = 0
    at = end - 2
    while at > start and prefix[at] == _BACKSLASH:
        backslashes += 1
        at -= 1
    return backslashes % 2 == 0


def _close_string(prefix: bytes, start: int) -> bytes:
    """The prefix up to the last whole character of the string opened at `start`, and its quote."""
    found = _WHOLE.match(prefix, start + 1)
    end = found.end() if found is not None else start + 1
    # A high surrogate whose low half was cut off: orjson (rightly) refuses it alone.
    if end - 6 > start and _HIGH_SURROGATE.fullmatch(prefix, end - 6, end) and _escapes(prefix, start, end - 6):
        end -= 6
    # A UTF-8 sequence the cut went through: back to its first byte, and drop it when incomplete.
    lead = end - 1
    while lead > start and prefix[lead] & 0xC0 == 0x80 and end - lead < 4:
        lead -= 1
    if lead > start:
        byte = prefix[lead]
        size = 2 if byte >> 5 == 0b110 else 3 if byte >> 4 == 0b1110 else 4 if byte >> 3 == 0b11110 else 1
        if end - lead < size:
            end = lead
    return prefix[:end] + b'"'


def _escapes(prefix: bytes, start: int, at: int) -> bool:
    """Whether the backslash at `at` begins an escape (an odd run of backslashes ends there)."""
    run = 0
    while at > start and prefix[at] == _BACKSLASH:
        run += 1
        at -= 1
    return run % 2 == 1
