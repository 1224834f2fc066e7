"""The records the store writes and reads, typed.

They are TypedDicts, not classes: a row goes to SQLAlchemy and a listing to orjson as the dict it
is, so a JSON body keeps exactly its keys and their order.
"""

from __future__ import annotations

from typing import TypedDict


class CollectionFields(TypedDict):
    """A collection as the user sets it, validated: what is written, logged and exported."""

    name: str
    description: str
    tags: list[str]
    members: list[str]
    shape: str | None  # None: decided per request
    reply: str  # all | merged
    merger: str | None
    max_explorers: int | None  # None: the gateway's limit
    max_calls: int | None


class Collection(CollectionFields):
    """A stored collection as it is read."""

    created_at: float
