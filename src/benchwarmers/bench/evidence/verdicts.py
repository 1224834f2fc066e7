"""Verdicts: the caller's judgement of one seat, the bench's only evidence.

A verdict replaces the caller's earlier one on the same call (the old one stays in the history);
posting the same verdict twice records nothing. Verdicts on a merge say nothing of the merger as a
seat, so they do not move the seat history's counts. What a verdict is: nouns/verdicts.py.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection

from benchwarmers.bench.caller import Caller
from benchwarmers.bench.state import BenchState
from benchwarmers.errors import Forbidden, InvalidRequest, NotFound
from benchwarmers.nouns.verdicts import FIELDS, Verdict
from benchwarmers.store import calls

# Who gave a verdict: a person (through the API, the CLI, the MCP server) or the suite's grading.
HUMAN, SUITE = "human", "suite"


class Verdicts:
    def __init__(self, state: BenchState) -> None:
        self.state = state

    async def record(self, data: Verdict | Any, caller: Caller) -> dict[str, Any]:
        clean = (data if isinstance(data, Verdict) else Verdict.parse(data)).model_dump()
        async with self.state.write() as conn:
            seat = await calls.get_seat(conn, clean["call"])
            if seat is None:
                raise NotFound(
                    f"no call {clean['call']!r}: use a call id from a panel's bench.seats",
                    param="call",
                    code="call_not_found",
                )
            if caller.judges_own_only and seat["caller"] != caller.name:
                raise Forbidden("this gateway key may judge only the calls it made", param="call", code="not_your_call")
            if seat["status"] in calls.NOT_CALLED:
                why = "was retired for failing" if seat["status"] == calls.RETIRED else f"was {seat['status']}"
                raise InvalidRequest(
                    f"call {clean['call']!r} was not called: {seat['alias']} {why}, so there is no answer to judge",
                    param="call",
                    code="seat_not_called",
                )
            if seat["status"] == calls.FAILED:
                raise InvalidRequest(
                    f"call {clean['call']!r} has status {seat['status']!r}: {seat['alias']} failed "
                    f"({seat['error_kind'] or 'error'}), so there is no answer to judge; failed seats need no verdict",
                    param="call",
                    code="seat_failed",
                )
            current = await calls.current_verdict(conn, clean["call"])
            same = current is not None and all(current[k] == clean[k] for k in FIELDS[1:])
            if same:
                return {"call": clean["call"], "recorded": False, "replaced": False}
            await calls.insert_verdict(conn, {**clean, "caller": caller.name})
        self.state.metrics.verdict(clean["useful"])
        if seat["seat"] in calls.SEATED_KINDS:
            replaced = bool(current["useful"]) if current is not None else None
            self.state.history.judged(seat["alias"], seat["shape"], clean["useful"], replaced)
        return {"call": clean["call"], "recorded": True, "replaced": current is not None}


async def write_verdict(conn: AsyncConnection, verdict: dict[str, Any], source: str) -> tuple[bool, bool | None]:
    """Record a verdict on a call in the caller's open transaction; the one it replaces stays in the
    history. A suite verdict never replaces a person's (a person's always wins); it does replace the
    suite's own earlier one. Returns (written, the useful flag of the verdict it replaced or None)."""
    current = await calls.current_verdict(conn, verdict["call"])
    if source == SUITE and current is not None and current["source"] != SUITE:
        return False, None
    await calls.insert_verdict(conn, {**verdict, "source": source})
    return True, bool(current["useful"]) if current is not None else None
