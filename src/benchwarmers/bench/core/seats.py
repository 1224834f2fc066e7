"""How many seats a panel has: a collection's limits over the gateway's, and the explorers beside
its members (seating fills them, the suite and the reports count them)."""

from __future__ import annotations

from benchwarmers.nouns.gateway import GatewaySettings
from benchwarmers.store.records import CollectionFields


def explorer_count(members: int, max_explorers: int = 2, max_calls: int = 5) -> int:
    """Explorer seats beside `members` called members. Nominees are the caller's extra calls: they
    never take an explorer's seat, or every `with` would cost the bench what it learns."""
    return max(0, min(max_explorers, max_calls - members))


def seat_limits(collection: CollectionFields, gateway: GatewaySettings) -> tuple[int, int]:
    max_explorers = collection.get("max_explorers")
    max_calls = collection.get("max_calls")
    return (
        gateway.max_explorers if max_explorers is None else max_explorers,
        gateway.max_calls if max_calls is None else max_calls,
    )
