"""The call log as its readers see it: panels with their seats and verdicts, the owed count, the
newest ids (what the dashboard polls), and the whole log as rows for exports."""

from __future__ import annotations

import time
from collections.abc import AsyncGenerator
from typing import Any

from benchwarmers.bench.caller import Caller
from benchwarmers.bench.evidence.board import evidence_line
from benchwarmers.bench.names import suggest
from benchwarmers.bench.state import BenchState
from benchwarmers.errors import NotFound
from benchwarmers.store import calls, counts
from benchwarmers.store.evidence import has_seats, iter_judged, newest_verdict
from benchwarmers.store.records import ListedPanel

PROMPT_CHARS = 600  # a prompt's opening, as the log shows it beside its panel
RUNNING_FOR = 3600.0  # a reserved panel older than this is not running: its process stopped


class CallLog:
    def __init__(self, state: BenchState) -> None:
        self.state = state

    async def panels(
        self,
        *,
        limit: int,
        before: float | None = None,
        after: float | None = None,
        owed: bool = False,
        caller: Caller | None = None,
        **filters: str | None,
    ) -> list[ListedPanel]:
        """Newest first; a key that judges only its own calls sees only its own panels. `filters`:
        `collection`, `alias` (a seat's model), `status` (a seat's), `asked_by` (the caller), `text`."""
        async with self.state.read() as conn:
            return await calls.list_panels(
                conn, limit=limit, before=before, after=after, owed=owed, **_filters(caller, filters)
            )

    async def check_names(self, *, collection: str | None = None, alias: str | None = None) -> None:
        """Refuse a collection or model that is neither configured nor in the log, with its close matches
        (a typo in a filter should not read as an empty log)."""
        snapshot = await self.state.snapshot()
        async with self.state.read() as conn:
            if (
                collection
                and collection not in snapshot.collections
                and not await calls.count_panels(conn, collection=collection)
            ):
                raise NotFound(
                    f"no collection bench/{collection}.{suggest(collection, snapshot.collections, prefix='bench/')}",
                    param="collection",
                )
            if alias and alias not in snapshot.models and not await has_seats(conn, alias):
                raise NotFound(
                    f"no model {alias!r} on the roster or in the log.{suggest(alias, snapshot.models)}", param="alias"
                )

    async def count(self, *, owed: bool = False, caller: Caller | None = None, **filters: str | None) -> int:
        """How many panels match the same filters as `panels`."""
        async with self.state.read() as conn:
            return await calls.count_panels(conn, owed=owed, **_filters(caller, filters))

    async def running(self, caller: Caller | None = None) -> list[dict[str, Any]]:
        """Panels whose seats are still running (reserved in the last RUNNING_FOR seconds), newest first,
        each with its prompt's opening."""
        async with self.state.read() as conn:
            rows = await calls.running_panels(conn, time.time() - RUNNING_FOR, caller=_own(caller))
        return [
            {"id": r["id"], "created": r["created_at"], "collection": r["collection"], "shape": r["shape"],
             "caller": r["caller"], "prompt": prompt_text(r["request"])}
            for r in rows
        ]  # fmt: skip

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

    async def export(self, kind: str) -> AsyncGenerator[dict[str, Any], None]:
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


def _filters(caller: Caller | None, filters: dict[str, str | None]) -> dict[str, Any]:
    """The log's filters as the store takes them: a key that judges only its own calls is held to them."""
    unknown = set(filters) - {"collection", "alias", "status", "asked_by", "text"}
    if unknown:
        raise TypeError(f"unknown call-log filter(s): {', '.join(sorted(unknown))}")
    own = _own(caller)
    return {
        "caller": own if own is not None else filters.get("asked_by"),
        "collection": filters.get("collection"),
        "alias": filters.get("alias"),
        "status": filters.get("status"),
        "text": filters.get("text"),
    }


def prompt_text(request: Any, limit: int = PROMPT_CHARS) -> str:
    """The request's last user message as plain text (images as `[image]`), cut to `limit` characters."""
    messages = (request or {}).get("messages") or []
    users = [m for m in messages if isinstance(m, dict) and m.get("role") == "user"] or messages[-1:]
    if not users:
        return ""
    content = users[-1].get("content") if isinstance(users[-1], dict) else None
    if isinstance(content, list):
        parts = [p.get("text", "") if p.get("type") == "text" else "[image]" for p in content if isinstance(p, dict)]
        content = "\n".join(parts)
    text = str(content or "")
    return text if len(text) <= limit else text[: limit - 1] + "…"


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
        "source": row.get("source") or "human",  # who judged: a person, or the suite (as `export evidence`)
        "current": row["current"],
        "at": row["created_at"],
    }
