"""`GET /v1/models`: the collections this caller may use, as models (OpenAI's list, or Anthropic's page)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from fastapi import Request
from starlette.responses import Response

from benchwarmers.bench.snapshot import Snapshot
from benchwarmers.errors import NotFound
from benchwarmers.server.collection_views import model_entries
from benchwarmers.server.deps import BenchDep, GatewayCaller, gateway_router
from benchwarmers.server.responses import json_response
from benchwarmers.server.schemas import error_responses

router = gateway_router()


def _listed(caller: Any, snapshot: Snapshot) -> list[dict[str, Any]]:
    data = []
    for name, collection in snapshot.collections.items():
        if caller.collections is None or name in caller.collections:
            data.extend(model_entries(collection, snapshot))
    return data


def _anthropic_entry(entry: dict[str, Any]) -> dict[str, Any]:
    """An entry with the fields of Anthropic's model object too (its SDKs send `anthropic-version`)."""
    created = datetime.fromtimestamp(entry["created"], UTC).isoformat().replace("+00:00", "Z")
    return {**entry, "type": "model", "display_name": entry["id"], "created_at": created}


@router.get("/v1/models")
async def list_models(request: Request, caller: GatewayCaller, bench: BenchDep) -> Response:
    snapshot = await bench.snapshot()
    data = _listed(caller, snapshot)
    if "anthropic-version" not in request.headers:
        return json_response({"object": "list", "data": data})
    # Anthropic's list is a page: one, holding every collection.
    data = [_anthropic_entry(entry) for entry in data]
    first, last = (data[0]["id"], data[-1]["id"]) if data else (None, None)
    return json_response({"object": "list", "data": data, "has_more": False, "first_id": first, "last_id": last})


@router.get("/v1/models/{model_id:path}", responses=error_responses(404))
async def retrieve_model(request: Request, model_id: str, caller: GatewayCaller, bench: BenchDep) -> Response:
    """One entry of `/v1/models` (what `client.models.retrieve(id)` reads); 404 for any other id."""
    snapshot = await bench.snapshot()
    found = next((entry for entry in _listed(caller, snapshot) if entry["id"] == model_id), None)
    if found is None:
        raise NotFound(
            f"the model {model_id!r} does not exist or you do not have access to it; GET /v1/models lists "
            "the collections this caller may use (bench/NAME, and bench/NAME:all, :merged, :pick)",
            param="model",
            code="model_not_found",
        )
    return json_response(_anthropic_entry(found) if "anthropic-version" in request.headers else found)
