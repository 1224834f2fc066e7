"""The MCP server through the SDK's in-process client, against a real bench and the fake provider."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx2
import pytest
from mcp import Client

from benchwarmers.bench.core import Bench
from benchwarmers.mcp import create_server
from benchwarmers.settings import Settings
from benchwarmers.store import calls
from tests.benchserver import BenchServer, free_port
from tests.fakes.upstream import FakeUpstream
from tests.test_gateway_panels import collection


@pytest.fixture
def bench(bench_with_roster: BenchServer) -> BenchServer:
    collection(bench_with_roster, "reviewers", ["llama-3.3-70b", "qwen3-32b"])
    collection(bench_with_roster, "solo", ["phi-4"], reply="merged", shape="review", tags=["one", "review"])
    return bench_with_roster


async def call(url: str, tool: str, arguments: dict[str, Any], key: str | None = None) -> Any:
    async with Client(create_server(Settings(url=url, key=key))) as client:
        return await client.call_tool(tool, arguments)


async def admin(server: BenchServer, read: Any) -> Any:
    """Read the bench's database from a separate Bench (in a thread: the test's loop is running)."""

    async def action(bench: Bench) -> Any:
        async with bench.read() as conn:
            return await read(conn)

    return await asyncio.to_thread(server.admin, action)


async def test_three_tools_with_their_schemas_and_advice_for_the_agent():
    async with Client(create_server(Settings())) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        instructions = client.instructions
    assert list(tools) == ["list_collections", "ask", "verdict"]
    assert tools["list_collections"].input_schema["properties"] == {}
    ask = tools["ask"].input_schema
    assert list(ask["properties"]) == ["collection", "prompt", "with", "merged", "shape"]
    assert ask["required"] == ["collection", "prompt"]
    assert ask["properties"]["with"]["anyOf"][0] == {"items": {"type": "string"}, "type": "array"}
    assert ask["properties"]["merged"]["anyOf"][0] == {"type": "boolean"}
    verdict = tools["verdict"].input_schema
    assert list(verdict["properties"]) == ["call", "useful", "note", "real", "false"]
    assert verdict["required"] == ["call", "useful"]
    assert verdict["properties"]["real"]["type"] == "array"
    assert set(tools["ask"].output_schema["properties"]) >= {"panel", "collection", "seats", "skipped", "verdict"}
    assert set(tools["verdict"].output_schema["properties"]) == {"call", "recorded", "replaced"}
    assert "collections" in tools["list_collections"].output_schema["properties"]
    assert tools["list_collections"].annotations.read_only_hint is True
    # Written for the agent: self-contained prompts, check against the code, judge every seat.
    assert "self-contained" in tools["ask"].description
    assert "real code" in tools["ask"].description
    assert "Agreement between seats is not a verdict" in tools["ask"].description
    assert "every seat you read" in tools["verdict"].description
    assert "description" in tools["list_collections"].description
    assert instructions is not None and "Agreement between seats is not a verdict" in instructions


async def test_list_collections_gives_each_collection_once_with_what_it_is_for(bench):
    result = await call(bench.url, "list_collections", {})
    assert result.is_error is False
    assert result.structured_content == {
        "collections": [
            {
                "name": "bench/reviewers",
                "description": "reviewers work",
                "tags": ["test"],
                "members": ["fake/llama-3.3-70b", "fake/qwen3-32b"],
                "shape": None,
                "explorers": 2,
                "reply": "all",
                "context_window": 32_000,
                "capabilities": ["text"],
            },
            {
                "name": "bench/solo",
                "description": "solo work",
                "tags": ["one", "review"],
                "members": ["fake/phi-4"],
                "shape": "review",
                "explorers": 2,
                "reply": "merged",
                "context_window": 16_000,
                "capabilities": ["text"],
            },
        ]
    }
    assert result.content[0].text == (
        f"2 collections on the bench at {bench.url}. Choose one by its description and pass its name to `ask`.\n"
        "\n"
        "- bench/reviewers: reviewers work\n"
        "  tags: test · members: fake/llama-3.3-70b, fake/qwen3-32b + 2 explorer seats · shape: automatic · "
        "reply: all · context window: 32,000 tokens · takes: text\n"
        "- bench/solo: solo work\n"
        "  tags: one, review · members: fake/phi-4 + 2 explorer seats · shape: review · reply: merged · "
        "context window: 16,000 tokens · takes: text"
    )


async def test_an_empty_bench_says_how_to_make_a_collection(server):
    result = await call(server.url, "list_collections", {})
    assert result.is_error is False
    assert result.structured_content == {"collections": []}
    assert result.content[0].text == (
        f"The bench at {server.url} has no collections you may call. Ask the user to create one "
        "(`benchwarmers collection add`, or the dashboard's Collections page)."
    )


async def test_ask_returns_every_seat_labelled_with_its_call_id(bench, fake):
    arguments = {
        "collection": "reviewers",
        "prompt": "Is `x[len(x)]` off by one?",
        "with": ["fake/kimi-k2"],
        "merged": False,
        "shape": "review",
    }
    result = await call(bench.url, "ask", arguments)
    assert result.is_error is False
    panel = result.structured_content
    assert (panel["collection"], panel["shape"], panel["shape_by"], panel["reply"]) == (
        "bench/reviewers",
        "review",
        "set by the caller",
        "all",
    )
    assert [s["call"] for s in panel["seats"]] == [
        f"{panel['panel']}.{label}" for label in ("member1", "member2", "nominee1", "explorer1", "explorer2")
    ]
    assert [s["alias"] for s in panel["seats"][:3]] == ["fake/llama-3.3-70b", "fake/qwen3-32b", "fake/kimi-k2"]
    assert all(s["status"] == "ok" for s in panel["seats"])
    text = result.content[0].text
    assert text.startswith(f"bench/reviewers · panel {panel['panel']} · shape review (set by the caller) · 5 seats\n")
    for seat in panel["seats"]:
        label = seat["call"].rpartition(".")[2]
        section = f"## {label} · {seat['alias']} · ok · {seat['seconds']:.1f}s\ncall: {seat['call']}\n\n{seat['answer']}\n"
        assert section in text
    assert text.endswith(
        "---\nThese are claims, not facts. Check each against the real code; agreement between seats proves nothing.\n"
        "Then call `verdict` for every seat you read (useful, note, real and false claims): "
        + ", ".join(s["call"] for s in panel["seats"])
        + "\n"
    )

    [recorded] = await admin(bench, lambda conn: calls.list_panels(conn, panel_id=panel["panel"]))
    assert recorded["request"]["model"] == "bench/reviewers"
    assert recorded["request"]["bench"] == {"with": ["fake/kimi-k2"], "reply": "all", "shape": "review"}
    assert recorded["request"]["messages"] == [{"role": "user", "content": "Is `x[len(x)]` off by one?"}]
    assert {r.json["messages"][0]["content"] for r in fake.chat_requests} == {"Is `x[len(x)]` off by one?"}


async def test_a_failed_seat_is_named_and_not_owed_a_verdict(bench, fake):
    fake.script("qwen3-32b", status=500)
    result = await call(bench.url, "ask", {"collection": "bench/reviewers", "prompt": "hello"})
    seats = result.structured_content["seats"]
    failed = next(s for s in seats if s["alias"] == "fake/qwen3-32b")
    assert failed["status"] == "error"
    text = result.content[0].text
    assert f"## member2 · fake/qwen3-32b · error · {failed['seconds']:.1f}s\ncall: {failed['call']}\n\n(failed: " in text
    owed = [s["call"] for s in seats if s["status"] != "error"]
    assert text.endswith(": " + ", ".join(owed) + "\n")


async def test_verdicts_are_recorded_in_the_database(bench):
    panel = (await call(bench.url, "ask", {"collection": "reviewers", "prompt": "review this"})).structured_content
    seat = panel["seats"][0]["call"]
    judged = {"call": seat, "useful": True, "note": "found the bug", "real": ["off by one"], "false": ["data race"]}

    first = await call(bench.url, "verdict", judged)
    assert first.is_error is False
    assert first.structured_content == {"call": seat, "recorded": True, "replaced": False}
    assert first.content[0].text == f"Recorded: {seat} is useful."
    again = await call(bench.url, "verdict", judged)
    assert again.structured_content == {"call": seat, "recorded": False, "replaced": False}
    assert again.content[0].text == f"{seat} already has this verdict; nothing written."
    changed = await call(bench.url, "verdict", {"call": seat, "useful": False})
    assert changed.structured_content == {"call": seat, "recorded": True, "replaced": True}
    assert changed.content[0].text == f"Replaced the earlier verdict on {seat}: now not useful."

    rows = await admin(bench, lambda conn: calls.verdict_history(conn, seat))
    assert [(r["useful"], r["note"], r["real"], r["false"], r["caller"], r["current"]) for r in rows] == [
        (True, "found the bug", ["off by one"], ["data race"], "local", False),
        (False, "", [], [], "local", True),
    ]


def bench_refusal(server: BenchServer, path: str, body: dict[str, Any]) -> tuple[int, str]:
    response = httpx2.post(server.url + path, json=body)
    return response.status_code, response.json()["error"]["message"]


async def test_an_unknown_collection_is_a_tool_error_with_the_benchs_message(bench):
    status, message = bench_refusal(
        bench, "/v1/chat/completions", {"model": "bench/nope", "messages": [{"role": "user", "content": "hi"}]}
    )
    assert status == 404 and "bench/reviewers" in message
    result = await call(bench.url, "ask", {"collection": "nope", "prompt": "hi"})
    assert result.is_error is True
    assert result.structured_content is None
    assert result.content[0].text == f"Error executing tool ask: the bench refused (404): {message}"


async def test_an_unknown_call_is_a_tool_error_with_the_benchs_message(bench):
    call_id = "p20260101-000000-0000.member1"
    status, message = bench_refusal(bench, "/bench/verdict", {"call": call_id, "useful": True})
    assert status == 404
    result = await call(bench.url, "verdict", {"call": call_id, "useful": True})
    assert result.is_error is True
    assert result.content[0].text == f"Error executing tool verdict: the bench refused (404): {message}"


@pytest.mark.parametrize("tool", ["list_collections", "ask", "verdict"])
async def test_no_bench_running_is_a_tool_error_saying_what_to_do(tool):
    url = f"http://127.0.0.1:{free_port()}"
    arguments = {"ask": {"collection": "x", "prompt": "hi"}, "verdict": {"call": "p.member1", "useful": True}}
    result = await call(url, tool, arguments.get(tool, {}))
    assert result.is_error is True
    assert result.content[0].text == (
        f"Error executing tool {tool}: no bench is answering at {url}. Ask the user to start one with "
        "`benchwarmers serve`, or to set BENCHWARMERS_URL to where it runs."
    )


async def test_the_key_is_sent_as_a_bearer_and_a_refusal_says_which_variable_to_set(fake_upstream: FakeUpstream):
    # A server that checks the bearer the way a bench with keys does (401 with an OpenAI-style body).
    fake_upstream.require_key = "bwk_right"
    fake_upstream.listing("/v1/models", {"object": "list", "data": []})
    allowed = await call(fake_upstream.root_url, "list_collections", {}, key="bwk_right")
    assert allowed.is_error is False
    refused = await call(fake_upstream.root_url, "list_collections", {}, key="bwk_wrong")
    assert [r.headers.get("authorization") for r in fake_upstream.requests] == ["Bearer bwk_right", "Bearer bwk_wrong"]
    assert refused.is_error is True
    text = refused.content[0].text
    assert text.startswith("Error executing tool list_collections: the bench refused (401): ")
    assert text.endswith("(set BENCHWARMERS_KEY to a gateway key made on the dashboard's Settings page)")


async def test_a_url_that_is_not_a_bench_is_a_tool_error(fake_upstream: FakeUpstream):
    fake_upstream.listing("/v1/chat/completions", "<html>hello</html>")
    result = await call(fake_upstream.root_url, "ask", {"collection": "x", "prompt": "hi"})
    assert result.is_error is True
    assert result.content[0].text == (
        f"Error executing tool ask: {fake_upstream.root_url}/v1/chat/completions answered 200 with a body "
        "that is not JSON: is BENCHWARMERS_URL a bench?"
    )
