"""Gateway settings kept in the database (editable from CLI and dashboard), with their defaults."""

from __future__ import annotations

from typing import Any

from sqlalchemy import and_, select
from sqlalchemy.ext.asyncio import AsyncConnection

from benchwarmers.store.schema import alerts, settings

GATEWAY_DEFAULTS: dict[str, Any] = {
    "max_explorers": 2,
    "max_calls": 5,
    "seat_timeout": 120.0,  # seconds each seat may take before it is recorded as a timeout
    "ping_interval": 5.0,  # seconds between `: ping` comments on a streaming panel
    "replay_window": 600.0,  # seconds within which a replayed request gets the recorded panel
    "decision_timeout": 5.0,
    "endpoint_concurrency": 64,  # seat calls in flight per endpoint; more wait for a free slot
    "failing_after": 5,  # failed seats in a row that raise a "failing" alert
    "epsilon": 0.2,  # share of explorer picks made by a Thompson draw on the evidence instead of staleness
    "retention_days": 0,  # prompts and answers older than this are purged daily by the server; 0 keeps them
}

DEFAULT_SHAPES: dict[str, str] = {
    "general": "Anything that fits no other shape: questions, explanations, everyday tasks.",
    "review": "Finding defects in code or text someone wrote: bugs, risks, wrong claims.",
    "design": "Choosing how to build something: architecture, trade-offs, interfaces.",
    "enumeration": "Listing many items exhaustively: cases, options, sources, edge cases.",
    "code": "Writing or changing code to a specification.",
    "writing": "Writing or editing prose: documentation, messages, summaries.",
    "math": "Calculation, proofs, quantitative reasoning.",
    "vision": "Questions about images: photos, screenshots, diagrams, scanned text.",
}


async def get_setting(conn: AsyncConnection, key: str, default: Any = None) -> Any:
    value = await conn.scalar(select(settings.c.value).where(settings.c.key == key))
    return default if value is None else value


async def put_setting(conn: AsyncConnection, key: str, value: Any) -> None:
    updated = await conn.execute(settings.update().where(settings.c.key == key).values(value=value))
    if updated.rowcount == 0:
        await conn.execute(settings.insert().values(key=key, value=value))


async def gateway_limits(conn: AsyncConnection) -> dict[str, Any]:
    stored = await get_setting(conn, "gateway", {})
    return {**GATEWAY_DEFAULTS, **{k: v for k, v in stored.items() if k in GATEWAY_DEFAULTS}}


async def shapes(conn: AsyncConnection) -> dict[str, str]:
    return dict(await get_setting(conn, "shapes", DEFAULT_SHAPES))


async def unacknowledged_subjects(conn: AsyncConnection, kind: str) -> list[str]:
    query = select(alerts.c.subject).where(and_(alerts.c.kind == kind, alerts.c.acknowledged_at.is_(None)))
    return [row[0] for row in await conn.execute(query)]
