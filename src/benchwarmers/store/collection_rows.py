"""Collection rows.

A collection's tag rules (`require_tags`, `exclude_tags`: the model tags its seats must or must not carry)
are kept in the settings row `collection_tag_rules`, {name: {"require": [...], "exclude": [...]}}, not in
a column: issue #35 adds no migration for them. Reads merge them in, writes split them out, so callers
see one collection either way.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from sqlalchemy import Row, delete, select
from sqlalchemy.ext.asyncio import AsyncConnection

from benchwarmers.store.gateway_settings import get_setting, put_setting
from benchwarmers.store.records import Collection, CollectionFields
from benchwarmers.store.schema import collections

TAG_RULES_KEY = "collection_tag_rules"
_RULES = {"require_tags": "require", "exclude_tags": "exclude"}


def collection_fields(collection: Mapping[str, Any]) -> CollectionFields:
    """The fields the user sets (what an export holds) from a stored collection or its row."""
    return {
        "name": collection["name"],
        "description": collection["description"],
        "tags": collection["tags"],
        "members": collection["members"],
        "shape": collection["shape"],
        "reply": collection["reply"],
        "merger": collection["merger"],
        "max_explorers": collection["max_explorers"],
        "max_calls": collection["max_calls"],
        "auto_swap": bool(collection.get("auto_swap", False)),
        "require_tags": list(collection.get("require_tags") or []),
        "exclude_tags": list(collection.get("exclude_tags") or []),
        "daily_panels": collection.get("daily_panels"),
        "daily_tokens": collection.get("daily_tokens"),
        "stand_ins": bool(collection.get("stand_ins", False)),
    }


def _collection(row: Row[Any], rules: Mapping[str, Any]) -> Collection:
    data = row._asdict()
    mine = rules.get(data["name"]) or {}
    data.update({field: mine.get(key, []) for field, key in _RULES.items()})
    return {**collection_fields(data), "created_at": data["created_at"]}


async def _rules(conn: AsyncConnection) -> dict[str, Any]:
    stored = await get_setting(conn, TAG_RULES_KEY, {})
    return dict(stored) if isinstance(stored, Mapping) else {}


async def _put_rules(conn: AsyncConnection, name: str, values: Mapping[str, Any]) -> dict[str, Any]:
    """Split the tag rules out of `values` into the settings row; the rest is the row's columns."""
    given = {field: values[field] for field in _RULES if field in values}
    if not given:
        return dict(values)
    rules = await _rules(conn)
    mine = {**(rules.get(name) or {}), **{_RULES[field]: list(tags or []) for field, tags in given.items()}}
    mine = {key: tags for key, tags in mine.items() if tags}
    if mine:
        rules[name] = mine
    else:
        rules.pop(name, None)
    await put_setting(conn, TAG_RULES_KEY, rules)
    return {key: value for key, value in values.items() if key not in _RULES}


async def list_collections(conn: AsyncConnection) -> list[Collection]:
    rules = await _rules(conn)
    rows = await conn.execute(select(collections).order_by(collections.c.name))
    return [_collection(r, rules) for r in rows]


async def get_collection(conn: AsyncConnection, name: str) -> Collection | None:
    row = (await conn.execute(select(collections).where(collections.c.name == name))).first()
    return _collection(row, await _rules(conn)) if row else None


async def insert_collection(conn: AsyncConnection, values: CollectionFields) -> None:
    now = time.time()
    columns = await _put_rules(conn, values["name"], values)
    await conn.execute(collections.insert().values(created_at=now, updated_at=now, **columns))


async def update_collection(conn: AsyncConnection, name: str, values: Mapping[str, Any]) -> None:
    columns = await _put_rules(conn, name, values)
    await conn.execute(collections.update().where(collections.c.name == name).values(updated_at=time.time(), **columns))


async def delete_collection(conn: AsyncConnection, name: str) -> None:
    await _put_rules(conn, name, {"require_tags": [], "exclude_tags": []})
    await conn.execute(delete(collections).where(collections.c.name == name))
