"""One bench for the agent tests and the client matrix: a fake provider with tool-calling and
JSON-answering models (and one that answers invalid JSON), a chat endpoint and a Responses-API
endpoint, and collections whose reply is one seat's message. Module-scoped: one server a module."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakes.upstream import FakeUpstream
from tests.support.benchserver import BenchServer, add_fake_endpoint, listed

CITY = {"city": "Paris", "population": 2100000}
CITY_JSON = '{"city": "Paris", "population": 2100000}'
CITY_SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "population": {"type": "integer"}},
    "required": ["city", "population"],
    "additionalProperties": False,
}
WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The weather in a city",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}
MODELS = ("tooler", "jsoner", "badjson", "wrongtool", "talker", "r-tooler", "r-talker", "r-down", "r-failed")
# A Response that failed: a 200 whose status is `failed`, as OpenAI reports a model error.
FAILED_RESPONSE = {
    "id": "resp_failed",
    "object": "response",
    "status": "failed",
    "model": "r-failed",
    "output": [],
    "error": {"code": "server_error", "message": "The model failed to generate a response."},
}


def script(fake: FakeUpstream) -> None:
    fake.script("tooler", tool_call=CITY)
    fake.script("jsoner", reply=CITY_JSON)
    fake.script("badjson", reply='{"city": "Paris", population: }')
    fake.script("wrongtool", tool_call={"path": "/"}, tool_name="delete_everything")
    fake.script("talker", reply="It is sunny in Paris.")
    # Called over the Responses API (the `responses` endpoint kind):
    fake.script("r-tooler", tool_call=CITY)
    fake.script("r-talker", reply="Bonjour from the Responses API.")
    fake.script("r-down", status=503)
    fake.script("r-failed", body=FAILED_RESPONSE)


def collections(server: BenchServer) -> None:
    def add(name: str, members: list[str], **extra: object) -> None:
        data = {"name": name, "members": members, "description": f"{name} work", "tags": ["test"], "max_explorers": 0}
        server.admin(lambda bench: bench.collections.add_collection({**data, **extra}))

    # JSON first the invalid one, so a pick must skip it; tools first the one calling a tool not offered.
    add("json", ["fake/badjson", "fake/jsoner"])
    add("tools", ["fake/wrongtool", "fake/tooler"])
    add("agents", ["fake/badjson", "fake/tooler", "fake/jsoner"], reply="pick")
    add("chatty", ["fake/talker", "fake/jsoner"])
    add("chosen", ["fake/talker", "fake/jsoner"], merger="fake/jsoner", shape="review")
    add("evidenced", ["fake/talker", "fake/jsoner"], shape="design")
    add("broken", ["fake/badjson"])
    add("relay", ["relay/r-talker", "relay/r-down"])
    add("relaytools", ["relay/r-tooler", "fake/talker"])
    add("relayfail", ["relay/r-failed"])


def start(tmp: Path) -> tuple[FakeUpstream, BenchServer]:
    fake = FakeUpstream().__enter__()
    script(fake)
    server = BenchServer(tmp / "home").start()
    chat_models = [listed(m, vision=m in ("talker", "jsoner")) for m in MODELS if not m.startswith("r-")]
    add_fake_endpoint(server, fake, models=chat_models + [listed(m) for m in MODELS if m.startswith("r-")])

    async def responses_endpoint(bench):  # type: ignore[no-untyped-def]
        await bench.endpoints.add_endpoint("relay", fake.base_url, "responses", api_key="sk-test-responses-0001")
        await bench.endpoints.refresh_endpoint("relay")

    server.admin(responses_endpoint)
    collections(server)
    return fake, server


@pytest.fixture(scope="module")
def agents_bench(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[FakeUpstream, BenchServer]]:
    fake, server = start(tmp_path_factory.mktemp("agents"))
    try:
        yield fake, server
    finally:
        server.stop()
        fake.stop()
