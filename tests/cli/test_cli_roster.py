"""The roster through the CLI, against the fake provider over real HTTP: exact output, real facts."""

from __future__ import annotations

import json
from pathlib import Path

import orjson

FIXTURES = Path(__file__).parent.parent / "fixtures" / "listings"


def fixture(name: str):
    return json.loads((FIXTURES / f"{name}.json").read_text())


def models_json(cli) -> dict[str, dict]:
    code, out = cli("model", "list", "--json")
    assert code == 0, out
    return {m["alias"]: m for m in orjson.loads(out)}


def test_endpoint_add_list_and_refusals(cli, fake_upstream):
    code, out = cli(
        "endpoint",
        "add",
        "groq",
        "--base-url",
        "https://api.groq.com/openai/v1",
        "--kind",
        "groq",
        "--api-key-env",
        "GROQ_API_KEY",
    )
    assert (code, out) == (
        0,
        "added endpoint groq (groq, https://api.groq.com/openai/v1, key: $GROQ_API_KEY)\n"
        "next: benchwarmers endpoint refresh groq\n",
    )
    code, out = cli(
        "endpoint",
        "add",
        "local",
        "--base-url",
        fake_upstream.base_url + "/",
        "--api-key",
        "sk-local-secret-9876",
        "--free-tier",
    )
    assert code == 0
    assert out.splitlines()[0] == f"added endpoint local (openai, {fake_upstream.base_url}, key: …9876)"
    code, out = cli("endpoint", "list", "--json")
    listed = orjson.loads(out)
    assert [(e["name"], e["kind"], e["api_key"], e["api_key_env"], e["free_tier"]) for e in listed] == [
        ("groq", "groq", None, "GROQ_API_KEY", False),
        ("local", "openai", "…9876", None, True),
    ]
    assert "sk-local-secret" not in out
    assert cli("endpoint", "add", "groq", "--base-url", "https://x.example/v1") == (
        1,
        "error: endpoint 'groq' exists already; remove it first or pick another name\n",
    )
    assert cli("endpoint", "add", "bad", "--base-url", "api.groq.com/v1") == (
        1,
        "error: base URL 'api.groq.com/v1' is not an http(s) URL such as https://api.groq.com/openai/v1\n",
    )
    assert cli("endpoint", "add", "bad", "--base-url", "https://x.example/v1", "--kind", "gemini") == (
        1,
        "error: kind 'gemini' is not known; kinds are: openai, openrouter, groq, mistral, ollama, lmstudio, "
        "llamacpp, vllm, openwebui, litellm, cliproxy, responses, anthropic, llm\n",
    )
    assert cli("endpoint", "remove", "nope") == (1, "error: no endpoint named 'nope'.\n")
    assert cli("endpoint", "remove", "groq") == (0, "removed endpoint groq\n")


def refresh(cli, fake, name: str, kind: str, path: str, payload) -> str:
    fake.listing(path, payload)
    code, out = cli("endpoint", "add", name, "--base-url", fake.base_url, "--kind", kind)
    assert code == 0, out
    code, out = cli("endpoint", "refresh", name)
    assert code == 0, out
    return out


def test_refresh_reads_an_openrouter_listing(cli, fake_upstream):
    out = refresh(cli, fake_upstream, "or", "openrouter", "/v1/models", fixture("openrouter"))
    assert out == "or: 4 models listed, 4 new, 0 gone\n"
    models = models_json(cli)
    llama = models["or/meta-llama/llama-3.3-70b-instruct:free"]
    assert (llama["context_window"], llama["output_cap"], llama["vision"], llama["free"], llama["family"]) == (
        131072,
        8192,
        False,
        True,
        "llama",
    )
    assert llama["facts"]["context_window"]["source"] == "listing"
    gemini = models["or/google/gemini-2.5-flash"]
    assert (gemini["vision"], gemini["free"], gemini["family"]) == (True, False, "gemini")
    assert "or/openai/text-embedding-3-small" not in models


def test_refresh_reads_a_groq_listing(cli, fake_upstream):
    refresh(cli, fake_upstream, "groq", "groq", "/v1/models", fixture("groq"))
    models = models_json(cli)
    versatile = models["groq/llama-3.3-70b-versatile"]
    assert (versatile["context_window"], versatile["output_cap"], versatile["status"]) == (131072, 32768, "ok")
    retired = models["groq/gemma2-9b-it"]
    assert (retired["retiring"], retired["status"]) == (True, "retiring")


def test_refresh_reads_a_mistral_listing(cli, fake_upstream):
    refresh(cli, fake_upstream, "mistral", "mistral", "/v1/models", fixture("mistral"))
    models = models_json(cli)
    small = models["mistral/mistral-small-latest"]
    assert (small["context_window"], small["vision"], small["family"]) == (131072, True, "mistral")
    assert small["facts"]["input_kinds"] == {"value": ["image", "text"], "source": "listing"}
    assert "mistral/mistral-embed" not in models


def test_refresh_reads_an_lmstudio_listing(cli, fake_upstream):
    refresh(cli, fake_upstream, "lms", "lmstudio", "/api/v1/models", fixture("lmstudio_v1"))
    models = models_json(cli)
    assert set(models) == {"lms/google/gemma-3-4b", "lms/qwen/qwen3-4b-2507", "lms/openai/gpt-oss-20b"}
    gemma = models["lms/google/gemma-3-4b"]
    assert (gemma["context_window"], gemma["vision"], gemma["free"]) == (131072, True, True)
    assert [r.path for r in fake_upstream.requests] == ["/api/v1/models"]


def test_a_model_gone_from_the_listing_is_marked_gone_not_deleted(cli, fake_upstream):
    payload = fixture("groq")
    refresh(cli, fake_upstream, "groq", "groq", "/v1/models", payload)
    fake_upstream.listing("/v1/models", {"object": "list", "data": payload["data"][:1]})
    assert cli("endpoint", "refresh", "groq") == (0, "groq: 1 models listed, 0 new, 4 gone\n")
    models = models_json(cli)
    assert models["groq/openai/gpt-oss-120b"]["status"] == "gone"
    assert models["groq/llama-3.3-70b-versatile"]["status"] == "ok"


def test_refresh_of_an_unreachable_endpoint_fails_in_one_line(cli):
    code, out = cli("endpoint", "add", "off", "--base-url", "http://127.0.0.1:9/v1")
    code, out = cli("endpoint", "refresh", "off")
    assert code == 1
    assert out.startswith("error: refreshing off failed: connection failed")
    assert len(out.strip().splitlines()) == 1


def test_model_set_overrides_and_suggests(cli, fake_upstream):
    refresh(cli, fake_upstream, "groq", "groq", "/v1/models", fixture("groq"))
    code, out = cli(
        "model",
        "set",
        "groq/llama-3.3-70b-versatile",
        "--context",
        "65000",
        "--vision",
        "--family",
        "meta",
        "--free",
        "--disable",
    )
    assert (code, out) == (
        0,
        "groq/llama-3.3-70b-versatile: window 65,000, output 32,768, images yes, free yes, family meta, disabled, "
        # Groq's free plan, from the shipped free-tier file: known before any call.
        "paced by: requests-minute 30, requests-day 1,000, tokens-minute 12,000, tokens-day 100,000\n",
    )
    shown = models_json(cli)["groq/llama-3.3-70b-versatile"]
    assert shown["facts"]["context_window"] == {"value": 65000, "source": "override"}
    assert shown["status"] == "disabled"
    assert cli("model", "set", "llama-3.3-70b-versatile", "--context", "10") == (
        1,
        "error: no model 'llama-3.3-70b-versatile' on the roster. Did you mean groq/llama-3.3-70b-versatile?\n",
    )
    code, out = cli("model", "show", "groq/llama-3.3-70b-versatile")
    assert code == 0
    assert "context_window │ 65000" in out and "override (in use)" in out and "listing " in out


def test_gateway_settings_from_the_cli(cli):
    code, out = cli("gateway", "set", "--max-explorers", "1", "--seat-timeout", "30")
    assert code == 0, out
    assert "max_explorers 1" in out and "seat_timeout 30" in out
    code, out = cli("gateway", "show", "--json")
    shown = orjson.loads(out)
    assert (shown["max_explorers"], shown["max_calls"], shown["seat_timeout"]) == (1, 5, 30.0)
    assert cli("gateway", "set", "--epsilon", "1.5") == (1, "error: epsilon must be from 0 to 1 (got 1.5)\n")
