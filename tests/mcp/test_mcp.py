"""The MCP server through the SDK's in-process client, against a real bench and the fake provider."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client

from benchwarmers.bench.services import Bench
from benchwarmers.mcp import create_server
from benchwarmers.settings import Settings
from benchwarmers.store import calls
from tests.fakes.upstream import FakeUpstream
from tests.support.benchserver import BenchServer, add_fake_endpoint, free_port, listed
from tests.support.gateway_fixtures import ROSTER
from tests.support.panels import collection


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
        async with bench.state.read() as conn:
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
        section = (
            f"## {label} · {seat['alias']} · ok · {seat['seconds']:.1f}s\ncall: {seat['call']}\n\n{seat['answer']}\n"
        )
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


async def test_merged_puts_the_merged_answer_first_and_owes_it_a_verdict_too(bench, fake):
    fake.script("llama-3.3-70b", reply="Both seats say it is off by one.")
    result = await call(bench.url, "ask", {"collection": "reviewers", "prompt": "off by one?", "merged": True})
    panel = result.structured_content
    merger = panel["merger"]
    assert (panel["reply"], merger["call"], merger["alias"], merger["status"]) == (
        "merged",
        f"{panel['panel']}.merger",
        "fake/llama-3.3-70b",
        "ok",
    )
    text = result.content[0].text
    merged = f"## merged answer · fake/llama-3.3-70b · call {merger['call']}\n\nBoth seats say it is off by one."
    assert merged in text
    assert text.index(merged) < text.index("## member1 · ")
    assert text.endswith(", ".join([*(s["call"] for s in panel["seats"]), merger["call"]]) + "\n")


async def test_a_failed_seat_is_named_and_not_owed_a_verdict(bench, fake):
    fake.script("qwen3-32b", status=500)
    result = await call(bench.url, "ask", {"collection": "bench/reviewers", "prompt": "hello"})
    seats = result.structured_content["seats"]
    failed = next(s for s in seats if s["alias"] == "fake/qwen3-32b")
    assert failed["status"] == "error"
    text = result.content[0].text
    assert (
        f"## member2 · fake/qwen3-32b · error · {failed['seconds']:.1f}s\ncall: {failed['call']}\n\n(failed: " in text
    )
    owed = [s["call"] for s in seats if s["status"] != "error"]
    assert text.endswith(": " + ", ".join(owed) + "\n")


async def test_a_retired_member_is_named_with_why_and_not_owed_a_verdict(bench, fake):
    await asyncio.to_thread(bench.admin, lambda b: b.gateway_settings.set_gateway(failing_after=1))
    fake.script("qwen3-32b", status=500)
    await call(bench.url, "ask", {"collection": "bench/reviewers", "prompt": "hello"})  # retires it
    result = await call(bench.url, "ask", {"collection": "bench/reviewers", "prompt": "hello again"})
    seats = result.structured_content["seats"]
    retired = next(s for s in seats if s["alias"] == "fake/qwen3-32b")
    assert (retired["status"], retired["seconds"]) == ("retired", 0.0)
    text = result.content[0].text
    assert f"## member2 · fake/qwen3-32b · retired · 0.0s\ncall: {retired['call']}\n\n({retired['error']})\n" in text
    assert retired["error"].startswith("retired: not asked, it failed its last seat; next probe ")
    owed = [s["call"] for s in seats if s["status"] == "ok"]
    assert len(owed) == len(seats) - 1
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


def bench_refusal(server: BenchServer, path: str, body: dict[str, Any], key: str | None = None) -> tuple[int, str]:
    headers = {"authorization": f"Bearer {key}"} if key else {}
    response = httpx2.post(server.url + path, json=body, headers=headers)
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


@pytest.fixture
def keyed(tmp_path: Path, fake: FakeUpstream) -> Iterator[tuple[BenchServer, str]]:
    """A bench that requires gateway keys, and a key that may call only `reviewers`."""
    server = BenchServer(tmp_path / "keyed", require_keys=True).start()
    try:
        add_fake_endpoint(server, fake, models=[listed(m, w) for m, w in ROSTER.items()])
        collection(server, "reviewers", ["llama-3.3-70b", "qwen3-32b"])
        collection(server, "private", ["phi-4"])
        key, _ = server.admin(lambda bench: bench.keys.create("agent", ["reviewers"]))
        yield server, key
    finally:
        server.stop()


@pytest.mark.parametrize("key", [None, "bwk_" + "A" * 43])
async def test_a_refused_key_is_a_tool_error_saying_which_variable_to_set(keyed, key):
    server, _ = keyed
    headers = {"authorization": f"Bearer {key}"} if key else {}
    refused = httpx2.get(server.url + "/v1/models", headers=headers)
    assert refused.status_code == 401
    result = await call(server.url, "list_collections", {}, key=key)
    assert result.is_error is True
    assert result.content[0].text == (
        f"Error executing tool list_collections: the bench refused (401): {refused.json()['error']['message']} "
        "(set BENCHWARMERS_KEY to a gateway key made on the dashboard's Settings page)"
    )


async def test_a_key_lists_asks_and_judges_within_its_scope(keyed):
    server, key = keyed
    listed_ = await call(server.url, "list_collections", {}, key=key)
    assert [c["name"] for c in listed_.structured_content["collections"]] == ["bench/reviewers"]
    status, message = bench_refusal(
        server,
        "/v1/chat/completions",
        {"model": "bench/private", "messages": [{"role": "user", "content": "hi"}]},
        key=key,
    )
    assert status == 403
    outside = await call(server.url, "ask", {"collection": "private", "prompt": "hi"}, key=key)
    assert outside.content[0].text == f"Error executing tool ask: the bench refused (403): {message}"
    panel = (await call(server.url, "ask", {"collection": "reviewers", "prompt": "hi"}, key=key)).structured_content
    seat = panel["seats"][0]["call"]
    judged = await call(server.url, "verdict", {"call": seat, "useful": True}, key=key)
    assert judged.structured_content == {"call": seat, "recorded": True, "replaced": False}
    [row] = await admin(server, lambda conn: calls.verdict_history(conn, seat))
    assert row["caller"] == "agent"


async def test_beyond_loopback_the_server_never_lends_its_own_key(fake_upstream: FakeUpstream):
    # Over stdio or in process there is no client bearer to forward, so nothing is sent at all.
    settings = Settings(url=fake_upstream.root_url, key="bwk_the_servers_own")
    async with Client(create_server(settings, lend_key=False)) as client:
        result = await client.call_tool("list_collections", {})
    assert result.is_error is True
    assert result.content[0].text == (
        "Error executing tool list_collections: send your gateway key to this MCP server as "
        "`Authorization: Bearer <key>`"
    )
    assert fake_upstream.requests == []


async def test_a_url_that_is_not_a_bench_is_a_tool_error(fake_upstream: FakeUpstream):
    fake_upstream.listing("/v1/chat/completions", "<html>hello</html>")
    result = await call(fake_upstream.root_url, "ask", {"collection": "x", "prompt": "hi"})
    assert result.is_error is True
    assert result.content[0].text == (
        f"Error executing tool ask: {fake_upstream.root_url}/v1/chat/completions answered 200 with a body "
        "that is not JSON: is BENCHWARMERS_URL a bench?"
    )


async def test_the_mergers_reason_says_when_its_evidence_is_a_tie(bench, fake):
    first = await call(bench.url, "ask", {"collection": "reviewers", "prompt": "off by one?", "shape": "review"})
    calls_by = {s["alias"]: s["call"] for s in first.structured_content["seats"]}
    for alias, useful in (("fake/llama-3.3-70b", True), ("fake/qwen3-32b", False)):
        await call(bench.url, "verdict", {"call": calls_by[alias], "useful": useful, "note": "checked"})
    args = {"collection": "reviewers", "prompt": "off by one?", "shape": "review", "merged": True}
    result = await call(bench.url, "ask", args)
    merger = result.structured_content["merger"]
    # 1/1 against 0/1: llama leads by the rule, but the intervals overlap, and the agent is told.
    reason = (
        "the best evidence on review among the panel's models: 1/1 useful; tied with fake/qwen3-32b (intervals overlap)"
    )
    assert (merger["alias"], merger["chosen_as"]) == ("fake/llama-3.3-70b", reason)
    assert f"Merger fake/llama-3.3-70b chosen as {reason}.\n" in result.content[0].text
