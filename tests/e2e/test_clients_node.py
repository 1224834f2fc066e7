"""The client matrix, Node: openai-node, the Vercel AI SDK and Anthropic's TypeScript SDK (pinned in
tests/node_clients/package.json and its lock, installed with `npm ci`), unmodified, against a real bench
on loopback.

One node process runs every scenario (tests/node_clients/clients.mjs) against one bench for the
module; each test reads its scenario's result. `scripts/test` installs nodejs (and npm when nodejs
brings none).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.support.agents_fixtures import CITY, agents_bench  # noqa: F401

FOLDER = Path(__file__).parent.parent / "node_clients"
TEXT = "It is sunny in Paris."


def node_modules() -> None:
    """`npm ci` from the lock when its packages are not all installed (node_modules is not committed;
    a lock that gained a package since the last install installs again)."""
    installed = FOLDER / "node_modules" / ".package-lock.json"
    if installed.exists():
        wanted = set(json.loads((FOLDER / "package-lock.json").read_text())["packages"]) - {""}
        if wanted <= set(json.loads(installed.read_text())["packages"]):
            return
    npm = shutil.which("npm")
    assert npm is not None, "npm is not installed: apt-get install nodejs npm (scripts/test does)"
    subprocess.run([npm, "ci", "--no-audit", "--no-fund"], cwd=FOLDER, check=True, capture_output=True, timeout=300)


@pytest.fixture(scope="module")
def results(agents_bench) -> dict:  # noqa: F811
    node = shutil.which("node")
    assert node is not None, "node is not installed: apt-get install nodejs npm (scripts/test does)"
    node_modules()
    _, server = agents_bench
    done = subprocess.run(
        [node, str(FOLDER / "clients.mjs"), server.v1], capture_output=True, text=True, timeout=120, check=True
    )
    return json.loads(done.stdout)


@pytest.mark.parametrize(
    ("scenario", "expected"),
    [
        ("openai.chat", {"content": TEXT, "picked": "fake/talker"}),
        ("openai.models.retrieve", {"id": "bench/json", "reply": "all"}),
        ("openai.json_schema", CITY),
        ("openai.tools", {"finish": "tool_calls", "name": "get_weather"}),
        ("openai.chat.stream", {"text": TEXT}),
        ("openai.responses", {"text": TEXT, "status": "completed"}),
        ("openai.responses.stream", {"text": TEXT, "first": "response.created", "last": "response.completed"}),
        ("anthropic.message", {"text": TEXT, "stop": "end_turn", "reply": "pick"}),
        (
            "anthropic.stream",
            {
                "types": [
                    "message_start",
                    "content_block_start",
                    "content_block_delta",
                    "content_block_stop",
                    "message_delta",
                    "message_stop",
                ],
                "text": TEXT,
                "stop": "end_turn",
            },
        ),
        ("anthropic.tools", {"stop": "tool_use", "name": "get_weather", "input": CITY, "answer": TEXT}),
        ("anthropic.image", {"text": TEXT, "shape": "vision"}),
        ("anthropic.countTokens", {"positive": True}),
        ("anthropic.error", {"notFound": True, "status": 404, "type": "not_found_error"}),
        ("ai.generateText.chat", {"text": TEXT, "finishReason": "stop"}),
        ("ai.generateText.responses", {"text": TEXT}),
        ("ai.streamText", {"text": TEXT}),
        ("ai.streamText.responses", {"text": TEXT}),
        ("ai.generateObject", CITY),
        ("ai.generateObject.responses", CITY),
        ("ai.output.object", CITY),
        ("ai.tools", [{"name": "get_weather", "input": CITY}]),
    ],
)
def test_node_client(results, scenario, expected):
    assert results[scenario] == expected
