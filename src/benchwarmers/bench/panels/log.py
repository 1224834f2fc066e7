"""The call log as its readers see it: panels with their seats and verdicts, the owed count, the
newest ids (what the dashboard polls), and the whole log as rows for exports."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from benchwarmers.bench.caller import Caller
from benchwarmers.bench.evidence.board import evidence_line
from benchwarmers.bench.state import BenchState
from benchwarmers.errors import NotFound
from benchwarmers.store import calls, counts
from benchwarmers.store.evidence import iter_judged, newest_verdict
from benchwarmers.store.records import ListedPanel


class CallLog:
    def __init__(self, state: BenchState) -> None:
        self.state = state

    async def panels(
        self,
        *,
        limit: int,
        before: float | None = None,
        owed: bool = False,
        caller: Caller | None = None,
    ) -> list[ListedPanel]:
        """Newest first; a key that judges only its own calls sees only its own panels."""
        async with self.state.read() as conn:
            return await calls.list_panels(conn, limit=limit, before=before, owed=owed, caller=_own(caller))

    async def panel(self, panel_id: str, caller: Caller | None = None) -> ListedPanel:
        async with self.state.read() as conn:
            found = await calls.list_panels(conn, limit=1, panel_id=panel_id, caller=_own(caller))
        if not found:
            raise NotFound(f"no panel {panel_id!r}", param="panel_id", code="panel_not_found")
        return found[0]

    async def verdict_history(self, call: str) -> list[dict[str, Any]]:
        """Every verdict given on a call, oldest first: the current one and those it replaced."""
        async with self.state.read() as conn:
            return await calls.verdict_history(conn, call)

    async def owed_count(self) -> int:
        async with self.state.read() as conn:
            return await counts.owed_count(conn)

    async def head(self, limit: int) -> dict[str, Any]:
        """The newest panel ids and the newest verdict id: what changed since a page last looked."""
        async with self.state.read() as conn:
            return {"ids": await counts.newest_panel_ids(conn, limit), "verdict": await newest_verdict(conn)}

    async def export(self, kind: str) -> AsyncIterator[dict[str, Any]]:
        """Every line of one export: `calls` (one seat each), `verdicts`, or `evidence` (one judged
        seated seat each). Requests come as stored: images only as placeholders."""
        async with self.state.read() as conn:
            if kind == "evidence":
                async for row in iter_judged(conn):
                    yield evidence_line(row)
            elif kind == "calls":
                async for row in calls.iter_seats(conn):
                    yield seat_line(row)
            else:
                async for row in calls.iter_verdicts(conn):
                    yield verdict_line(row)


def _own(caller: Caller | None) -> str | None:
    return caller.name if caller is not None and caller.judges_own_only else None


def seat_line(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "call": row["call"],
        "panel": row["panel_id"],
        "collection": row["collection"],
        "seat": row["seat"],
        "alias": row["alias"],
        "endpoint": row["endpoint"],
        "shape": row["shape"],
        "status": row["status"],
        "seconds": row["seconds"],
        "answer": row["answer"],
        "error": row["error"],
        "usage": row["usage"],
        "caller": row["caller"],
        "at": row["created_at"],
        "request": row["request"],
    }


def verdict_line(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "call": row["call"],
        "panel": row["panel_id"],
        "alias": row["alias"],
        "shape": row["shape"],
        "useful": row["useful"],
        "note": row["note"],
        "real": row["real"],
        "false": row["false"],
        "caller": row["caller"],
        "current": row["current"],
        "at": row["created_at"],
    }
