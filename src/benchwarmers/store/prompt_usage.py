"""The prompt tokens seats reported, beside their prompt's characters and kind: what each model's
characters a token are learned from again after a restart (bench/state.py, load_ratios)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import and_, select
from sqlalchemy.ext.asyncio import AsyncConnection

from benchwarmers.nouns.seats import SeatStatus
from benchwarmers.store.calls import SEATED_KINDS
from benchwarmers.store.schema import panels, seats

RECENT = 20_000  # the newest answered seats read; a model seen only before them starts from the default


async def recent_prompt_usage(conn: AsyncConnection, limit: int = RECENT) -> list[tuple[str, str, int, Any]]:
    """(alias, kind, prompt characters, reported prompt tokens) of the newest answered seats whose
    panel's prompt teaches a ratio, oldest first (the order they were learned in)."""
    query = (
        select(seats.c.alias, panels.c.prompt_kind, panels.c.prompt_chars, seats.c.usage)
        .join(panels, panels.c.id == seats.c.panel_id)
        .where(
            and_(
                panels.c.prompt_chars.is_not(None),
                seats.c.status == SeatStatus.ok,
                seats.c.seat.in_(SEATED_KINDS),
                seats.c.usage.is_not(None),
            )
        )
        .order_by(seats.c.created_at.desc())
        .limit(limit)
    )
    rows = (await conn.execute(query)).all()
    return [
        (row.alias, row.prompt_kind, row.prompt_chars, (row.usage or {}).get("prompt_tokens"))
        for row in reversed(rows)
        if isinstance(row.usage, dict)
    ]
