"""What each model got wrong: the claims callers' verdicts marked false in its answers, newest first,
each with the call it was made in (so the answer can be read again).

The leaderboard averages false claims per answer; this is the ledger behind that number. Only
current verdicts count (a replaced verdict's claims are history), merges included: a merger that
invents a claim got it wrong too. After a purge a claim's text reads `[purged]`.
"""

from __future__ import annotations

from typing import Any

from benchwarmers.bench.bounds import DEFAULT_LIMIT as DEFAULT_LIMIT
from benchwarmers.bench.bounds import MAX_LIMIT as MAX_LIMIT
from benchwarmers.bench.names import suggest
from benchwarmers.bench.state import BenchState
from benchwarmers.errors import NotFound
from benchwarmers.store import evidence


async def wrong_claims(state: BenchState, alias: str, limit: int = DEFAULT_LIMIT) -> list[dict[str, Any]]:
    """The claims marked false in `alias`'s answers, newest verdict first, at most `limit`.

    A model no longer on the roster still has its ledger while its seats are in the log."""
    snapshot = await state.snapshot()
    async with state.read() as conn:
        claims = await evidence.false_claims(conn, alias, limit)
        if not claims and alias not in snapshot.models and not await evidence.has_seats(conn, alias):
            raise NotFound(
                f"no model {alias!r} on the roster or in the log.{suggest(alias, snapshot.models)}", param="alias"
            )
    return claims
