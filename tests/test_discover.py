"""Discover on the bundled models.dev snapshot: free first, marked reachable / on bench / also on
bench; `discover add` puts a reachable model on the roster."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from typer.testing import CliRunner

from benchwarmers.bench.services import Bench
from benchwarmers.bench.upkeep import discover as bench_discover
from benchwarmers.bench.upkeep.refresh import refresh_endpoint
from benchwarmers.cli.app import app
from benchwarmers.errors import Conflict, InvalidRequest, NotFound
from benchwarmers.settings import Settings
from tests.test_catalog_precedence import entry

FLASH = "deepseek/deepseek-v4-flash:free"


@pytest.fixture
async def bench(tmp_path: Path, fake_upstream: Any) -> AsyncIterator[Bench]:
    """OpenRouter (refreshed: one model on the bench), Groq (reachable, nothing listed yet) and a
    local Ollama (which reaches no models.dev provider)."""
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
    assert [f["id"] for f in found[:2]] == ["openrouter/openrouter/owl-alpha", f"openrouter/{FLASH}"]

    ids = by_id(found)
    assert marks(ids[f"openrouter/{FLASH}"]) == (["reachable", "on bench"], "or", f"or/{FLASH}", [])
    # The same model through another provider, or its priced twin: "also on bench".
    assert marks(ids[f"kilo/{FLASH}"]) == (["also on bench"], None, None, [f"or/{FLASH}"])
    assert marks(ids["openrouter/deepseek/deepseek-v4-flash"]) == (
        ["reachable", "also on bench"],
        "or",
        None,
        [f"or/{FLASH}"],
    )
    assert marks(ids["ollama-cloud/deepseek-v4-flash"]) == (["also on bench"], None, None, [f"or/{FLASH}"])
    assert marks(ids["openrouter/qwen/qwen3-coder:free"]) == (["reachable"], "or", None, [])
    assert marks(ids["groq/groq/compound"]) == (["reachable"], "gq", None, [])
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
        "marks": ["reachable"],
        "reachable": "or",
        "on_bench": None,
        "also_on_bench": [],
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
    added = await bench_discover.add(bench.state, "openrouter/qwen/qwen3-coder:free")
    assert added["alias"] == "or/qwen/qwen3-coder:free"
    assert (added["context_window"], added["free"], added["family"], added["status"]) == (262_000, True, "qwen", "ok")
    assert added["facts"]["context_window"] == {"value": 262_000, "source": "models.dev"}
    # Its endpoint's listing does not carry it: a model added by hand is not "gone" for that.
    assert (await refresh_endpoint(bench.state, "or"))["gone"] == 0
    assert (await bench.models.model("or/qwen/qwen3-coder:free"))["status"] == "ok"
    found = by_id(await bench_discover.discover(bench.state, provider="openrouter", free=True))
    assert found["openrouter/qwen/qwen3-coder:free"]["marks"] == ["reachable", "on bench"]

    with pytest.raises(Conflict, match=r"openrouter/qwen/qwen3-coder:free is on the bench already as or/qwen/"):
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
        ("openrouter/openrouter/owl-alpha", ["reachable"]),
        (f"openrouter/{FLASH}", ["reachable", "on bench"]),
    ]
    code, out = cli("discover", "--free", "--provider", "openrouter", "--limit", "2")
    assert code == 0
    assert f"openrouter/{FLASH}" in out and f"on bench: or/{FLASH}" in out and "reachable via or" in out
    assert out.endswith("add one: benchwarmers discover add PROVIDER/MODEL\n")
    assert cli("discover", "add", "openrouter/qwen/qwen3-coder:free") == (
        0,
        "added or/qwen/qwen3-coder:free (window 262,000, images no, free yes, family qwen)\n"
        # The onboarding probe: the fake provider does not serve it.
        "check: broken: not found (404): The model `qwen/qwen3-coder:free` does not exist or you do not have access "
        "to it.\n"
        "what to do: or does not serve it: `benchwarmers endpoint refresh or`\n"
        "next: benchwarmers collection add NAME --member or/qwen/qwen3-coder:free ...\n",
    )
    assert cli("discover", "add", "groq/groq/compound") == (
        1,
        "error: groq/groq/compound is not reachable: no endpoint of yours serves groq. "
        "Add one first: benchwarmers endpoint add groq --preset groq\n",
    )
