"""`benchwarmers init` against fake providers acting as a local LM Studio and a local Ollama."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from benchwarmers.bench.presets import PRESETS
from tests.fakes.upstream import FakeUpstream
from tests.support.benchserver import free_port

FIXTURES = Path(__file__).parent.parent / "fixtures" / "listings"
NEXT = (
    "next: `benchwarmers serve`, then point an OpenAI client at http://127.0.0.1:8123/v1 with a collection "
    "as the model (`benchwarmers collection list`)\n"
)


def fixture(name: str) -> Any:
    return json.loads((FIXTURES / f"{name}.json").read_text())


@pytest.fixture
def locals_() -> Iterator[tuple[FakeUpstream, FakeUpstream]]:
    with FakeUpstream() as lmstudio, FakeUpstream() as ollama:
        lmstudio.listing("/api/v1/models", fixture("lmstudio_v1"))
        ollama.listing("/api/tags", fixture("ollama_tags"))
        ollama.listing("/api/show", fixture("ollama_show"))
        yield lmstudio, ollama


@pytest.fixture
def cli(cli, monkeypatch):
    for preset in PRESETS.values():  # only the keys a test sets are "set"
        for name in preset.key_envs:
            monkeypatch.delenv(name, raising=False)
    for name in ("CLOUDFLARE_ACCOUNT_ID", "BENCH_BIND", "BENCHWARMERS_PUBLIC_URL"):
        monkeypatch.delenv(name, raising=False)
    return cli


def test_init_unattended_finds_local_servers_and_proposes_a_collection(cli, locals_):
    lmstudio, ollama = locals_
    urls = ("--ollama-url", ollama.root_url, "--lmstudio-url", f"{lmstudio.root_url}/v1")
    members = "lmstudio/google/gemma-3-4b, lmstudio/openai/gpt-oss-20b, ollama/llama3.2:3b"
    assert cli("init", "--yes", *urls) == (
        0,
        f"Benchwarmers: data in {cli.home}\n"
        f"Add Ollama (local) (found at {ollama.root_url} with 4 models)? yes\n"
        f"added endpoint ollama (ollama, {ollama.root_url}/v1)\n"
        "ollama: 4 models listed, 4 new, 0 gone\n"
        f"Add LM Studio (local) (found at {lmstudio.root_url} with 3 models)? yes\n"
        f"added endpoint lmstudio (lmstudio, {lmstudio.root_url}/v1)\n"
        "lmstudio: 3 models listed, 3 new, 0 gone\n"
        f"Create bench/general with {members}? yes\n"
        f"created collection bench/general: {members}\n" + NEXT,
    )
    endpoints = orjson.loads(cli("endpoint", "list", "--json")[1])
    assert [(e["name"], e["kind"], e["base_url"], e["free_tier"]) for e in endpoints] == [
        ("lmstudio", "lmstudio", f"{lmstudio.root_url}/v1", True),
        ("ollama", "ollama", f"{ollama.root_url}/v1", True),
    ]
    (general,) = orjson.loads(cli("collection", "list", "--json")[1])
    assert general["members"] == members.split(", ")  # three families: gemma, gpt-oss, llama

    # Again: nothing is added twice.
    assert cli("init", "--yes", *urls) == (
        0,
        f"Benchwarmers: data in {cli.home}\n"
        "Ollama (local): already an endpoint (ollama)\n"
        "LM Studio (local): already an endpoint (lmstudio)\n"
        "collection bench/general exists already\n" + NEXT,
    )


def test_init_asks_and_offers_presets_whose_keys_are_set(cli, monkeypatch):
    closed = f"http://127.0.0.1:{free_port()}"
    monkeypatch.setenv("GROQ_API_KEY", "gsk-test-0000")
    code, out = cli("init", "--ollama-url", closed, "--lmstudio-url", closed, answers="n\n")
    assert (code, out) == (
        0,
        f"Benchwarmers: data in {cli.home}\n"
        f"Ollama (local): nothing answers at {closed}\n"
        f"LM Studio (local): nothing answers at {closed}\n"
        "Add Groq (GROQ_API_KEY is set)? [Y/n]: n\n"
        "not enough models from different families for a first collection yet; add an endpoint "
        "(`benchwarmers endpoint add NAME --preset PRESET`) and run init again\n" + NEXT,
    )
    assert orjson.loads(cli("endpoint", "list", "--json")[1]) == []


def test_init_with_named_presets_and_nothing_found(cli, locals_):
    lmstudio, _ = locals_
    code, out = cli(
        "init", "--yes", "--no-detect", "--no-collection", "--preset", "cloudflare", "--preset", "lmstudio",
        "--lmstudio-url", lmstudio.root_url,
    )  # fmt: skip
    assert code == 0
    assert out.splitlines()[1:5] == [
        "Cloudflare Workers AI: skipped: preset 'cloudflare' needs CLOUDFLARE_ACCOUNT_ID set (its base URL is "
        "https://api.cloudflare.com/client/v4/accounts/${CLOUDFLARE_ACCOUNT_ID}/ai/v1), or give --base-url",
        "Add LM Studio (local) (asked for)? yes",
        f"added endpoint lmstudio (lmstudio, {lmstudio.root_url}/v1)",
        "lmstudio: 3 models listed, 3 new, 0 gone",
    ]
    assert orjson.loads(cli("collection", "list", "--json")[1]) == []


def test_init_with_nothing_to_offer_says_what_to_set(cli):
    code, out = cli("init", "--yes", "--no-detect", "--no-collection")
    assert code == 0
    assert out.splitlines()[1] == (
        "no local server found and no provider key set. Set one of: openrouter (OPENROUTER_API_KEY), groq "
        "(GROQ_API_KEY), cerebras (CEREBRAS_API_KEY), google (GEMINI_API_KEY), mistral (MISTRAL_API_KEY), nvidia "
        "(NVIDIA_API_KEY), github (GITHUB_TOKEN), cloudflare (CLOUDFLARE_API_KEY), cliproxy (CLIPROXY_API_KEY); or "
        "add any OpenAI-compatible endpoint with `benchwarmers endpoint add NAME --base-url URL`."
    )
