"""Refreshing the catalog: models.dev live (cached, falling back to the bundled snapshot), a failed
source keeping its last good facts, `benchwarmers catalog refresh`, and endpoint presets."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from benchwarmers.bench.admin.refresh import SourceResult, refresh_all
from benchwarmers.bench.providers import models_dev_cache
from benchwarmers.bench.services import Bench
from benchwarmers.settings import Settings
from tests.support.catalog import OR_ID, entry

ALIAS = f"or/{OR_ID}"
LIVE = {
    "openrouter": {
        "id": "openrouter",
        "name": "OpenRouter",
        "env": ["OPENROUTER_API_KEY"],
        "npm": "@openrouter/ai-sdk-provider",
        "api": "https://openrouter.ai/api/v1",
        "models": {
            OR_ID: {
                "id": OR_ID,
                "name": "Llama 3.3 70B Instruct (free)",
                "family": "llama",
                "modalities": {"input": ["text", "image"], "output": ["text"]},
                "limit": {"context": 99_000, "output": 4_321},
                "cost": {"input": 0, "output": 0},
            }
        },
    }
}


@pytest.fixture
async def bench(tmp_path: Path) -> AsyncIterator[Bench]:
    async with Bench(Settings(home=tmp_path / "home"), actor="test") as opened:
        yield opened


async def add_or(bench: Bench, fake: Any, window: int | None = None) -> None:
    fake.listing("/v1/models", {"object": "list", "data": [entry(window=window)]})
    await bench.endpoints.add_endpoint("or", fake.base_url, "openrouter", free_tier=True)


async def facts(bench: Bench) -> dict[str, tuple[Any, str]]:
    model = await bench.models.model(ALIAS)
    return {name: (fact["value"], fact["source"]) for name, fact in model["facts"].items()}


async def test_models_dev_live_then_cached_then_bundled(bench, fake_upstream):
    await add_or(bench, fake_upstream)
    fake_upstream.listing("/api.json", LIVE)
    url = f"{fake_upstream.root_url}/api.json"
    results = await refresh_all(bench.state, models_dev_url=url)
    assert results == [
        SourceResult("models.dev", True, "live catalog saved"),
        SourceResult(
            "or",
            True,
            "1 models listed, 1 new, 0 gone",
            {"listed": 1, "added": 1, "gone": 0, "went_paid": 0, "retiring": 0, "possibly_changed": 0},
        ),
    ]
    assert orjson.loads(models_dev_cache(bench.settings).read_bytes()) == LIVE
    live = await facts(bench)
    assert (live["context_window"], live["output_cap"]) == ((99_000, "models.dev"), (4_321, "models.dev"))
    assert live["input_kinds"] == (["text"], "listing")  # the listing still beats models.dev

    # Unreachable, or answering something that is not a catalog: the cached copy stays in use.
    for status, payload in ((503, {"error": "down"}), (200, {"not": "a catalog"})):
        fake_upstream.listing("/api.json", payload, status=status)
        results = await refresh_all(bench.state, models_dev_url=url)
        assert results[0] == SourceResult("models.dev", False, "could not be fetched; using the cached catalog")
        assert results[1].ok
        assert await facts(bench) == live
    assert orjson.loads(models_dev_cache(bench.settings).read_bytes()) == LIVE

    # No cache and no network: the snapshot bundled with the models-dev package.
    models_dev_cache(bench.settings).unlink()
    results = await refresh_all(bench.state, models_dev_url=url)
    assert results[0] == SourceResult("models.dev", False, "could not be fetched; using the bundled catalog")
    assert (await facts(bench))["context_window"] == (65_536, "models.dev")
    results = await refresh_all(bench.state, models_dev_url=None)
    assert results[0] == SourceResult("models.dev", True, "not fetched; using the bundled catalog")


async def test_a_failed_listing_keeps_the_last_good_facts(bench, fake_upstream):
    await add_or(bench, fake_upstream, window=131_072)
    await refresh_all(bench.state, models_dev_url=None)
    before = await bench.models.model(ALIAS)

    fake_upstream.listing("/v1/models", {"error": {"message": "Service Unavailable"}}, status=503)
    results = await refresh_all(bench.state, models_dev_url=None)
    assert results[1] == SourceResult("or", False, "upstream error (503): Service Unavailable")
    fake_upstream.listing("/v1/models", {"models": "not a list"})
    results = await refresh_all(bench.state, models_dev_url=None)
    assert results[1] == SourceResult(
        "or",
        False,
        "upstream error: the model listing could not be read: not a model listing: expected a list under 'data'",
    )
    after = await bench.models.model(ALIAS)
    assert after == before  # same facts, same sources, same learned_at; not gone
    assert after["status"] == "ok"
    (endpoint,) = await bench.endpoints.list_endpoints()
    assert endpoint["refresh_error"] == results[1].detail


@pytest.fixture
def cli(cli, monkeypatch):
    for name in ("OPENROUTER_API_KEY", "GROQ_API_KEY", "CLOUDFLARE_ACCOUNT_ID", "CLOUDFLARE_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    return cli


def test_catalog_refresh_command(cli, fake_upstream):
    fake_upstream.listing("/v1/models", {"object": "list", "data": [entry(window=131_072)]})
    fake_upstream.listing("/api.json", LIVE)
    assert cli("endpoint", "add", "or", "--base-url", fake_upstream.base_url, "--kind", "openrouter")[0] == 0
    url = f"{fake_upstream.root_url}/api.json"
    assert cli("catalog", "refresh", "--models-dev-url", url) == (
        0,
        "models.dev: live catalog saved\nor: 1 models listed, 1 new, 0 gone\n",
    )
    assert cli("catalog", "refresh", "--no-models-dev", "-e", "or") == (
        0,
        "models.dev: not fetched; using the cached catalog\nor: 1 models listed, 0 new, 0 gone\n",
    )
    # One endpoint down: the others are still refreshed, the command says which failed and exits 1.
    assert cli("endpoint", "add", "off", "--base-url", "http://127.0.0.1:9/v1")[0] == 0
    code, out = cli("catalog", "refresh", "--no-models-dev")
    lines = out.splitlines()
    assert code == 1
    assert lines[0] == "models.dev: not fetched; using the cached catalog"
    assert lines[1].startswith("off: failed: connection failed")
    assert lines[2] == "or: 1 models listed, 0 new, 0 gone"


def test_endpoint_presets(cli, fake_upstream, monkeypatch):
    assert cli("endpoint", "add", "or", "--preset", "openrouter") == (
        0,
        "added endpoint or (openrouter, https://openrouter.ai/api/v1, key: $OPENROUTER_API_KEY)\n"
        "next: benchwarmers endpoint refresh or\n",
    )
    code, out = cli("endpoint", "add", "groq", "--preset", "groq", "--base-url", fake_upstream.base_url)
    assert (code, out.splitlines()[0]) == (
        0,
        f"added endpoint groq (groq, {fake_upstream.base_url}, key: $GROQ_API_KEY)",
    )
    code, out = cli("endpoint", "add", "mine", "--preset", "groq", "--api-key", "gsk-secret-0042", "--no-free-tier")
    assert (code, out.splitlines()[0]) == (0, "added endpoint mine (groq, https://api.groq.com/openai/v1, key: …0042)")
    listed = {e["name"]: e for e in orjson.loads(cli("endpoint", "list", "--json")[1])}
    assert [(e["kind"], e["api_key_env"], e["free_tier"]) for e in listed.values()] == [
        ("groq", "GROQ_API_KEY", True),
        ("groq", None, False),
        ("openrouter", "OPENROUTER_API_KEY", False),
    ]
    assert cli("endpoint", "add", "x", "--preset", "nope") == (
        1,
        "error: no preset 'nope'; presets are: openrouter, groq, cerebras, google, mistral, nvidia, github, "
        "cloudflare, ollama, lmstudio, llamacpp, vllm, llamafile, cliproxy, llm\n",
    )
    assert cli("endpoint", "add", "x") == (
        1,
        "error: give --base-url, or --preset with one of: openrouter, groq, cerebras, google, mistral, nvidia, "
        "github, cloudflare, ollama, lmstudio, llamacpp, vllm, llamafile, cliproxy, llm\n",
    )
    assert cli("endpoint", "add", "cf", "--preset", "cloudflare") == (
        1,
        "error: preset 'cloudflare' needs CLOUDFLARE_ACCOUNT_ID set (its base URL is "
        "https://api.cloudflare.com/client/v4/accounts/${CLOUDFLARE_ACCOUNT_ID}/ai/v1), or give --base-url\n",
    )
    monkeypatch.setenv("CLOUDFLARE_ACCOUNT_ID", "acc123")
    code, out = cli("endpoint", "add", "cf", "--preset", "cloudflare")
    assert code == 0
    assert out.splitlines()[0] == (
        "added endpoint cf (openai, https://api.cloudflare.com/client/v4/accounts/acc123/ai/v1, "
        "key: $CLOUDFLARE_API_KEY)"
    )
    code, out = cli("endpoint", "add", "local", "--preset", "ollama")
    assert (code, out.splitlines()[0]) == (0, "added endpoint local (ollama, http://127.0.0.1:11434/v1, key: no key)")
