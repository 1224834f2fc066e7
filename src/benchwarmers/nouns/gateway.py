"""The gateway settings as one typed model: each setting's type, default, allowed range and meaning.

Everything that checks or shows a setting reads it from here: the admin service (what may be
stored), the snapshot (what was stored, read back and carried as this model), `benchwarmers gateway`,
the dashboard's Settings form, and the table in docs/GATEWAY.md (tests/e2e/test_gateway_settings_doc.py compares it),
so descriptions are plain text. The store keeps only the JSON object; the ranges say what the
gateway can honestly run with.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from functools import cache
from typing import Any, cast

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from benchwarmers.errors import InvalidRequest

log = logging.getLogger(__name__)

SECONDS: dict[str, Any] = {"unit": "seconds"}


class GatewaySettings(BaseModel):
    """The numbers that tune every panel. Stored as one JSON object under the `gateway` setting."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    # Seats: the same 0-20 a collection may set as its own override.
    max_explorers: int = Field(
        2, ge=0, le=20, description="explorer seats a panel adds at most (a collection can override it)"
    )
    max_calls: int = Field(
        5,
        ge=0,
        le=20,
        description="members plus explorers a panel fills at most; nominees come on top (a collection can override it)",
    )
    # The floor keeps every eligible model seen (one that got better must be noticed); the rest of
    # the seats go where they can change who is best (docs/GATEWAY.md, "Explorer seats").
    explorer_floor: float = Field(
        0.5,
        ge=0,
        le=1,
        description="share of explorer seats given stalest first; the rest by top-two Thompson sampling "
        "(1: stalest only)",
    )
    epsilon: float = Field(
        0.2,
        ge=0,
        le=1,
        description="share of the stalest-first explorer seats given by a Thompson draw on the evidence instead",
    )
    # Timing. A seat slower than the OpenAI SDKs' own 600 s timeout would be retried by the caller.
    seat_timeout: float = Field(
        120.0,
        ge=1,
        le=600,
        description="how long a seat may take, waiting for a free slot included, before it is a timeout",
        json_schema_extra=SECONDS,
    )
    # Every panel that needs a shape label waits for the decision model, so keep it short.
    decision_timeout: float = Field(
        5.0,
        ge=0.1,
        le=60,
        description="how long the decision models together may take to label a shape before the general shape is used",
        json_schema_extra=SECONDS,
    )
    # Proxies commonly drop a connection idle for 60 s; a ping a second is already plenty.
    ping_interval: float = Field(
        5.0,
        ge=1,
        le=60,
        description="time between ping comments that keep a streaming panel's connection open while its seats run",
        json_schema_extra=SECONDS,
    )
    # Long enough for an SDK retry after a timeout; a day, like common Idempotency-Key stores.
    replay_window: float = Field(
        600.0,
        ge=60,
        le=86400,
        description="how long a retried request or a repeated Idempotency-Key gets the recorded panel",
        json_schema_extra=SECONDS,
    )
    # 0 would let no call through: every seat would wait for a slot until its timeout.
    endpoint_concurrency: int = Field(
        64, ge=1, le=1024, description="seat calls in flight per endpoint; more wait for a free slot"
    )
    failing_after: int = Field(
        5,
        ge=1,
        le=100,
        description="failed seats in a row that retire a model (with a failing alert) until a probe gets an answer",
    )
    # Verdicts are the evidence: the alert says when they fall behind, by count or by age.
    owed_after: int = Field(
        20, ge=0, le=100_000, description="seats awaiting a verdict that raise the verdicts-owed alert; 0: never"
    )
    owed_days: int = Field(
        7,
        ge=0,
        le=365,
        description="days a seat may await a verdict before the verdicts-owed alert is raised; 0: never",
    )
    # A long real answer is 100-500 KB; a seat's reply is read up to about twice the cap, so the cap
    # bounds memory per seat too (upstream/truncation.py). KiB: whole numbers a person reads at a glance.
    answer_cap_kb: int = Field(
        1024,
        ge=16,
        le=16_384,
        description="largest answer a seat keeps, in KiB of UTF-8; a longer one is cut there, marked truncated_at",
    )
    # Privacy: 0 keeps everything; otherwise the server purges older prompts and answers daily.
    retention_days: int = Field(
        0, ge=0, le=36_500, description="days prompts and answers are kept (purged daily by the server); 0 keeps them"
    )
    # Daily budgets (bench/budgets.py) restart at this hour; most providers reset free tiers at 00:00 UTC.
    budget_reset_hour: int = Field(
        0, ge=0, le=23, description="hour (UTC) at which the daily budgets of collections, keys and the suite restart"
    )
    # The suite must not spend the day's free allowance before the user's own work runs.
    suite_daily_panels: int = Field(
        0,
        ge=0,
        le=1_000_000,
        description="panels the suite's runs may make a day; a run that reaches it stops, resumable; 0: no budget",
    )


FIELDS: tuple[str, ...] = tuple(GatewaySettings.model_fields)
GATEWAY_DEFAULTS: dict[str, Any] = GatewaySettings().model_dump()


@cache
def _schema(name: str) -> dict[str, Any]:
    """A field as JSON Schema: its type, minimum, maximum, description and unit, in one place."""
    return cast(dict[str, Any], GatewaySettings.model_json_schema()["properties"][name])


def bounds(name: str) -> tuple[float, float]:
    """The lowest and highest value a setting may take (both allowed)."""
    return _schema(name)["minimum"], _schema(name)["maximum"]


def whole(name: str) -> bool:
    return cast(str, _schema(name)["type"]) == "integer"


def in_seconds(name: str) -> bool:
    return _schema(name).get("unit") == "seconds"


def description(name: str) -> str:
    return str(_schema(name)["description"])


def number(value: float) -> str:
    """A number as a person writes it: 120 rather than 120.0, 0.2 as 0.2."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return repr(value)


def range_text(name: str, *, short: bool = False) -> str:
    """`from 1 to 60 seconds` for a sentence, `1–60 s` (short) for a table or a help line."""
    low, high = (number(b) for b in bounds(name))
    if short:
        return f"{low}–{high} s" if in_seconds(name) else f"{low}–{high}"
    return f"from {low} to {high} seconds" if in_seconds(name) else f"from {low} to {high}"


def refusal(name: str, value: Any) -> str:
    """What is wrong with a value: the setting, what it must be, and what was given."""
    kind = "a whole number " if whole(name) else ""
    return f"{name} must be {kind}{range_text(name)} (got {_shown(value)})"


def _shown(value: Any) -> str:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return number(value)
    return json.dumps(value, default=str, ensure_ascii=False, separators=(",", ":"))[:60]


def check(values: Mapping[str, Any]) -> None:
    """Refuse unknown settings and values out of range or of the wrong kind (bool is not a number).
    Every bad value is named; `param` is the first of them."""
    unknown = sorted(set(values) - set(FIELDS))
    if unknown:
        raise InvalidRequest(
            f"unknown gateway setting(s): {', '.join(unknown)}; expected: {', '.join(FIELDS)}", param=unknown[0]
        )
    try:
        GatewaySettings.model_validate(values)
    except ValidationError as exc:
        wrong = [name for name in FIELDS if any(e["loc"][:1] == (name,) for e in exc.errors())]
        raise InvalidRequest("; ".join(refusal(n, values[n]) for n in wrong), param=wrong[0]) from None


def read_stored(stored: Mapping[str, Any] | None) -> GatewaySettings:
    """The stored object read back: unknown keys ignored, missing ones defaulted, and a value out
    of range (stored before the ranges existed) replaced by its default, so the gateway always
    runs with settings it can honour."""
    kept: dict[str, Any] = {}
    for name, value in (stored or {}).items():
        if name not in GatewaySettings.model_fields:
            continue
        try:
            GatewaySettings.model_validate({name: value})
        except ValidationError:
            log.warning("%s; using the default, %s", refusal(name, value), number(GATEWAY_DEFAULTS[name]))
            continue
        kept[name] = value
    return GatewaySettings.model_validate(kept)
