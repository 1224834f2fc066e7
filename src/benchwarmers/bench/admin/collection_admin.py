"""Collections as the user manages them: create, edit, replace, remove, import. What a collection is:
nouns/collections.py; the rules that need the config: `collection_rules`. Every change is logged."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from benchwarmers.bench.admin.collection_rules import priced_warnings, tag_warnings, validate_collection
from benchwarmers.bench.names import collection_name, suggest
from benchwarmers.bench.state import BenchState
from benchwarmers.errors import Conflict, NotFound
from benchwarmers.nouns.collections import Collection
from benchwarmers.store import collection_rows
from benchwarmers.store.changes import record_change
from benchwarmers.store.records import Collection as StoredCollection
from benchwarmers.store.records import CollectionFields


class Collections:
    def __init__(self, state: BenchState) -> None:
        self.state = state

    async def list_collections(self) -> list[StoredCollection]:
        async with self.state.read() as conn:
            return await collection_rows.list_collections(conn)

    async def collection(self, name: str) -> StoredCollection:
        """One collection, named NAME or bench/NAME (as everywhere a collection is taken)."""
        name = collection_name(name)
        async with self.state.read() as conn:
            found = await collection_rows.get_collection(conn, name)
            if found is None:
                names = [c["name"] for c in await collection_rows.list_collections(conn)]
                raise NotFound(f"no collection named {name!r}.{suggest(name, names)}", param="name")
            return found

    async def warnings(self, collection: CollectionFields) -> list[str]:
        """What a user should know about a collection just saved, though it is valid: priced members, and
        members its tag rules keep off the panel."""
        models = (await self.state.snapshot()).models
        return priced_warnings(collection, {alias: model.free for alias, model in models.items()}) + tag_warnings(
            collection, {alias: model.tags for alias, model in models.items()}
        )

    async def _validate(self, data: Mapping[str, Any] | Collection) -> CollectionFields:
        snapshot = await self.state.snapshot()
        return validate_collection(data, snapshot.models, snapshot.shapes)

    async def add_collection(
        self, data: Mapping[str, Any] | Collection, *, actor: str | None = None
    ) -> CollectionFields:
        clean = await self._validate(data)
        async with self.state.write() as conn:
            if await collection_rows.get_collection(conn, clean["name"]):
                raise Conflict(
                    f"collection {clean['name']!r} exists already; use `collection edit`",
                    param="name",
                    code="collection_exists",
                )
            await collection_rows.insert_collection(conn, clean)
            await record_change(
                conn,
                actor=actor or self.state.actor,
                subject="collection",
                name=clean["name"],
                action="create",
                after=clean,
            )
        return clean

    async def edit_collection(
        self, name: str, changes: Mapping[str, Any], *, actor: str | None = None, replace: bool = False
    ) -> CollectionFields:
        """Change the fields given (None = leave as is); `replace` takes `changes` as the whole new
        collection instead, so a field left out or None is cleared (the dashboard's form)."""
        before = await self.collection(name)
        name = before["name"]
        given = {k: v for k, v in changes.items() if v is not None}
        clean = await self._validate({**({} if replace else before), **given, "name": name})
        async with self.state.write() as conn:
            await collection_rows.update_collection(conn, name, {k: v for k, v in clean.items() if k != "name"})
            await record_change(
                conn,
                actor=actor or self.state.actor,
                subject="collection",
                name=name,
                action="update",
                before=before,
                after=clean,
            )
        return clean

    async def remove_collection(self, name: str, *, actor: str | None = None) -> None:
        before = await self.collection(name)
        name = before["name"]
        async with self.state.write() as conn:
            await collection_rows.delete_collection(conn, name)
            await record_change(
                conn, actor=actor or self.state.actor, subject="collection", name=name, action="delete", before=before
            )

    async def import_collections(self, items: Sequence[Mapping[str, Any]]) -> dict[str, int]:
        """Create or replace each collection; all or nothing."""
        snapshot = await self.state.snapshot()
        clean = [validate_collection(item, snapshot.models, snapshot.shapes) for item in items]
        created = updated = 0
        async with self.state.write() as conn:
            for item in clean:
                before = await collection_rows.get_collection(conn, item["name"])
                if before is None:
                    await collection_rows.insert_collection(conn, item)
                    created += 1
                elif collection_rows.collection_fields(before) != item:
                    await collection_rows.update_collection(
                        conn, item["name"], {k: v for k, v in item.items() if k != "name"}
                    )
                    updated += 1
                else:
                    continue
                await record_change(
                    conn,
                    actor=self.state.actor,
                    subject="collection",
                    name=item["name"],
                    action="create" if before is None else "update",
                    before=before,
                    after=item,
                )
        return {"created": created, "updated": updated, "unchanged": len(clean) - created - updated}
