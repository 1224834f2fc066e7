"""Facts and their sources per provider kind, through the real refresh path over the fake provider.

Each kind's listing is served from a recorded payload (tests/fixtures/listings, made from the
documented formats) at the routes that kind answers on; models.dev facts come from the bundled
snapshot. OpenRouter, Groq, Mistral and LM Studio v1 through the CLI: tests/cli/test_cli_roster.py.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from benchwarmers.bench.admin.refresh import refresh_endpoint
from benchwarmers.bench.services import Bench
from benchwarmers.settings import Settings

FIXTURES = Path(__file__).parent.parent / "fixtures" / "listings"
FREE = {"prompt": 0.0, "completion": 0.0}


def fixture(name: str) -> Any:
    return json.loads((FIXTURES / f"{name}.json").read_text())


@pytest.fixture
async def bench(tmp_path: Path) -> AsyncIterator[Bench]:
    async with Bench(Settings(home=tmp_path / "home"), actor="test") as opened:
        yield opened


async def refresh(bench: Bench, fake: Any, name: str, kind: str, listings: dict[str, Any]) -> dict[str, Any]:
    for path, payload in listings.items():
        fake.listing(path, payload)
    await bench.endpoints.add_endpoint(name, fake.base_url, kind)
    return await refresh_endpoint(bench.state, name)


async def facts(bench: Bench, alias: str) -> dict[str, tuple[Any, str]]:
    """The facts in use, each with the source it came from."""
    model = await bench.models.model(alias)
    return {name: (fact["value"], fact["source"]) for name, fact in model["facts"].items()}


async def test_lmstudio_v0_when_v1_is_not_served(bench, fake_upstream):
    summary = await refresh(bench, fake_upstream, "lms", "lmstudio", {"/api/v0/models": fixture("lmstudio_v0")})
    assert summary == {"listed": 2, "added": 2, "gone": 0, "went_paid": 0, "retiring": 0, "possibly_changed": 0}
    assert [r.path for r in fake_upstream.requests] == ["/api/v1/models", "/api/v0/models"]
    assert await facts(bench, "lms/qwen2-vl-7b-instruct") == {
        "context_window": (32768, "listing"),
        "input_kinds": (["image", "text"], "listing"),  # type "vlm"
        "free": (True, "listing"),  # local
        "price": (FREE, "listing"),
        "family": ("qwen", "listing"),
    }
    # The listing gives no output cap; models.dev's entry for the same model fills it in.
    assert await facts(bench, "lms/meta-llama-3.1-8b-instruct") == {
        "context_window": (131072, "listing"),
        "output_cap": (32768, "models.dev"),
        "input_kinds": (["text"], "listing"),
        "free": (True, "listing"),
        "price": (FREE, "listing"),
        "family": ("llama", "listing"),
    }


async def test_lmstudio_v1_reads_the_loaded_context(bench, fake_upstream):
    await refresh(bench, fake_upstream, "lms", "lmstudio", {"/api/v1/models": fixture("lmstudio_v1")})
    assert [r.path for r in fake_upstream.requests] == ["/api/v1/models"]
    qwen = await facts(bench, "lms/qwen/qwen3-4b-2507")
    assert qwen["context_window"] == (8192, "listing")  # the loaded instance's context, not the trained one
    assert (qwen["free"], qwen["family"]) == ((True, "listing"), ("qwen", "listing"))
    assert (await facts(bench, "lms/google/gemma-3-4b"))["input_kinds"] == (["image", "text"], "listing")


async def test_ollama_tags_and_show(bench, fake_upstream):
    summary = await refresh(
        bench,
        fake_upstream,
        "ollama",
        "ollama",
        {"/api/tags": fixture("ollama_tags"), "/api/show": fixture("ollama_show")},
    )
    assert summary["listed"] == 4  # the embedding model is not a chat model
    shown = sorted(r.json["model"] for r in fake_upstream.requests if r.path == "/api/show")
    assert shown == ["deepseek-r1:8b", "gemma3:4b", "llama3.2:3b", "nomic-embed-text:latest", "qwen2.5-coder:7b"]
    # Window from model_info["gemma3.context_length"], vision from capabilities.
    gemma = await facts(bench, "ollama/gemma3:4b")
    assert gemma["context_window"] == (131072, "listing")
    assert gemma["input_kinds"] == (["image", "text"], "listing")
    assert gemma["output_cap"] == (131072, "models.dev")
    # num_ctx in the Modelfile is what really runs.
    assert (await facts(bench, "ollama/qwen2.5-coder:7b"))["context_window"] == (16384, "listing")
    # No /api/show answer: its window is unknown, and an unknown window is never a reason to refuse.
    r1 = await bench.models.model("ollama/deepseek-r1:8b")
    assert (r1["context_window"], r1["vision"], r1["free"], r1["family"]) == (None, None, True, "qwen")


async def test_open_webui(bench, fake_upstream):
    await refresh(bench, fake_upstream, "owui", "openwebui", {"/api/models": fixture("openwebui")})
    assert [r.path for r in fake_upstream.requests] == ["/api/models"]
    assert await facts(bench, "owui/openrouter.google/gemini-2.5-flash") == {
        "context_window": (1048576, "listing"),
        "output_cap": (65535, "listing"),
        "input_kinds": (["audio", "file", "image", "text"], "listing"),
        "free": (False, "listing"),
        "price": ({"prompt": 3e-07, "completion": 2.5e-06}, "listing"),
        "family": ("gemini", "models.dev"),
    }
    qwen = await facts(bench, "owui/openrouter.qwen/qwen3-coder:free")
    assert qwen["deprecated"] == ("2026-12-31", "listing")
    assert (await bench.models.model("owui/openrouter.qwen/qwen3-coder:free"))["status"] == "retiring"
    assert await facts(bench, "owui/llama3.2:3b") == {"family": ("llama", "listing")}
    assert await facts(bench, "owui/summarizer_pipe.gpt-4o-mini") == {}


async def test_litellm_model_info(bench, fake_upstream):
    summary = await refresh(bench, fake_upstream, "lite", "litellm", {"/model/info": fixture("litellm")})
    assert summary["listed"] == 4
    assert [r.path for r in fake_upstream.requests] == ["/model/info"]
    assert await facts(bench, "lite/groq-llama-3.3-70b") == {
        "context_window": (131072, "listing"),
        "output_cap": (32768, "listing"),
        "input_kinds": (["text"], "listing"),
        "free": (False, "listing"),
        "price": ({"prompt": 5.9e-07, "completion": 7.9e-07}, "listing"),
    }
    flash = await bench.models.model("lite/gemini-1.5-flash")
    assert (flash["facts"]["deprecated"], flash["status"]) == ({"value": "2025-09-24", "source": "listing"}, "retiring")
    assert await facts(bench, "lite/local-qwen") == {
        "context_window": (32768, "listing"),
        "free": (True, "listing"),
        "price": (FREE, "listing"),
    }


async def test_every_stored_fact_shows_its_source_and_when(bench, fake_upstream):
    await refresh(bench, fake_upstream, "lms", "lmstudio", {"/api/v0/models": fixture("lmstudio_v0")})
    model = await bench.models.model("lms/meta-llama-3.1-8b-instruct")
    by_fact = {(s["fact"], s["source"]): s for s in model["sources"]}
    # Both sources are kept: models.dev's 128,000 stays visible under the listing's 131,072, which wins.
    assert by_fact[("context_window", "listing")]["value"] == 131072
    assert by_fact[("context_window", "models.dev")]["value"] == 128000
    assert model["facts"]["context_window"] == {"value": 131072, "source": "listing"}
    assert all(isinstance(s["learned_at"], float) for s in model["sources"])


async def test_a_repeated_refresh_writes_only_what_changed(bench, fake_upstream):
    payload = fixture("lmstudio_v0")
    await refresh(bench, fake_upstream, "lms", "lmstudio", {"/api/v0/models": payload})
    first = {
        (s["fact"], s["source"]): s["learned_at"]
        for s in (await bench.models.model("lms/qwen2-vl-7b-instruct"))["sources"]
    }
    payload["data"][0]["max_context_length"] = 16384
    fake_upstream.listing("/api/v0/models", payload)
    await refresh_endpoint(bench.state, "lms")
    second = {
        (s["fact"], s["source"]): s["learned_at"]
        for s in (await bench.models.model("lms/qwen2-vl-7b-instruct"))["sources"]
    }
    assert set(first) == set(second)
    changed = {key for key in first if first[key] != second[key]}
    assert changed == {("context_window", "listing")}  # the unchanged facts keep when they were learned
    assert (await facts(bench, "lms/qwen2-vl-7b-instruct"))["context_window"] == (16384, "listing")


async def test_cliproxyapi(bench, fake_upstream):
    summary = await refresh(bench, fake_upstream, "cpa", "cliproxy", {"/v1/models": fixture("cliproxy")})
    assert summary == {"listed": 5, "added": 5, "gone": 0, "went_paid": 0, "retiring": 0, "possibly_changed": 0}
    assert [r.path for r in fake_upstream.requests] == ["/v1/models"]
    # Its listing names each model and little more: models.dev knows the rest, except a price (a
    # subscription has none per token), so nothing here is free for the explorer seats.
    assert await facts(bench, "cpa/claude-sonnet-4-5-20250929") == {
        "context_window": (200000, "models.dev"),
        "output_cap": (64000, "models.dev"),
        "input_kinds": (["image", "pdf", "text"], "models.dev"),
        "family": ("claude", "models.dev"),
    }
    # Command Code's channel states its window in the listing.
    assert await facts(bench, "cpa/meta/muse-spark-1.2-contributor") == {"context_window": (1048576, "listing")}
