"""`benchwarmers mcp` as a real process: over stdio, as an MCP client spawns it, and over HTTP."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from typer.testing import CliRunner

from benchwarmers.bench.services import Bench
from benchwarmers.cli.app import app
from benchwarmers.cli.mcp import with_port
from benchwarmers.store import calls
from tests.fakes.upstream import FakeUpstream
from tests.support.benchserver import BenchServer, free_port
from tests.support.panels import collection

# The console script sits next to the interpreter, wherever the package is installed.
BENCHWARMERS = str(Path(sys.executable).parent / "benchwarmers")


def verdicts_for(server: BenchServer, call: str) -> list[dict]:
    async def read(bench: Bench) -> list[dict]:
        async with bench.state.read() as conn:
            return await calls.verdict_history(conn, call)

    return server.admin(read)


@pytest.fixture
def reviewers(bench_with_roster: BenchServer) -> BenchServer:
    collection(bench_with_roster, "reviewers", ["llama-3.3-70b", "qwen3-32b"])
    return bench_with_roster


async def test_over_stdio_an_agent_lists_asks_and_judges(reviewers: BenchServer):
    spawn = StdioServerParameters(command=BENCHWARMERS, args=["mcp"], env={"BENCHWARMERS_URL": reviewers.url})
    async with Client(spawn) as client:
        assert [t.name for t in (await client.list_tools()).tools] == ["list_collections", "ask", "verdict"]
        listed = await client.call_tool("list_collections", {})
        assert [c["name"] for c in listed.structured_content["collections"]] == ["bench/reviewers"]

        unknown = await client.call_tool("ask", {"collection": "nope", "prompt": "hi"})
        assert unknown.is_error is True
        assert unknown.content[0].text.startswith("Error executing tool ask: the bench refused (404): ")

        # The error did not end the process: the next call is answered.
        answered = await client.call_tool("ask", {"collection": "reviewers", "prompt": "review this"})
        seats = answered.structured_content["seats"]
        assert [s["call"].rpartition(".")[2] for s in seats] == ["member1", "member2", "explorer1", "explorer2"]
        assert all(f"call: {s['call']}\n" in answered.content[0].text for s in seats)
        judged = await client.call_tool("verdict", {"call": seats[1]["call"], "useful": False, "false": ["x"]})
        assert judged.structured_content == {"call": seats[1]["call"], "recorded": True, "replaced": False}

    [row] = await asyncio.to_thread(verdicts_for, reviewers, seats[1]["call"])
    assert (row["useful"], row["false"], row["current"]) == (False, ["x"], True)


def wait_for_port(port: int, process: subprocess.Popen[bytes], deadline: float = 20) -> None:
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        if process.poll() is not None:
            raise RuntimeError(f"benchwarmers mcp exited: {process.stderr.read().decode() if process.stderr else ''}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError("benchwarmers mcp --http did not start listening")


@pytest.fixture
def mcp_over_http(fake_upstream: FakeUpstream, tmp_path: Path) -> Iterator[str]:
    """`benchwarmers mcp --http` on a free loopback port, asking the fake (which records bearers)."""
    fake_upstream.listing("/v1/models", {"object": "list", "data": []})
    port = free_port()
    env = {
        "PATH": str(Path(sys.executable).parent),
        "HOME": str(tmp_path),
        "BENCHWARMERS_URL": fake_upstream.root_url,
        "BENCHWARMERS_KEY": "bwk_lent_by_the_server",
    }
    process = subprocess.Popen(
        [BENCHWARMERS, "mcp", "--http", "--bind", f"127.0.0.1:{port}"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        wait_for_port(port, process)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(timeout=10)


async def test_over_http_the_clients_own_key_wins_over_the_servers(mcp_over_http: str, fake_upstream: FakeUpstream):
    async with Client(mcp_over_http) as client:
        result = await client.call_tool("list_collections", {})
    assert result.is_error is False
    own_key = httpx2.AsyncClient(headers={"authorization": "Bearer bwk_the_agents_own"})
    async with own_key, Client(streamable_http_client(mcp_over_http, http_client=own_key)) as client:
        await client.call_tool("list_collections", {})
    assert [r.headers.get("authorization") for r in fake_upstream.requests] == [
        "Bearer bwk_lent_by_the_server",
        "Bearer bwk_the_agents_own",
    ]


def test_over_http_a_foreign_host_header_is_refused(mcp_over_http: str):
    # DNS rebinding: a page on evil.example resolving to 127.0.0.1 reaches the port but not the tools.
    initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}
    refused = httpx2.post(mcp_over_http, json=initialize, headers={"host": "evil.example"})
    assert refused.status_code == 421
    foreign_origin = httpx2.post(mcp_over_http, json=initialize, headers={"origin": "https://evil.example"})
    assert foreign_origin.status_code == 403


def test_http_beyond_loopback_needs_the_admin_token(monkeypatch):
    monkeypatch.delenv("BENCHWARMERS_ADMIN_TOKEN", raising=False)
    result = CliRunner().invoke(app, ["mcp", "--http", "--bind", "0.0.0.0:8124"])
    assert result.exit_code == 1
    assert result.stderr.startswith("error: refusing to listen on 0.0.0.0: it is not a loopback address")
    assert "BENCHWARMERS_ADMIN_TOKEN" in result.stderr


def test_bind_is_only_for_http():
    result = CliRunner().invoke(app, ["mcp", "--bind", "127.0.0.1:8124"])
    assert result.exit_code == 1
    assert result.stderr == "error: --bind is for --http; over stdio the MCP client starts this command itself\n"


@pytest.mark.parametrize(
    ("bind", "expected"),
    [
        ("127.0.0.1", "127.0.0.1:8124"),
        ("127.0.0.1:9000", "127.0.0.1:9000"),
        ("localhost", "localhost:8124"),
        ("[::1]", "[::1]:8124"),
        ("[::1]:9000", "[::1]:9000"),
        ("::1", "[::1]:8124"),
    ],
)
def test_a_bare_host_gets_the_mcp_port(bind, expected):
    assert with_port(bind, 8124) == expected
