"""Sources beyond a plain OpenAI-compatible provider, end to end over a real bench server: models that
llm's plugins reach (BENCH_CLIENT=llm), CLIProxyAPI, and Open WebUI's passthrough for decision models."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from openai import OpenAI
from typer.testing import CliRunner

from benchwarmers.bench.presets import endpoint_options
from benchwarmers.bench.services import Bench
from benchwarmers.cli.app import app
from benchwarmers.errors import InvalidRequest, Unavailable, UpstreamRefused
from benchwarmers.settings import Settings
from benchwarmers.store import calls
from tests.fakes.upstream import FakeUpstream
from tests.support.benchserver import BenchServer, add_fake_endpoint, listed
from tests.support.gateway_fixtures import ROSTER

FIXTURES = Path(__file__).parent.parent / "fixtures" / "listings"
OWUI_KEY = "sk-owui-test-key-0123456789"
CPA_KEY = "cliproxy-test-key-0123456789"
REVIEW = {"choice": "review", "confidence": 0.88}


def add_collection(server: BenchServer, name: str, members: list[str], **extra: Any) -> None:
    data = {"name": name, "members": members, "description": f"{name} work", "tags": ["test"], **extra}
    server.admin(lambda bench: bench.collections.add_collection(data))


def openai_client(server: BenchServer) -> OpenAI:
    return OpenAI(base_url=server.v1, api_key="not-needed-on-loopback", max_retries=0, timeout=30)


async def recorded_seats(bench: Bench, panel_id: str) -> list[dict[str, Any]]:
    async with bench.state.read() as conn:
        [panel] = await calls.list_panels(conn, panel_id=panel_id)
    return [{"alias": s["alias"], "status": s["status"], "usage": s["usage"]} for s in panel["seats"]]


# -- llm ------------------------------------------------------------------------------------------


@pytest.fixture
def llm_server(tmp_path: Path, llm_plugin: Any) -> Iterator[BenchServer]:
    server = BenchServer(tmp_path / "home", client="llm").start()
    try:
        yield server
    finally:
        server.stop()


def add_llm_endpoint(server: BenchServer) -> dict[str, Any]:
    async def setup(bench: Bench) -> dict[str, Any]:
        options = endpoint_options("llm", {})
        await bench.endpoints.add_endpoint("llm", options["base_url"], options["kind"])
        return await bench.endpoints.refresh_endpoint("llm")

    return server.admin(setup)


def test_bench_client_llm_seats_a_model_through_a_plugin_hook(llm_server, fake):
    add_fake_endpoint(llm_server, fake, models=[listed(m, w, vision=m == "gemma-3-27b") for m, w in ROSTER.items()])
    assert add_llm_endpoint(llm_server) == {
        "listed": 4,
        "added": 4,
        "gone": 0,
        "went_paid": 0,
        "retiring": 0,
        "possibly_changed": 0,
    }
    add_collection(llm_server, "mixed", ["llm/bench-echo", "fake/llama-3.3-70b"], max_explorers=0)
    fake.script("llama-3.3-70b", usage={"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110})
    reply = openai_client(llm_server).chat.completions.create(
        model="bench/mixed",
        messages=[{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Is 7 prime?"}],
        temperature=0.2,
    )
    seats = reply.bench["seats"]
    assert [(s["seat"], s["alias"], s["status"]) for s in seats] == [
        ("member", "llm/bench-echo", "ok"),
        ("member", "fake/llama-3.3-70b", "ok"),
    ]
    assert seats[0]["answer"] == (
        'async system: Be brief.\nsystem: Be brief.\nuser: Is 7 prime?\noptions: {"temperature":0.2}'
    )
    assert seats[1]["answer"] == "answer from llama-3.3-70b"
    assert [r.json["model"] for r in fake.chat_requests] == ["llama-3.3-70b"]  # the llm seat made no HTTP call
    assert reply.usage.model_dump() == {
        "prompt_tokens": 112,
        "completion_tokens": 13,
        "total_tokens": 125,
        "completion_tokens_details": None,
        "prompt_tokens_details": None,
    }
    assert llm_server.admin(lambda b: recorded_seats(b, reply.bench["panel"])) == [
        {
            "alias": "llm/bench-echo",
            "status": "ok",
            "usage": {"prompt_tokens": 12, "completion_tokens": 3, "total_tokens": 15},
        },
        {
            "alias": "fake/llama-3.3-70b",
            "status": "ok",
            "usage": {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110},
        },
    ]


def test_a_key_llm_keeps_is_scrubbed_like_an_endpoints(llm_server, monkeypatch):
    monkeypatch.setenv("LLMTEST_KEY", "llmtest-secret-0123456789")
    assert add_llm_endpoint(llm_server)["listed"] == 5  # bench-keyed is listed once llm has its key
    add_collection(llm_server, "keyed", ["llm/bench-keyed"], max_explorers=0)
    reply = openai_client(llm_server).chat.completions.create(
        model="bench/keyed", messages=[{"role": "user", "content": "hello"}]
    )
    assert reply.bench["seats"][0]["answer"] == "keyed answer; a careless provider says the key was [redacted]"
    assert "llmtest-secret" not in reply.choices[0].message.content


def test_an_image_request_goes_through_the_built_in_client_only(llm_server, fake):
    add_fake_endpoint(llm_server, fake, models=[listed(m, w, vision=m == "gemma-3-27b") for m, w in ROSTER.items()])
    add_llm_endpoint(llm_server)
    # Ticking Vision on a model reached through llm changes nothing: llm is sent text only.
    llm_server.admin(lambda b: b.models.set_model("llm/bench-echo", vision=True))
    add_collection(llm_server, "eyes", ["llm/bench-echo", "fake/gemma-3-27b"], max_explorers=0)
    fake.clear()
    image = {"type": "image_url", "image_url": {"url": "https://photos.example/chair.jpg"}}
    reply = openai_client(llm_server).chat.completions.create(
        model="bench/eyes", messages=[{"role": "user", "content": [{"type": "text", "text": "What is it?"}, image]}]
    )
    assert [(s["alias"], s["status"]) for s in reply.bench["seats"]] == [("fake/gemma-3-27b", "ok")]
    assert reply.bench["skipped"] == [{"seat": "member", "alias": "llm/bench-echo", "why": "cannot take images"}]
    [sent] = fake.chat_requests
    assert sent.json["messages"][0]["content"][1] == image


def test_a_decision_model_and_a_merger_reached_through_llm(llm_server, fake, llm_plugin):
    add_fake_endpoint(llm_server, fake, models=[listed(m, w) for m, w in ROSTER.items()])
    add_llm_endpoint(llm_server)
    with pytest.raises(InvalidRequest) as native:
        llm_server.admin(lambda b: b.shapes.add_decision_model("llm/bench-script", "choice"))
    assert "an llm endpoint serves no decision API; add its model with --kind chat" in native.value.message
    llm_plugin.REPLIES.extend(['{"shape": "review", "confidence": 0.9}'] * 2)  # onboarding's probe, then the panel
    row = llm_server.admin(lambda b: b.shapes.add_decision_model("llm/bench-script", "chat"))
    assert row == {"alias": "llm/bench-script", "kind": "chat", "path": None}
    add_collection(llm_server, "merged", ["fake/llama-3.3-70b"], reply="merged", merger="llm/bench-echo")
    reply = openai_client(llm_server).chat.completions.create(
        model="bench/merged", messages=[{"role": "user", "content": "Find the bug in this loop."}]
    )
    bench = reply.bench
    assert (bench["shape"], bench["shape_by"]) == ("review", "decision model llm/bench-script at 0.90")
    merger = bench["merger"]
    assert (merger["alias"], merger["status"]) == ("llm/bench-echo", "ok")
    assert merger["chosen_as"] == "the collection's merger"
    assert merger["answer"].startswith("async system: Several models answered the same request.")
    assert llm_plugin.REPLIES == []


def test_the_cli_reads_bench_client(tmp_path, llm_plugin, monkeypatch):
    monkeypatch.setenv("BENCHWARMERS_HOME", str(tmp_path / "home"))
    runner = CliRunner()

    def cli(*args: str) -> tuple[int, str]:
        result = runner.invoke(app, list(args))
        return result.exit_code, result.output

    assert cli("endpoint", "add", "llm", "--preset", "llm") == (
        1,
        "error: an endpoint of kind llm reaches models through the llm library: run the bench with "
        "BENCH_CLIENT=llm (and pip install 'benchwarmers[llm]')\n",
    )
    monkeypatch.setenv("BENCH_CLIENT", "llm")
    assert cli("endpoint", "add", "llm", "--preset", "llm") == (
        0,
        "added endpoint llm (llm, llm:, key: no key)\nnext: benchwarmers endpoint refresh llm\n",
    )
    assert cli("endpoint", "refresh", "llm") == (0, "llm: 4 models listed, 4 new, 0 gone\n")


def test_without_bench_client_llm_an_llm_endpoint_is_refused(tmp_path, llm_plugin, monkeypatch):
    home = tmp_path / "home"

    async def steps() -> None:
        async with Bench(Settings(home=home, client="llm"), actor="test") as bench:
            await bench.endpoints.add_endpoint("llm", "llm:", "llm")
            with pytest.raises(InvalidRequest) as wrong_url:
                await bench.endpoints.add_endpoint("llm2", "http://127.0.0.1:9/v1", "llm")
            assert wrong_url.value.message == (
                "an llm endpoint has no URL (its plugins know where they call): give llm: or use --preset llm"
            )
            with pytest.raises(InvalidRequest) as keyed:
                await bench.endpoints.add_endpoint("llm2", "llm:", "llm", api_key="sk-test-0123456789abcdef")
            assert keyed.value.param == "api_key"
        async with Bench(Settings(home=home), actor="test") as bench:
            with pytest.raises(InvalidRequest) as off:
                await bench.endpoints.add_endpoint("llm2", "llm:", "llm")
            assert (off.value.code, off.value.message) == (
                "llm_client_off",
                "an endpoint of kind llm reaches models through the llm library: run the bench with "
                "BENCH_CLIENT=llm (and pip install 'benchwarmers[llm]')",
            )
            with pytest.raises(UpstreamRefused) as refused:
                await bench.endpoints.refresh_endpoint("llm")
            assert refused.value.message == (
                "refreshing llm failed: bad request: models of an llm endpoint are reached through the llm "
                "library, which this bench runs only with BENCH_CLIENT=llm"
            )
        # BENCH_CLIENT=llm without the library: the bench does not start.
        monkeypatch.setattr("benchwarmers.bench.clients.llm_installed", lambda: False)
        with pytest.raises(Unavailable) as missing:
            await Bench(Settings(home=home, client="llm")).open()
        assert missing.value.message == (
            "BENCH_CLIENT=llm needs the llm library: pip install 'benchwarmers[llm]' (or unset BENCH_CLIENT)"
        )

    asyncio.run(steps())


# -- CLIProxyAPI ------------------------------------------------------------------------------------


def test_cliproxyapi_lists_and_seats_subscription_models(server, fake_upstream: FakeUpstream, monkeypatch):
    monkeypatch.setenv("CLIPROXY_API_KEY", CPA_KEY)
    fake_upstream.listing("/v1/models", json.loads((FIXTURES / "cliproxy.json").read_text()))
    fake_upstream.script("claude-sonnet-4-5-20250929", reply="claude says: off by one")
    fake_upstream.script("gemini-2.5-pro", reply="gemini says: fine")

    async def setup(bench: Bench) -> dict[str, Any]:
        options = endpoint_options("cliproxy", base_url=fake_upstream.base_url)
        assert (options["kind"], options["api_key_env"]) == ("cliproxy", "CLIPROXY_API_KEY")
        assert options["free_tier"] is False
        await bench.endpoints.add_endpoint("cpa", **options)
        return await bench.endpoints.refresh_endpoint("cpa")

    assert server.admin(setup) == {
        "listed": 5,
        "added": 5,
        "gone": 0,
        "went_paid": 0,
        "retiring": 0,
        "possibly_changed": 0,
    }
    add_collection(server, "subs", ["cpa/claude-sonnet-4-5-20250929", "cpa/gemini-2.5-pro"])
    fake_upstream.clear()
    reply = openai_client(server).chat.completions.create(
        model="bench/subs", messages=[{"role": "user", "content": "Review: for i in range(len(xs) + 1)"}]
    )
    # Two members, and no explorer: nothing a subscription serves is free per call.
    assert [(s["seat"], s["alias"], s["answer"]) for s in reply.bench["seats"]] == [
        ("member", "cpa/claude-sonnet-4-5-20250929", "claude says: off by one"),
        ("member", "cpa/gemini-2.5-pro", "gemini says: fine"),
    ]
    sent = fake_upstream.chat_requests
    assert sorted(r.json["model"] for r in sent) == ["claude-sonnet-4-5-20250929", "gemini-2.5-pro"]
    assert {r.path for r in sent} == {"/v1/chat/completions"}
    assert {r.headers["authorization"] for r in sent} == {f"Bearer {CPA_KEY}"}


# -- Open WebUI -------------------------------------------------------------------------------------


def test_an_open_webui_decision_model_answers_through_its_passthrough(server, fake_upstream: FakeUpstream):
    fake_upstream.listing("/api/models", json.loads((FIXTURES / "openwebui.json").read_text()))
    # Open WebUI hands `/openai/{path}` to its first connection: here the fake's own /v1, which serves
    # the native decision API at `systemone` only (as Ollama does).
    fake_upstream.passthrough("/openai", "/v1")
    fake_upstream.listing("/v1/systemone", {"model": "llama3.2:3b", "answers": {"shape": REVIEW}})
    fake_upstream.script("openrouter.google/gemini-2.5-flash", reply="looks fine")

    async def setup(bench: Bench) -> dict[str, Any]:
        await bench.endpoints.add_endpoint("owui", f"{fake_upstream.root_url}/api", "openwebui", api_key=OWUI_KEY)
        await bench.endpoints.refresh_endpoint("owui")
        return await bench.shapes.add_decision_model("owui/llama3.2:3b", "choice")

    assert server.admin(setup) == {"alias": "owui/llama3.2:3b", "kind": "choice", "path": "systemone"}
    # Onboarding asked `decisions` first (the connection has none), then `systemone`, both through the passthrough.
    probes = [r for r in fake_upstream.requests if r.method == "POST"]
    assert [r.path for r in probes] == ["/openai/decisions", "/openai/systemone"]
    assert {r.headers["authorization"] for r in probes} == {f"Bearer {OWUI_KEY}"}
    add_collection(server, "owui", ["owui/openrouter.google/gemini-2.5-flash"])
    fake_upstream.clear()
    reply = openai_client(server).chat.completions.create(
        model="bench/owui", messages=[{"role": "user", "content": "Find the bug in this loop."}]
    )
    assert (reply.bench["shape"], reply.bench["shape_by"]) == ("review", "decision model owui/llama3.2:3b at 0.88")
    [asked] = [r for r in fake_upstream.requests if r.path == "/openai/systemone"]
    assert (asked.json["model"], asked.json["questions"]["shape"]["type"]) == ("llama3.2:3b", "choice")
    assert [r.path for r in fake_upstream.chat_requests] == ["/api/chat/completions"]
