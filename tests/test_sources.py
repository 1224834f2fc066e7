"""Sources beyond a plain OpenAI-compatible provider, end to end over a real bench server: CLIProxyAPI,
and Open WebUI's passthrough for decision models."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from openai import OpenAI

from benchwarmers.bench.admin.presets import endpoint_options
from benchwarmers.bench.services import Bench
from tests.benchserver import BenchServer
from tests.fakes.upstream import FakeUpstream

FIXTURES = Path(__file__).parent / "fixtures" / "listings"
OWUI_KEY = "sk-owui-test-key-0123456789"
CPA_KEY = "cliproxy-test-key-0123456789"
REVIEW = {"choice": "review", "confidence": 0.88}


def add_collection(server: BenchServer, name: str, members: list[str], **extra: Any) -> None:
    data = {"name": name, "members": members, "description": f"{name} work", "tags": ["test"], **extra}
    server.admin(lambda bench: bench.collections.add_collection(data))


def openai_client(server: BenchServer) -> OpenAI:
    return OpenAI(base_url=server.v1, api_key="not-needed-on-loopback", max_retries=0, timeout=30)


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

    assert server.admin(setup) == {"listed": 5, "added": 5, "gone": 0, "went_paid": 0, "retiring": 0}
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
