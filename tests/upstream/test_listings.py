"""Listing parsers and the listing fetcher, against fixtures in each provider's documented format."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import orjson
import pytest

from benchwarmers.catalog.facts import ListedModel
from benchwarmers.upstream.listings import (
    KINDS,
    fetch_listing,
    parse_listing,
    parse_lmstudio,
    parse_ollama,
    parse_openai,
    root_of,
)

FIXTURES = Path(__file__).parent.parent / "fixtures" / "listings"
T = frozenset({"text"})
TI = frozenset({"text", "image"})


def fixture(name: str) -> Any:
    return orjson.loads((FIXTURES / f"{name}.json").read_bytes())


def by_id(models: list[ListedModel]) -> dict[str, ListedModel]:
    return {m.model_id: m for m in models}


class FakeFetch:
    """(method, url) → payload, or an exception to raise; records every call."""

    def __init__(self, routes: dict[tuple[str, str], Any]) -> None:
        self.routes = routes
        self.calls: list[tuple[str, str, Any]] = []

    async def __call__(self, method: str, url: str, body: Any | None) -> Any:
        self.calls.append((method, url, body))
        answer = self.routes.get((method, url), ConnectionError(f"404 {url}"))
        if isinstance(answer, Exception):
            raise answer
        return answer


# --- root ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("base", "root"),
    [
        ("http://localhost:1234/v1", "http://localhost:1234"),
        ("http://localhost:1234/v1/", "http://localhost:1234"),
        ("http://localhost:11434", "http://localhost:11434"),
        ("http://localhost:11434/", "http://localhost:11434"),
        ("https://litellm.example.com/proxy/v1", "https://litellm.example.com/proxy"),
        ("http://host:8000/v1beta", "http://host:8000/v1beta"),
    ],
)
def test_root_of(base: str, root: str) -> None:
    assert root_of(base) == root


# --- parsers ---------------------------------------------------------------------------------


def test_openrouter() -> None:
    models = by_id(parse_listing("openrouter", fixture("openrouter")))
    assert "openai/text-embedding-3-small" not in models  # outputs embeddings, not text
    llama = models["meta-llama/llama-3.3-70b-instruct:free"]
    assert llama == ListedModel(
        model_id="meta-llama/llama-3.3-70b-instruct:free",
        context_window=131072,  # context_length comes before top_provider.context_length
        output_cap=8192,
        input_kinds=T,
        price_prompt=0.0,
        price_completion=0.0,
        free=True,
        display_name="Meta: Llama 3.3 70B Instruct (free)",
        created="2024-12-06T17:28:57Z",  # the listing's `created`, as ISO 8601 UTC
    )
    gemini = models["google/gemini-2.5-flash"]
    assert gemini.context_window == 1048576
    assert gemini.output_cap == 65535
    assert gemini.input_kinds == frozenset({"text", "image", "file", "audio"})
    assert gemini.vision is True
    assert gemini.free is False
    assert gemini.price_prompt == pytest.approx(3e-7)
    assert gemini.price_completion == pytest.approx(2.5e-6)
    mistral = models["mistralai/mistral-small-3.2-24b-instruct:free"]
    assert (mistral.free, mistral.vision, mistral.output_cap) == (True, True, None)
    assert mistral.deprecated == "2026-12-15"
    auto = models["openrouter/auto"]  # "-1" means the price varies: unknown, not free
    assert (auto.price_prompt, auto.free, auto.context_window) == (None, None, 2000000)
    assert all(m.family is None for m in models.values())


def test_groq() -> None:
    models = by_id(parse_listing("groq", fixture("groq")))
    assert models["llama-3.3-70b-versatile"] == ListedModel(
        model_id="llama-3.3-70b-versatile", context_window=131072, output_cap=32768, created="2024-12-06T01:15:54Z"
    )
    # Groq's listing says nothing of images or prices: those fall through to models.dev.
    scout = models["meta-llama/llama-4-scout-17b-16e-instruct"]
    assert (scout.context_window, scout.output_cap, scout.input_kinds, scout.free) == (
        131072,
        8192,
        None,
        None,
    )
    assert models["gemma2-9b-it"].deprecated == "inactive"
    assert models["openai/gpt-oss-120b"].output_cap == 65536
    # Groq does not mark whisper as non-chat, so it stays (the listing does not say).
    assert models["whisper-large-v3"].context_window == 448


def test_mistral() -> None:
    models = by_id(parse_listing("mistral", fixture("mistral")))
    assert set(models) == {
        "mistral-small-latest",
        "mistral-small-2506",
        "codestral-latest",
        "open-mixtral-8x7b",
    }
    small = models["mistral-small-latest"]
    assert (small.context_window, small.input_kinds, small.deprecated, small.free) == (131072, TI, None, None)
    assert models["codestral-latest"].input_kinds == T
    assert models["codestral-latest"].context_window == 256000
    assert models["open-mixtral-8x7b"].deprecated == "2025-03-30T12:00:00Z"


def test_generic_openai_and_bare_list() -> None:
    models = by_id(parse_openai(fixture("openai")))
    assert set(models) == {"Qwen/Qwen2.5-VL-7B-Instruct", "gpt-4o-mini", "gpt-3.5-turbo-0613"}
    assert models["Qwen/Qwen2.5-VL-7B-Instruct"].context_window == 32768  # vLLM max_model_len
    assert models["gpt-4o-mini"] == ListedModel(model_id="gpt-4o-mini", created="2024-07-16T23:32:21Z")
    assert models["gpt-3.5-turbo-0613"].deprecated == "2024-09-13"
    bare = parse_openai([{"id": "a", "capabilities": {"vision": False}}, {"id": "a"}, {"no": "id"}, "junk"])
    assert bare == [ListedModel(model_id="a", input_kinds=T)]  # first of a repeated id wins


def test_not_a_listing_raises() -> None:
    with pytest.raises(ValueError, match="not a model listing"):
        parse_openai({"error": "nope"})


def test_lmstudio_v1() -> None:
    models = by_id(parse_lmstudio(fixture("lmstudio_v1")))
    assert "text-embedding-nomic-embed-text-v1.5" not in models
    assert models["google/gemma-3-4b"] == ListedModel(
        model_id="google/gemma-3-4b",
        context_window=131072,
        input_kinds=TI,
        price_prompt=0.0,
        price_completion=0.0,
        free=True,
        family="gemma",
        display_name="Gemma 3 4B",
    )
    qwen = models["qwen/qwen3-4b-2507"]  # loaded: its instance's context, not the trained maximum
    assert (qwen.context_window, qwen.input_kinds, qwen.family, qwen.free) == (8192, T, "qwen", True)
    assert models["openai/gpt-oss-20b"].family == "gpt-oss"


def test_lmstudio_v0() -> None:
    models = by_id(parse_listing("lmstudio", fixture("lmstudio_v0")))
    assert set(models) == {"qwen2-vl-7b-instruct", "meta-llama-3.1-8b-instruct"}
    vl = models["qwen2-vl-7b-instruct"]
    assert (vl.context_window, vl.input_kinds, vl.family, vl.free) == (32768, TI, "qwen", True)
    llama = models["meta-llama-3.1-8b-instruct"]
    assert (llama.context_window, llama.input_kinds, llama.family) == (131072, T, "llama")


def test_ollama() -> None:
    models = by_id(parse_ollama(fixture("ollama_tags"), fixture("ollama_show")))
    assert "nomic-embed-text:latest" not in models  # embedding-only capabilities
    assert models["llama3.2:3b"] == ListedModel(
        model_id="llama3.2:3b",
        context_window=131072,
        input_kinds=T,
        price_prompt=0.0,
        price_completion=0.0,
        free=True,
        family="llama",
        fingerprint="a80c4f17acd55265feec403c7aef86be0c25983ab279d83f3bcd3abbcb5b8b72",  # the tag's digest
    )
    coder = models["qwen2.5-coder:7b"]  # num_ctx 16384 in the Modelfile is what really runs
    assert (coder.context_window, coder.family) == (16384, "qwen")
    gemma = models["gemma3:4b"]
    assert (gemma.context_window, gemma.input_kinds, gemma.family) == (131072, TI, "gemma")
    # No /api/show answer: listed, free, family from the tag, window and input kinds unknown.
    r1 = models["deepseek-r1:8b"]
    assert (r1.context_window, r1.input_kinds, r1.family, r1.free) == (None, None, "qwen", True)


def test_openwebui() -> None:
    models = by_id(parse_listing("openwebui", fixture("openwebui")))
    assert "arena-model" not in models
    assert models["llama3.2:3b"].family == "llama"
    assert models["llama3.2:3b"].free is None  # Open WebUI does not say where Ollama runs
    gemini = models["openrouter.google/gemini-2.5-flash"]  # facts from the raw upstream entry
    assert (gemini.context_window, gemini.output_cap, gemini.vision, gemini.free) == (
        1048576,
        65535,
        True,
        False,
    )
    qwen = models["openrouter.qwen/qwen3-coder:free"]
    assert (qwen.free, qwen.input_kinds, qwen.deprecated) == (True, T, "2026-12-31")
    assert models["summarizer_pipe.gpt-4o-mini"] == ListedModel(
        model_id="summarizer_pipe.gpt-4o-mini", display_name="Summarizer / gpt-4o-mini", created="2025-11-29T10:40:00Z"
    )


def test_litellm() -> None:
    models = by_id(parse_listing("litellm", fixture("litellm")))
    assert set(models) == {"groq-llama-3.3-70b", "gpt-4o-mini", "local-qwen", "gemini-1.5-flash"}
    groq = models["groq-llama-3.3-70b"]
    assert (groq.context_window, groq.output_cap, groq.input_kinds, groq.free) == (131072, 32768, T, False)
    assert groq.price_prompt == pytest.approx(5.9e-7)
    mini = models["gpt-4o-mini"]  # the first deployment of a repeated name wins
    assert (mini.context_window, mini.output_cap, mini.input_kinds) == (128000, 16384, TI)
    local = models["local-qwen"]
    assert (local.context_window, local.output_cap, local.input_kinds, local.free) == (
        32768,
        None,
        None,
        True,
    )
    assert models["gemini-1.5-flash"].deprecated == "2025-09-24"


def test_unknown_kind() -> None:
    with pytest.raises(ValueError, match="known kinds: openai, openrouter, groq"):
        parse_listing("vertex", {})


# --- fetching --------------------------------------------------------------------------------


async def test_fetch_generic_kinds_use_base_models() -> None:
    fetch = FakeFetch({("GET", "https://api.groq.com/openai/v1/models"): fixture("groq")})
    models = await fetch_listing("groq", "https://api.groq.com/openai/v1/", fetch)
    assert len(models) == 5
    assert fetch.calls == [("GET", "https://api.groq.com/openai/v1/models", None)]


async def test_fetch_unknown_kind() -> None:
    with pytest.raises(ValueError, match=", ".join(KINDS)):
        await fetch_listing("nope", "http://x", FakeFetch({}))


async def test_fetch_lmstudio_prefers_v1() -> None:
    fetch = FakeFetch(
        {
            ("GET", "http://localhost:1234/api/v1/models"): fixture("lmstudio_v1"),
            ("GET", "http://localhost:1234/api/v0/models"): fixture("lmstudio_v0"),
        }
    )
    models = await fetch_listing("lmstudio", "http://localhost:1234/v1", fetch)
    assert {m.model_id for m in models} == {"google/gemma-3-4b", "qwen/qwen3-4b-2507", "openai/gpt-oss-20b"}
    assert len(fetch.calls) == 1


async def test_fetch_lmstudio_falls_back_to_v0_then_generic() -> None:
    v0 = FakeFetch({("GET", "http://localhost:1234/api/v0/models"): fixture("lmstudio_v0")})
    models = await fetch_listing("lmstudio", "http://localhost:1234/v1", v0)
    assert {m.model_id for m in models} == {"qwen2-vl-7b-instruct", "meta-llama-3.1-8b-instruct"}

    # An old server answers an unknown route with a 200 error body: that is not a listing either.
    generic = FakeFetch(
        {
            ("GET", "http://localhost:1234/api/v1/models"): {"error": "Unexpected endpoint or method."},
            ("GET", "http://localhost:1234/v1/models"): {"data": [{"id": "local-model", "object": "model"}]},
        }
    )
    models = await fetch_listing("lmstudio", "http://localhost:1234/v1", generic)
    assert models == [ListedModel(model_id="local-model", price_prompt=0.0, price_completion=0.0, free=True)]
    assert [url for _, url, _ in generic.calls] == [
        "http://localhost:1234/api/v1/models",
        "http://localhost:1234/api/v0/models",
        "http://localhost:1234/v1/models",
    ]


async def test_fetch_lmstudio_all_fail_raises_last_error() -> None:
    with pytest.raises(ConnectionError, match="404 http://localhost:1234/v1/models"):
        await fetch_listing("lmstudio", "http://localhost:1234/v1", FakeFetch({}))


async def test_fetch_ollama_tags_and_shows() -> None:
    shows = fixture("ollama_show")
    routes: dict[tuple[str, str], Any] = {("GET", "http://localhost:11434/api/tags"): fixture("ollama_tags")}
    fetch = FakeFetch(routes)

    async def fetch_with_show(method: str, url: str, body: Any | None) -> Any:
        if (method, url) == ("POST", "http://localhost:11434/api/show"):
            fetch.calls.append((method, url, body))
            if body["model"] not in shows:
                raise ConnectionError("show failed")
            return shows[body["model"]]
        return await fetch(method, url, body)

    models = by_id(await fetch_listing("ollama", "http://localhost:11434/v1", fetch_with_show))
    assert set(models) == {"llama3.2:3b", "qwen2.5-coder:7b", "gemma3:4b", "deepseek-r1:8b"}
    assert models["qwen2.5-coder:7b"].context_window == 16384
    assert models["deepseek-r1:8b"].context_window is None  # its show failed; still listed
    posted = sorted(body["model"] for method, _, body in fetch.calls if method == "POST")
    assert posted == sorted(m["name"] for m in fixture("ollama_tags")["models"])


async def test_fetch_ollama_bounds_concurrent_shows() -> None:
    tags = {"models": [{"name": f"m{i}:1b"} for i in range(12)]}
    running = peak = 0

    async def fetch(method: str, url: str, body: Any | None) -> Any:
        nonlocal running, peak
        if url.endswith("/api/tags"):
            return tags
        running += 1
        peak = max(peak, running)
        await asyncio.sleep(0.001)
        running -= 1
        return {
            "model_info": {"general.architecture": "llama", "llama.context_length": 4096},
            "capabilities": [],
        }

    models = await fetch_listing("ollama", "http://localhost:11434", fetch)
    assert len(models) == 12
    assert all(m.context_window == 4096 for m in models)
    assert 1 < peak <= 4


async def test_fetch_openwebui_accepts_root_or_api_base() -> None:
    for base in ("http://webui:3000", "http://webui:3000/api", "http://webui:3000/api/"):
        fetch = FakeFetch({("GET", "http://webui:3000/api/models"): fixture("openwebui")})
        models = await fetch_listing("openwebui", base, fetch)
        assert len(models) == 4


async def test_fetch_litellm_model_info_then_fallback() -> None:
    info = FakeFetch({("GET", "http://proxy:4000/model/info"): fixture("litellm")})
    assert len(await fetch_listing("litellm", "http://proxy:4000/v1", info)) == 4

    fallback = FakeFetch({("GET", "http://proxy:4000/v1/models"): {"data": [{"id": "gpt-4o-mini"}]}})
    models = await fetch_listing("litellm", "http://proxy:4000/v1", fallback)
    assert models == [ListedModel(model_id="gpt-4o-mini")]
    assert [url for _, url, _ in fallback.calls] == [
        "http://proxy:4000/model/info",
        "http://proxy:4000/v1/models",
    ]
