"""Discover on the bundled models.dev snapshot: free first, marked reachable / unverified / unlisted /
on bench / also on bench; reachability is judged from the listing an endpoint returned, not from its
kind; `discover add` puts a reachable (or unverified) model on the roster, and refuses an unlisted one."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from typer.testing import CliRunner

from benchwarmers.bench.admin.refresh import refresh_endpoint
from benchwarmers.bench.services import Bench
from benchwarmers.bench.upkeep import discover as bench_discover
from benchwarmers.cli.app import app
from benchwarmers.errors import Conflict, InvalidRequest, NotFound
from benchwarmers.settings import Settings
from tests.support.catalog import entry
from tests.support.free_tiers import OPENROUTER_TIER

FLASH = "deepseek/deepseek-v4-flash:free"


@pytest.fixture
async def bench(tmp_path: Path, fake_upstream: Any) -> AsyncIterator[Bench]:
    """OpenRouter (refreshed: its listing carries one model, now on the bench), Groq (serves its
    provider, nothing listed yet: unverified) and a local Ollama (which reaches no models.dev provider)."""
    fake_upstream.listing("/v1/models", {"object": "list", "data": [entry(FLASH)]})
    async with Bench(Settings(home=tmp_path / "home"), actor="test") as opened:
        await opened.endpoints.add_endpoint("or", fake_upstream.base_url, "openrouter")
        await refresh_endpoint(opened.state, "or")
        await opened.endpoints.add_endpoint("gq", "https://api.groq.com/openai/v1", "groq")
        await opened.endpoints.add_endpoint("ollama", "http://127.0.0.1:11434/v1", "ollama")
        yield opened


def by_id(found: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {f["id"]: f for f in found}


def marks(found: dict[str, Any]) -> tuple[list[str], str | None, str | None, list[str]]:
    return found["marks"], found["reachable"], found["on_bench"], found["also_on_bench"]


async def test_free_first_then_reachable_with_marks(bench):
    found = await bench_discover.discover(bench.state)
    assert len(found) > 4000  # the whole bundled snapshot: nothing fetched
    free = [f["free"] for f in found]
    assert free == sorted(free, reverse=True)  # every free model before every priced one
    reachable_free = [f["reachable"] is not None for f in found if f["free"]]
    assert reachable_free == sorted(reachable_free, reverse=True)
    assert found[0]["id"] == f"openrouter/{FLASH}"  # free, and its endpoint's listing carries it

    ids = by_id(found)
    assert marks(ids[f"openrouter/{FLASH}"]) == (["reachable", "on bench"], "or", f"or/{FLASH}", [])
    # The same model through another provider, or its priced twin: "also on bench".
    assert marks(ids[f"kilo/{FLASH}"]) == (["also on bench"], None, None, [f"or/{FLASH}"])
    # An OpenRouter-kind endpoint whose listing lacks a model does not reach it (it would answer 404).
    assert marks(ids["openrouter/deepseek/deepseek-v4-flash"]) == (
        ["unlisted", "also on bench"],
        None,
        None,
        [f"or/{FLASH}"],
    )
    assert marks(ids["ollama-cloud/deepseek-v4-flash"]) == (["also on bench"], None, None, [f"or/{FLASH}"])
    assert marks(ids["openrouter/qwen/qwen3-coder:free"]) == (["unlisted"], None, None, [])
    # Groq's listing was never read: served by its kind, unverified until it is refreshed.
    assert marks(ids["groq/groq/compound"]) == (["reachable", "unverified"], "gq", None, [])
    assert marks(ids["cerebras/gpt-oss-120b"]) == ([], None, None, [])
    assert ids["openrouter/qwen/qwen3-coder:free"] == {
        "id": "openrouter/qwen/qwen3-coder:free",
        "provider": "openrouter",
        "provider_name": "OpenRouter",
        "model": "qwen/qwen3-coder:free",
        "name": "Qwen3 Coder 480B A35B (free)",
        "family": "qwen",
        "context_window": 262_000,
        "vision": False,
        "free": True,
        "marks": ["unlisted"],
        "reachable": None,
        "verified": True,
        "unlisted": "or",
        "on_bench": None,
        "also_on_bench": [],
        "free_tier": OPENROUTER_TIER,  # the shipped free-tier file's entry for OpenRouter's :free models
        "tags": ["trains-on-prompts"],
    }


async def test_filters(bench):
    found = await bench_discover.discover(
        bench.state, free=True, vision=True, min_context=200_000, provider="openrouter"
    )
    assert found
    assert all(f["free"] and f["vision"] and f["context_window"] >= 200_000 for f in found)
    assert {f["provider"] for f in found} == {"openrouter"}
    assert len(await bench_discover.discover(bench.state, limit=5)) == 5
    with pytest.raises(NotFound) as unknown:
        await bench_discover.discover(bench.state, provider="openroutr")
    assert (
        unknown.value.message
        == "models.dev has no provider 'openroutr'. Did you mean openrouter, orcarouter, opencode?"
    )


async def test_discover_add_puts_a_reachable_model_on_the_bench(bench, fake_upstream):
    with pytest.raises(InvalidRequest) as unlisted:
        await bench_discover.add(bench.state, "openrouter/qwen/qwen3-coder:free")
    assert unlisted.value.message == (
        "openrouter/qwen/qwen3-coder:free is not reachable: or serves openrouter, but its listing does not carry "
        "qwen/qwen3-coder:free, so it would answer 404. Refresh or if it should (benchwarmers endpoint refresh or), "
        "or add an endpoint that lists it"
    )
    # A second OpenRouter-kind endpoint whose listing was never read: unverified, so it may be added (and probed).
    await bench.endpoints.add_endpoint("or2", fake_upstream.base_url, "openrouter")
    added = await bench_discover.add(bench.state, "openrouter/qwen/qwen3-coder:free")
    assert added["alias"] == "or2/qwen/qwen3-coder:free"
    assert (added["context_window"], added["free"], added["family"], added["status"]) == (262_000, True, "qwen", "ok")
    assert added["facts"]["context_window"] == {"value": 262_000, "source": "models.dev"}
    # Its endpoint's listing does not carry it: a model added by hand is not "gone" for that.
    assert (await refresh_endpoint(bench.state, "or2"))["gone"] == 0
    assert (await bench.models.model("or2/qwen/qwen3-coder:free"))["status"] == "ok"
    found = by_id(await bench_discover.discover(bench.state, provider="openrouter", free=True))
    assert found["openrouter/qwen/qwen3-coder:free"]["marks"] == ["reachable", "on bench"]

    with pytest.raises(Conflict, match=r"openrouter/qwen/qwen3-coder:free is on the bench already as or2/qwen/"):
        await bench_discover.add(bench.state, "openrouter/qwen/qwen3-coder:free")
    with pytest.raises(InvalidRequest) as refused:
        await bench_discover.add(bench.state, "cerebras/gpt-oss-120b")
    assert refused.value.message == (
        "cerebras/gpt-oss-120b is not reachable: no endpoint of yours serves cerebras. "
        "Add one first: benchwarmers endpoint add cerebras --preset cerebras"
    )
    with pytest.raises(NotFound) as typo:
        await bench_discover.add(bench.state, "openrouter/qwen/qwen3-cooder:free")
    assert typo.value.message == (
        "models.dev lists no 'qwen/qwen3-cooder:free' under openrouter. Did you mean openrouter/qwen/qwen3-coder:free, "
        "openrouter/qwen/qwen3-coder, openrouter/qwen/qwen3-coder-next?"
    )
    with pytest.raises(InvalidRequest, match="is not PROVIDER/MODEL"):
        await bench_discover.add(bench.state, "qwen3-coder")


def test_discover_commands(tmp_path, monkeypatch, fake_upstream):
    monkeypatch.setenv("BENCHWARMERS_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("COLUMNS", "250")
    fake_upstream.listing("/v1/models", {"object": "list", "data": [entry(FLASH)]})
    runner = CliRunner()

    def cli(*args: str) -> tuple[int, str]:
        result = runner.invoke(app, list(args))
        return result.exit_code, result.output

    assert cli("endpoint", "add", "or", "--base-url", fake_upstream.base_url, "--kind", "openrouter")[0] == 0
    assert cli("endpoint", "refresh", "or")[0] == 0
    code, out = cli("discover", "--free", "--provider", "openrouter", "--limit", "2", "--json")
    assert code == 0
    assert [(f["id"], f["marks"]) for f in orjson.loads(out)] == [
        (f"openrouter/{FLASH}", ["reachable", "on bench"]),
        ("openrouter/openrouter/owl-alpha", ["unlisted"]),
    ]
    code, out = cli("discover", "--free", "--provider", "openrouter", "--limit", "2")
    assert code == 0
    assert f"openrouter/{FLASH}" in out and f"on bench: or/{FLASH}" in out and "not in or's listing" in out
    assert out.endswith("add one: benchwarmers discover add PROVIDER/MODEL\n")
    assert cli("discover", "add", "openrouter/qwen/qwen3-coder:free") == (
        1,
        "error: openrouter/qwen/qwen3-coder:free is not reachable: or serves openrouter, but its listing does not "
        "carry qwen/qwen3-coder:free, so it would answer 404. Refresh or if it should (benchwarmers endpoint refresh "
        "or), or add an endpoint that lists it\n",
    )
    assert cli("discover", "add", "groq/groq/compound") == (
        1,
        "error: groq/groq/compound is not reachable: no endpoint of yours serves groq. "
        "Add one first: benchwarmers endpoint add groq --preset groq\n",
    )
