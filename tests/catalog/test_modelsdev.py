"""models.dev facts from the bundled snapshot, a cached live copy, and the discover list."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import orjson
import pytest

from benchwarmers.catalog.facts import ListedModel
from benchwarmers.catalog.modelsdev import (
    HOST_PROVIDERS,
    KIND_PROVIDERS,
    MODELS_DEV_URL,
    ModelsDev,
    fetch_live,
    load_catalog,
    normalise_id,
    provider_for,
)

T = frozenset({"text"})
TI = frozenset({"text", "image"})


def model(mid: str, name: str, context: int | None, cost: tuple[float, float] | None, **extra: Any) -> dict:
    entry: dict[str, Any] = {
        "id": mid,
        "name": name,
        "attachment": False,
        "reasoning": False,
        "tool_call": True,
        "open_weights": True,
        "release_date": "2025-01-01",
        "last_updated": "2025-01-01",
        "modalities": {"input": extra.pop("inputs", ["text"]), "output": extra.pop("outputs", ["text"])},
        "limit": {"context": context, "output": 4096} if context else {"output": 4096},
        **extra,
    }
    if cost is not None:
        entry["cost"] = {"input": cost[0], "output": cost[1]}
    return entry


def provider(pid: str, models: list[dict], api: str | None = None) -> dict:
    entry = {
        "id": pid,
        "name": pid.title(),
        "env": [f"{pid.upper()}_API_KEY"],
        "npm": "x",
        "doc": "https://d",
    }
    if api:
        entry["api"] = api
    return {**entry, "models": {m["id"]: m for m in models}}


SMALL = {
    "alpha": provider(
        "alpha",
        [
            model("a-paid-big", "A Paid Big", 200000, (1.0, 2.0)),
            model("a-free-small", "A Free Small", 8192, (0, 0)),
            model("a-free-vision", "A Free Vision", 32768, (0, 0), inputs=["text", "image"]),
            model("a-old", "A Old", 999999, (0, 0), status="deprecated"),
            model("a-embed", "A Embed", 8192, (0, 0)),
            model("a-image-gen", "A Image Gen", 4096, (0, 0), outputs=["image"]),
        ],
        api="https://alpha.example/v1",
    ),
    "beta": provider(
        "beta",
        [
            model("b-free-big", "B Free Big", 131072, (0, 0)),
            model("b-no-window", "B No Window", None, None),
            model("b-free-same", "A Aa Same Window", 32768, (0, 0)),
        ],
    ),
}


@pytest.fixture(scope="module")
def snapshot() -> ModelsDev:
    return load_catalog()


# --- the bundled snapshot --------------------------------------------------------------------


def test_groq_llama(snapshot: ModelsDev) -> None:
    llama = snapshot.lookup("llama-3.3-70b-versatile", "https://api.groq.com/openai/v1")
    assert llama is not None
    assert (llama.context_window, llama.output_cap, llama.input_kinds) == (131072, 32768, T)
    assert (llama.free, llama.family, llama.deprecated) == (False, "llama", None)
    assert llama.price_prompt == pytest.approx(0.59e-6)  # models.dev is per million tokens
    assert llama.price_completion == pytest.approx(0.79e-6)


def test_openrouter_free(snapshot: ModelsDev) -> None:
    llama = snapshot.lookup("meta-llama/llama-3.3-70b-instruct:free", "openrouter")
    assert llama == ListedModel(
        model_id="meta-llama/llama-3.3-70b-instruct:free",
        context_window=65536,
        output_cap=131072,
        input_kinds=T,
        price_prompt=0.0,
        price_completion=0.0,
        free=True,
        family="llama",
        display_name="Llama 3.3 70B Instruct (free)",
    )
    gemma = snapshot.lookup("google/gemma-4-31b-it:free", "https://openrouter.ai/api/v1")
    assert gemma is not None
    assert (gemma.free, gemma.vision, gemma.family, gemma.context_window) == (True, True, "gemma", 262144)
    glm = snapshot.lookup("z-ai/glm-4.5-air:free", "openrouter")
    assert glm is not None and (glm.family, glm.free) == ("glm", True)  # models.dev "glm-air", folded


def test_vision_and_deprecated(snapshot: ModelsDev) -> None:
    scout = snapshot.lookup("meta-llama/llama-4-scout-17b-16e-instruct", "groq")
    assert scout is not None and scout.input_kinds == TI
    gemma2 = snapshot.lookup("gemma2-9b-it", "groq")
    assert gemma2 is not None and gemma2.deprecated == "deprecated"
    pixtral = snapshot.lookup("pixtral-12b", "mistral")
    assert pixtral is not None and pixtral.vision is True and pixtral.family == "mistral"


def test_match_kinds(snapshot: ModelsDev) -> None:
    assert snapshot.match("LLAMA-3.3-70B-Versatile", "groq").how == "provider"  # case-insensitive
    # Same id elsewhere: window and kinds carry over, price does not (it is per provider).
    elsewhere = snapshot.lookup("llama-3.3-70b-versatile", "https://my-proxy.example/v1")
    assert elsewhere is not None
    assert snapshot.match("llama-3.3-70b-versatile", "https://my-proxy.example/v1").provider_id == "groq"
    assert (elsewhere.context_window, elsewhere.price_prompt, elsewhere.free) == (131072, None, None)
    # Normalised: provider prefix, variant suffix and case go.
    found = snapshot.match("some-host/Llama-3.3-70B-Versatile:free", None)
    assert (found.provider_id, found.model_id, found.how) == ("groq", "llama-3.3-70b-versatile", "normalised")
    # A `:free` id finds its `:free` twin, and never borrows a price.
    twin = snapshot.match("qwen3-coder:free", "openrouter")
    assert (twin.model_id, twin.how) == ("qwen/qwen3-coder:free", "normalised")
    assert snapshot.lookup("qwen3-coder:free", "openrouter").free is None
    assert snapshot.lookup("no-such-model-anywhere", "groq") is None


def test_local_kinds(snapshot: ModelsDev) -> None:
    gemma = snapshot.lookup("gemma3:27b", "ollama")  # via ollama-cloud's matching tag names
    assert gemma is not None and (gemma.vision, gemma.context_window) == (True, 131072)
    coder = snapshot.lookup("qwen/qwen3-coder-30b", "lmstudio")
    assert coder is not None and (coder.free, coder.family) == (True, "qwen")


def test_provider_mapping(snapshot: ModelsDev) -> None:
    known = snapshot.provider_ids()
    assert set(KIND_PROVIDERS.values()) <= known
    assert set(HOST_PROVIDERS.values()) <= known
    assert provider_for("groq") == "groq"
    assert provider_for("openai", "https://api.cerebras.ai/v1") == "cerebras"
    assert provider_for("openai", "https://generativelanguage.googleapis.com/v1beta/openai/") == "google"
    assert provider_for(base_url="https://models.github.ai/inference") == "github-models"
    assert provider_for(base_url="https://integrate.api.nvidia.com/v1") == "nvidia"
    assert provider_for("ollama", "http://localhost:11434/v1") == "ollama-cloud"
    assert provider_for("openai", "http://localhost:8000/v1") is None
    # Hints: a provider id, a base URL (static table, then the snapshot's own api hosts), a kind.
    assert snapshot.resolve_provider("cerebras") == "cerebras"
    assert snapshot.resolve_provider("https://api.mistral.ai/v1") == "mistral"
    assert snapshot.resolve_provider("https://api.inceptionlabs.ai/v1") == "inception"
    assert snapshot.resolve_provider("ollama") == "ollama-cloud"
    assert snapshot.resolve_provider("http://127.0.0.1:1234/v1") is None  # shared by two providers


def test_providers(snapshot: ModelsDev) -> None:
    providers = {p.provider_id: p for p in snapshot.providers()}
    assert providers["groq"].env == ("GROQ_API_KEY",)
    assert providers["groq"].api_base is None
    assert providers["openrouter"].api_base == "https://openrouter.ai/api/v1"
    assert providers["openrouter"].model_count > 100


def test_normalise_id() -> None:
    assert normalise_id("Meta-Llama/Llama-3.3-70B-Instruct:free") == "llama-3.3-70b-instruct"
    assert normalise_id("llama3.2:3b") == "llama3.2:3b"


# --- discover --------------------------------------------------------------------------------


def test_discover_order_and_filters() -> None:
    catalog = ModelsDev(SMALL)
    order = [e.model_id for e in catalog.models()]
    assert order == [
        "b-free-big",
        "b-free-same",
        "a-free-vision",
        "a-free-small",
        "a-paid-big",
        "b-no-window",
    ]
    assert [e.model_id for e in catalog.models(free_only=True, min_context=32768)] == [
        "b-free-big",
        "b-free-same",
        "a-free-vision",
    ]
    vision = catalog.models(vision_only=True)
    assert [e.model_id for e in vision] == ["a-free-vision"]
    entry = vision[0]
    assert (entry.provider_id, entry.provider_name, entry.api_base) == (
        "alpha",
        "Alpha",
        "https://alpha.example/v1",
    )
    assert (entry.env, entry.vision, entry.free, entry.context_window) == (
        ("ALPHA_API_KEY",),
        True,
        True,
        32768,
    )
    assert "a-old" in [e.model_id for e in catalog.models(include_deprecated=True)]


def test_discover_snapshot_is_sorted(snapshot: ModelsDev) -> None:
    entries = snapshot.models(free_only=True, vision_only=True, min_context=100000)
    assert entries and all(e.free and e.vision and (e.context_window or 0) >= 100000 for e in entries)
    keys = [(not e.free, -(e.context_window or 0), e.name.lower()) for e in snapshot.models()]
    assert keys == sorted(keys)


# --- cache and live fetch --------------------------------------------------------------------


def test_load_catalog_cache(tmp_path: Path) -> None:
    cache = tmp_path / "api.json"
    assert load_catalog(cache).match("llama-3.3-70b-versatile", "groq") is not None  # missing → bundled
    cache.write_bytes(b"{not json")
    assert "groq" in load_catalog(cache).provider_ids()  # unreadable → bundled
    cache.write_bytes(orjson.dumps({"providers": SMALL}))  # the wrapped form is accepted too
    assert load_catalog(cache).provider_ids() == {"alpha", "beta"}
    assert load_catalog(cache) is load_catalog(cache)  # read once
    cache.write_bytes(orjson.dumps({"beta": SMALL["beta"]}))
    os.utime(cache, ns=(1, 1))  # a new version of the file is read again
    assert load_catalog(cache).provider_ids() == {"beta"}


async def test_fetch_live_success(tmp_path: Path) -> None:
    seen: list[tuple[str, str, Any]] = []

    async def fetch(method: str, url: str, body: Any | None) -> Any:
        seen.append((method, url, body))
        return SMALL

    cache = tmp_path / "sub" / "api.json"
    assert await fetch_live(fetch, cache) is True
    assert seen == [("GET", MODELS_DEV_URL, None)]
    assert orjson.loads(cache.read_bytes()) == SMALL
    assert load_catalog(cache).provider_ids() == {"alpha", "beta"}
    assert [p.name for p in cache.parent.iterdir()] == ["api.json"]  # no temp file left


@pytest.mark.parametrize("answer", [ConnectionError("offline"), {"error": "rate limited"}, [], "<html>"])
async def test_fetch_live_failure_keeps_old_cache(tmp_path: Path, answer: Any) -> None:
    async def fetch(method: str, url: str, body: Any | None) -> Any:
        if isinstance(answer, Exception):
            raise answer
        return answer

    cache = tmp_path / "api.json"
    cache.write_bytes(b'{"old": true}')
    assert await fetch_live(fetch, cache) is False
    assert cache.read_bytes() == b'{"old": true}'
    assert [p.name for p in tmp_path.iterdir()] == ["api.json"]
