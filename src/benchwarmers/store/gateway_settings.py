"""Settings kept in the database (editable from CLI and dashboard): rows of JSON by key.

The gateway's numbers are one JSON object under `gateway`; what they may be, and their defaults,
is nouns/gateway.py (the store only keeps what it is given).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import and_, select
from sqlalchemy.ext.asyncio import AsyncConnection

from benchwarmers.store.schema import alerts, settings

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


async def shapes(conn: AsyncConnection) -> dict[str, str]:
    return dict(await get_setting(conn, "shapes", DEFAULT_SHAPES))


async def unacknowledged_subjects(conn: AsyncConnection, kind: str) -> list[str]:
    query = select(alerts.c.subject).where(and_(alerts.c.kind == kind, alerts.c.acknowledged_at.is_(None)))
    return [row[0] for row in await conn.execute(query)]
