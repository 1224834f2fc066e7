"""Shaping data for the templates: times, numbers, a model's status, chart geometry, gateway fields.

Pure functions (the templates stay free of arithmetic); everything here returns plain text or
numbers that Jinja escapes as it renders.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

from benchwarmers.bench.evidence.board import Standing
from benchwarmers.bench.evidence.cost import per_million, price_source
from benchwarmers.nouns import gateway as gateway_config

CHART_WIDTH = 200  # the bar's SVG viewBox width; the page scales it


def iso(ts: float | None) -> str:
    return datetime.fromtimestamp(ts, UTC).isoformat(timespec="seconds") if ts else ""


def when(ts: float | None) -> str:
    """Local time, as the page shows it before its script puts it in the browser's own zone."""
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(ts)) if ts else ""


def tokens(value: int | None) -> str:
    return f"{value:,}" if value else "?"


def yes_no(value: bool | None) -> str:
    return "?" if value is None else ("yes" if value else "no")


def percent(value: float | None) -> str:
    return "–" if value is None else f"{round(value * 100)}%"


def seconds(value: float | None) -> str:
    return "–" if value is None else (f"{value:.2f} s" if value < 10 else f"{value:.1f} s")


def price_text(price: Mapping[str, Any]) -> str:
    """A list price as the pages show it: `$0.15 / $0.60`, or `?` when no source gives one."""
    return per_million(price) + ("" if price["source"] == "unknown" else f" · {price_source(price)}")


def status_line(model: Mapping[str, Any], now: float | None = None) -> str:
    """ok, cooldown until HH:MM, retiring, went paid, gone, disabled."""
    until = model.get("cooldown_until")
    if model["status"] != "cooldown" or not until:
        return str(model["status"])
    same_day = time.localtime(until)[:3] == time.localtime(now)[:3]
    return f"cooldown until {time.strftime('%H:%M' if same_day else '%Y-%m-%d %H:%M', time.localtime(until))}"


FAILING_SHARE = 0.5  # of a model's seats failed: it is failing
ERRORS_SHOWN_FROM = 0.1  # of its seats failed: the errors show beside an otherwise ok status
FEW_SEATS = 3  # fewer seats than this say too little to call a model failing


def health(model: Mapping[str, Any], boards: Iterable[Any], alerts: Iterable[Mapping[str, Any]]) -> dict[str, str]:
    """A model's status as the Models page shows it: the roster's own (cooldown, retiring, …), made worse by
    an open alert about it or by the share of its seats that failed. `state` is the CSS class, `text` says why."""
    status = str(model["status"])
    text = status_line(model)
    seats = errors = 0
    kinds: dict[str, int] = {}
    for board in boards:
        for standing in board.standings:
            if standing.alias == model["alias"]:
                seats += standing.seats
                errors += standing.errors
                for kind, n in standing.error_kinds:
                    kinds[kind] = kinds.get(kind, 0) + n
    reasons = []
    own_alerts = [a for a in alerts if a.get("subject") == model["alias"]]
    for alert in own_alerts:
        reasons.append(f"open alert: {alert.get('label') or alert.get('kind')}")
    if errors:
        classes = ", ".join(f"{n} {kind}" for kind, n in sorted(kinds.items(), key=lambda item: -item[1]))
        share = errors / seats
        if share >= ERRORS_SHOWN_FROM or own_alerts:
            reasons.append(f"{errors} of {seats} seats failed ({round(100 * share)}%: {classes})")
    failing = bool(own_alerts) or (seats >= FEW_SEATS and errors / max(seats, 1) >= FAILING_SHARE)
    if status == "ok" and failing:
        status, text = "failing", "failing"
    elif status == "ok" and reasons:
        status, text = "errors", "ok, with errors"
    return {"state": status.replace(" ", "-"), "text": text, "why": "; ".join(reasons)}


def fact(model: Mapping[str, Any], name: str) -> tuple[Any, str | None]:
    """A fact's value and the source it came from (None when nothing says)."""
    found = model.get("facts", {}).get(name)
    return (found["value"], found["source"]) if found else (None, None)


def bar(standing: Standing) -> dict[str, Any]:
    """SVG geometry for one model: the useful rate as a bar, the 95% interval as a whisker."""
    scale = CHART_WIDTH
    rate = standing.rate
    return {
        "rate": rate,
        "width": round((rate or 0) * scale, 2),
        "low": round(standing.low * scale, 2),
        "high": round(standing.high * scale, 2),
        "judged": standing.verdicts > 0,
        "label": (
            f"useful {percent(rate)} of {standing.verdicts} verdicts, "
            f"95% interval {percent(standing.low)} to {percent(standing.high)}"
            if standing.verdicts
            else "no verdicts yet"
        ),
    }


def evidence_by_model(boards: Iterable[Any]) -> dict[str, list[Standing]]:
    """alias → its standing on each shape (from `bench.standings.standings`)."""
    found: dict[str, list[Standing]] = {}
    for board in boards:
        for standing in board.standings:
            found.setdefault(standing.alias, []).append(standing)
    return found


def gateway_fields(gateway: gateway_config.GatewaySettings) -> list[dict[str, Any]]:
    """The Settings form's inputs, one per field of the gateway settings model: its current value,
    the range as min/max, and the description, range and default as the hint beside it."""
    fields = []
    for name in gateway_config.FIELDS:
        low, high = gateway_config.bounds(name)
        whole = gateway_config.whole(name)
        default = gateway_config.number(gateway_config.GATEWAY_DEFAULTS[name])
        fields.append(
            {
                "name": name,
                "label": name.replace("_", " ").capitalize(),
                "value": gateway_config.number(getattr(gateway, name)),
                "min": gateway_config.number(low),
                "max": gateway_config.number(high),
                "step": "1" if whole else "any",
                "inputmode": "numeric" if whole else "decimal",
                "range": gateway_config.range_text(name, short=True),
                "default": default,
                "description": gateway_config.description(name),
            }
        )
    return fields
