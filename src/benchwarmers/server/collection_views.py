"""A collection as callers see it: with its explorer seats and combined window, and as `/v1/models` entries.

Shared by the admin API's collections, the wire APIs' `/v1/models` and the dashboard's pages.
"""

from __future__ import annotations

from typing import Any

from benchwarmers.bench.admin.collection_rules import REPLIES as REPLY_MODES
from benchwarmers.bench.admin.collection_rules import explorer_seats
from benchwarmers.bench.records import Collection
from benchwarmers.bench.services import Bench
from benchwarmers.bench.snapshot import Snapshot


def together(collection: Collection, snapshot: Snapshot) -> dict[str, Any]:
    members = [snapshot.models.get(alias) for alias in collection["members"]]
    windows = [m.window for m in members if m is not None and m.window]
    capabilities = ["text"]
    if members and all(m is not None and m.vision for m in members):
        capabilities.append("vision")
    return {"context_window": min(windows) if windows else None, "capabilities": capabilities}


def model_entries(collection: Collection, snapshot: Snapshot) -> list[dict[str, Any]]:
    """A collection as a model, then again in its other reply mode (for clients that only pick names)."""
    base = {
        "object": "model",
        "created": int(collection.get("created_at") or 0),
        "owned_by": "benchwarmers",
        "description": collection["description"],
        "tags": collection["tags"],
        "members": collection["members"],
        "shape": collection["shape"],
        "explorers": explorer_seats(collection, snapshot.gateway),
        "together": together(collection, snapshot),
    }
    own = collection["reply"]
    name = f"bench/{collection['name']}"
    others = [{"id": f"{name}:{mode}", **base, "reply": mode} for mode in REPLY_MODES if mode != own]
    return [{"id": name, **base, "reply": own}, *others]


async def collection_views(bench: Bench) -> list[dict[str, Any]]:
    """Each collection with what the gateway makes of it: explorer seats and combined window."""
    snapshot = await bench.snapshot()
    return [
        {**c, "explorers": explorer_seats(c, snapshot.gateway), "together": together(c, snapshot)}
        for c in await bench.collections.list_collections()
    ]
