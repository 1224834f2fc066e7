"""Collections: the rules that need the config (the roster, the shapes), shared by CLI, API and dashboard,
and what is read off a collection (warnings, explorer seats, the catalogue a refusal shows)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, cast

from benchwarmers.bench.names import suggest, unknown_shape
from benchwarmers.bench.panels.seating import tag_gap
from benchwarmers.errors import InvalidRequest
from benchwarmers.nouns.collections import REPLIES as REPLIES
from benchwarmers.nouns.collections import Collection
from benchwarmers.nouns.gateway import GatewaySettings
from benchwarmers.store.records import CollectionFields


def validate_collection(
    data: Mapping[str, Any] | Collection, roster: Iterable[str], shapes: Iterable[str]
) -> CollectionFields:
    """A collection as the user gave it, checked against the config: its members and merger on the
    roster, its shape known (its fields and their rules are the model's, nouns/collections.py).
    Returns it normalised; raises InvalidRequest saying what."""
    collection = data if isinstance(data, Collection) else Collection.parse(dict(data))
    roster = set(roster)
    for member in collection.members:
        if member not in roster:
            raise InvalidRequest(
                f"member {member!r} is not on the roster.{suggest(member, roster)} See `benchwarmers model list`.",
                param="members",
            )
    shapes = list(shapes)
    if collection.shape is not None and collection.shape not in shapes:
        raise InvalidRequest(unknown_shape(collection.shape, shapes), param="shape")
    merger = collection.merger
    if merger is not None and merger not in roster:
        raise InvalidRequest(f"merger {merger!r} is not on the roster.{suggest(merger, roster)}", param="merger")
    return cast(CollectionFields, collection.model_dump())


def tag_refusal(collection: CollectionFields, tags: Iterable[str]) -> str | None:
    """Why a model carrying `tags` may not sit on this collection (an excluded tag, a required one missing),
    or None. Seating (bench/panels/seating.py) applies the same rule to members and explorers."""
    return tag_gap(tags, collection.get("require_tags") or (), collection.get("exclude_tags") or ())


def tag_warnings(collection: CollectionFields, tags: Mapping[str, Iterable[str]]) -> list[str]:
    """A warning for each member its tag rules keep off the panel (a model's tags can change with a refresh,
    so seating skips such a member rather than the collection being refused)."""
    return [
        f"{alias} will not be seated on bench/{collection['name']}: {gap}"
        for alias in collection["members"]
        if (gap := tag_refusal(collection, tags.get(alias, ()))) is not None
    ]


def priced_warnings(collection: CollectionFields, free: Mapping[str, bool | None]) -> list[str]:
    """A warning for each member (and the merger) the catalog says is not free: the bench's own seats
    are free explorers, so a priced member is the one place a panel spends money (unknown says nothing)."""
    merger = collection.get("merger")
    named = [*collection["members"], *([merger] if merger else [])]
    return [
        f"{alias} is priced (the catalog says it is not free): every panel on bench/{collection['name']} pays "
        "for its calls"
        for alias in dict.fromkeys(named)
        if free.get(alias) is False
    ]


def explorer_seats(collection: CollectionFields, gateway: GatewaySettings) -> int:
    """Explorer seats a text request on this collection gets (GET /v1/models shows it)."""
    max_explorers = collection.get("max_explorers")
    max_calls = collection.get("max_calls")
    if max_explorers is None:
        max_explorers = gateway.max_explorers
    if max_calls is None:
        max_calls = gateway.max_calls
    return max(0, min(max_explorers, max_calls - len(collection["members"])))
