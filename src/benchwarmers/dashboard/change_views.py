"""The Settings page's changes log as people read it: a summary of what changed (changed fields only,
times as UTC dates, numbers with separators), and the stored before/after JSON for whoever wants it.
Pure functions; the template escapes what they return.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

import orjson

VALUE_TEXT = 80  # characters of one value in a summary
FIELDS_SHOWN = 6  # fields a summary names; "and N more" after them
RAW_TEXT = 4_000  # characters of the raw JSON on the page (GET /api/changes has it whole)
TIME_KEYS = ("at", "since", "until")  # a field named so, or ending in _at / _until, holds a Unix time
EPOCH_FROM = 1e9  # a number this large in such a field is a time (2001 on), not a count


def utc(ts: float) -> str:
    """`2026-12-01 19:41:06 UTC`: the exact time, as the title of a shown time holds it."""
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def _is_time(key: str | None, value: Any) -> bool:
    if key is None or isinstance(value, bool) or not isinstance(value, int | float) or value < EPOCH_FROM:
        return False
    return key in TIME_KEYS or key.endswith(("_at", "_until"))


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def value_text(value: Any, key: str | None = None) -> str:
    """One value as a person reads it: `none`, `yes`, `128,000`, a UTC time, a list joined by commas."""
    if value is None or value == [] or value == {}:
        return "none"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if _is_time(key, value):
        return utc(float(value))
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:,.6g}" if abs(value) < 1e6 else f"{value:,.0f}"
    if isinstance(value, list):
        return _cut(", ".join(value_text(v) for v in value), VALUE_TEXT)
    if isinstance(value, dict):
        return _cut(", ".join(f"{k}: {value_text(v, k)}" for k, v in value.items()), VALUE_TEXT)
    return _cut(str(value), VALUE_TEXT)


def _label(key: str) -> str:
    return key.replace("_", " ")


def summary(change: Mapping[str, Any]) -> list[str]:
    """What a change did, one item a field: `context window: 128,000 → 200,000` for an edit (only the fields that
    changed), `members: fake/a, fake/b` for what was created or removed; [] when nothing is recorded."""
    before, after = change.get("before"), change.get("after")
    if not isinstance(before, dict) and not isinstance(after, dict):
        if before is None and after is None:
            return []
        if before is None:
            return [value_text(after)]
        return [f"{value_text(before)} → {value_text(after)}" if after is not None else f"was {value_text(before)}"]
    old = before if isinstance(before, dict) else {}
    new = after if isinstance(after, dict) else {}
    items = []
    for key in dict.fromkeys([*old, *new]):
        if key == "name" and change.get("name") in (old.get(key), new.get(key)):
            continue  # the change's own name, shown beside it already
        if key in old and key in new:
            if old[key] != new[key]:
                items.append(f"{_label(key)}: {value_text(old[key], key)} → {value_text(new[key], key)}")
        elif old and new:
            items.append(f"{_label(key)}: {value_text(new[key], key)}" if key in new else f"{_label(key)}: removed")
        elif (new or old).get(key) not in (None, [], {}, ""):
            items.append(f"{_label(key)}: {value_text((new or old)[key], key)}")
    if len(items) > FIELDS_SHOWN:
        items = [*items[:FIELDS_SHOWN], f"and {len(items) - FIELDS_SHOWN} more"]
    return items


def raw(change: Mapping[str, Any]) -> str:
    """The stored before and after, as JSON: what the summary was read from."""
    text = orjson.dumps({"before": change.get("before"), "after": change.get("after")}, option=orjson.OPT_INDENT_2)
    return _cut(text.decode(), RAW_TEXT)


def change_line(change: Mapping[str, Any]) -> dict[str, Any]:
    """One changes-log row for the Settings page."""
    return {
        "at": change["at"],
        "utc": utc(change["at"]),
        "actor": change["actor"],
        "subject": change["subject"],
        "name": change["name"],
        "action": change["action"],
        "summary": summary(change),
        "raw": raw(change),
    }
