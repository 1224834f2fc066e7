"""A models.dev entry and a bench whose facts come from it: the sources the catalog weighs."""

from __future__ import annotations

from typing import Any

from tests.support.benchserver import BenchServer

# models.dev (bundled, openrouter) says: window 65,536, output 131,072, family llama, free.
OR_ID = "meta-llama/llama-3.3-70b-instruct:free"


ALIAS = f"or/{OR_ID}"


def entry(model_id: str = OR_ID, window: int | None = 131_072) -> dict[str, Any]:
    listed: dict[str, Any] = {
        "id": model_id,
        "name": model_id,
        "architecture": {"input_modalities": ["text"], "output_modalities": ["text"]},
        "pricing": {"prompt": "0", "completion": "0"},
    }
    if window is not None:
        listed["context_length"] = window
    return listed


def serve_listing(fake: Any, *entries: dict[str, Any]) -> None:
    fake.listing("/v1/models", {"object": "list", "data": list(entries)})


def setup(server: BenchServer, fake: Any, *entries: dict[str, Any]) -> None:
    serve_listing(fake, *entries)

    async def add(bench):
        await bench.endpoints.add_endpoint("or", fake.base_url, "openrouter", free_tier=True)
        await bench.endpoints.refresh_endpoint("or")

    server.admin(add)


def refresh(server: BenchServer) -> None:
    server.admin(lambda bench: bench.endpoints.refresh_endpoint("or"))


def fact(server: BenchServer, name: str, alias: str = ALIAS) -> dict[str, Any]:
    return server.admin(lambda bench: bench.models.model(alias))["facts"].get(name)
