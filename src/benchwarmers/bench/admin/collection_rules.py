"""Collections: validation rules (shared by CLI, API and dashboard) and the stored operations."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from benchwarmers.bench.budget_rules import check_budget
from benchwarmers.bench.names import collection_name, suggest, unknown_shape
from benchwarmers.bench.panels.seating import tag_gap
from benchwarmers.errors import InvalidRequest
from benchwarmers.store.records import CollectionFields

NAME = re.compile(r"^[a-z0-9-]+$")
TAG = re.compile(r"^[a-z0-9-]+$")
MAX_DESCRIPTION = 300
MAX_TAGS = 8
REPLIES = ("all", "merged", "pick")
DEFAULT_MAX_EXPLORERS = 2
DEFAULT_MAX_CALLS = 5


def validate_collection(data: Mapping[str, Any], roster: Iterable[str], shapes: Iterable[str]) -> CollectionFields:
    """Check a collection as the user gave it; return it normalised. Raises InvalidRequest saying what."""
    roster = set(roster)
    name = collection_name(str(data.get("name") or ""))
    if not NAME.match(name) or len(name) > 64:
        raise InvalidRequest(
            f"collection name {name!r} is not valid: use lower-case letters, digits and '-' (at most 64)",
            param="name",
        )
    description = str(data.get("description") or "").strip()
    if len(description) > MAX_DESCRIPTION:
        raise InvalidRequest(
            f"description is {len(description)} characters; at most {MAX_DESCRIPTION} are allowed",
            param="description",
        )
    tags = _tags(data, "tags")
    require_tags = _tags(data, "require_tags")
    exclude_tags = _tags(data, "exclude_tags")
    both = sorted(set(require_tags) & set(exclude_tags))
    if both:
        raise InvalidRequest(
            f"tag(s) {', '.join(both)} are both required and excluded: no model could sit; drop one",
            param="exclude_tags",
        )
    members = list(dict.fromkeys(str(m) for m in data.get("members") or []))
    if not members:
        raise InvalidRequest("a collection needs at least one member (--member ALIAS)", param="members")
    for member in members:
        if member not in roster:
            raise InvalidRequest(
                f"member {member!r} is not on the roster.{suggest(member, roster)} See `benchwarmers model list`.",
                param="members",
            )
    shape = data.get("shape") or None
    shapes = list(shapes)
    if shape is not None and shape not in shapes:
        raise InvalidRequest(unknown_shape(shape, shapes), param="shape")
    reply = data.get("reply") or "all"
    if reply not in REPLIES:
        raise InvalidRequest(f"reply must be 'all', 'merged' or 'pick', not {reply!r}", param="reply")
    merger = data.get("merger") or None
    if merger is not None and merger not in roster:
        raise InvalidRequest(f"merger {merger!r} is not on the roster.{suggest(merger, roster)}", param="merger")
    limits: dict[str, int | None] = {}
    for field in ("max_explorers", "max_calls"):
        value = data.get(field)
        if value is not None and (not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= 20):
            raise InvalidRequest(f"{field} must be a whole number from 0 to 20", param=field)
        limits[field] = value
    switches: dict[str, bool] = {}
    for field in ("auto_swap", "stand_ins"):
        value = data.get(field, False)
        if value is None:
            value = False
        if not isinstance(value, bool):
            raise InvalidRequest(f"{field} must be true or false", param=field)
        switches[field] = value
    return {
        "name": name,
        "description": description,
        "tags": tags,
        "members": members,
        "shape": shape,
        "reply": reply,
        "merger": merger,
        "max_explorers": limits["max_explorers"],
        "max_calls": limits["max_calls"],
        "auto_swap": switches["auto_swap"],
        "stand_ins": switches["stand_ins"],
        "require_tags": require_tags,
        "exclude_tags": exclude_tags,
        "daily_panels": check_budget(data.get("daily_panels"), "daily_panels"),
        "daily_tokens": check_budget(data.get("daily_tokens"), "daily_tokens"),
    }


def _tags(data: Mapping[str, Any], field: str) -> list[str]:
    """A list of tags (a collection's own, or the model tags it requires or excludes), checked."""
    given = data.get(field) or []
    if isinstance(given, str) or not isinstance(given, list | tuple):
        raise InvalidRequest(f"{field} is a list of tags", param=field)
    tags = list(dict.fromkeys(str(t).strip() for t in given))
    if len(tags) > MAX_TAGS:
        raise InvalidRequest(f"{len(tags)} {field} given; at most {MAX_TAGS} are allowed", param=field)
    for tag in tags:
        if not TAG.match(tag):
            raise InvalidRequest(f"tag {tag!r} is not one lower-case word (letters, digits, '-')", param=field)
    return tags


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


def explorer_seats(collection: CollectionFields, defaults: Mapping[str, int]) -> int:
    """Explorer seats a text request on this collection gets (GET /v1/models shows it)."""
    max_explorers = collection.get("max_explorers")
    max_calls = collection.get("max_calls")
    if max_explorers is None:
        max_explorers = defaults.get("max_explorers", DEFAULT_MAX_EXPLORERS)
    if max_calls is None:
        max_calls = defaults.get("max_calls", DEFAULT_MAX_CALLS)
    return max(0, min(max_explorers, max_calls - len(collection["members"])))
