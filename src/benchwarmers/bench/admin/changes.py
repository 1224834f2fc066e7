"""The changes log as its readers see it: every config change, newest first."""

from __future__ import annotations

from typing import Any

from benchwarmers.bench.state import BenchState
from benchwarmers.store import changes


async def list_changes(state: BenchState, *, limit: int = 100, subject: str | None = None) -> list[dict[str, Any]]:
    async with state.read() as conn:
        return await changes.list_changes(conn, limit=limit, subject=subject)
