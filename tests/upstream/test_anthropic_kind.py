"""Anthropic-format upstreams, called: endpoints of kind `anthropic` seat their models over the Messages
API (`x-api-key`, `anthropic-version`, system lifted out, images and tools as blocks, max_tokens always
sent), their listing read page after page, their errors and rate-limit headers read like any other
provider's. The fake's Anthropic face is held to the real `anthropic` SDK first."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import anthropic
import orjson
import pytest
from openai import OpenAI
from sqlalchemy import select
from typer.testing import CliRunner

from benchwarmers.cli.app import app
from benchwarmers.store.changes import list_changes
from benchwarmers.store.schema import seats
from benchwarmers.upstream.anthropic_client import messages_request, read_message, usage_of
from benchwarmers.upstream.client import EndpointRef, UpstreamPool
from benchwarmers.upstream.failures import FailureKind, UpstreamFailure
from benchwarmers.upstream.listings import fetch_listing
from benchwarmers.upstream.ratelimits import retry_after_seconds
from tests.fakes.upstream import FakeUpstream
from tests.support.agents_fixtures import CITY
from tests.support.benchserver import BenchServer

KEY = "sk-ant-test-0000000000000001"
PNG_DATA = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
PNG = f"data:image/png;base64,{PNG_DATA}"
WEATHER = {
    "name": "get_weather",
    "description": "The weather in a city",
    "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
}
# What Anthropic sends on every reply (its rate limits page): per-minute windows, resets as RFC 3339.
LIMIT_HEADERS = {
    "anthropic-ratelimit-requests-limit": "50",
    "anthropic-ratelimit-requests-remaining": "49",
    "anthropic-ratelimit-requests-reset": "2026-12-02T00:00:01Z",
    "anthropic-ratelimit-tokens-limit": "90000",
    "anthropic-ratelimit-tokens-remaining": "89000",
    "anthropic-ratelimit-tokens-reset": "2026-12-02T00:00:02Z",
    "anthropic-ratelimit-input-tokens-limit": "50000",
    "anthropic-ratelimit-input-tokens-remaining": "49500",
    "anthropic-ratelimit-input-tokens-reset": "2026-12-02T00:00:02Z",
    "anthropic-ratelimit-output-tokens-limit": "10000",
    "anthropic-ratelimit-output-tokens-remaining": "10000",
    "anthropic-ratelimit-output-tokens-reset": "2026-12-02T00:00:00Z",
}
CACHED = {"input_tokens": 20, "output_tokens": 7, "cache_creation_input_tokens": 100, "cache_read_input_tokens": 300}


# A Message that stopped at its max_tokens.
MESSAGE = {
    "id": "msg_cut",
    "type": "message",
    "role": "assistant",
    "model": "claude-cut",
    "content": [],
    "stop_reason": "max_tokens",
    "stop_sequence": None,
    "usage": {"input_tokens": 9, "output_tokens": 4},
}


def script(fake: FakeUpstream) -> None:
    fake.script("claude-talker", reply="Hello from the Messages API.", headers=LIMIT_HEADERS, usage=CACHED)
    fake.script("claude-tooler", tool_call=CITY)
    fake.script("claude-busy", status=429, headers={"retry-after": "17"})
    fake.script("claude-overloaded", status=529)
    fake.script("claude-small", context_limit=1000)
    fake.script("claude-forbidden", status=403)
    fake.script("claude-endless", huge=5 * 1024 * 1024)  # past the 1 MiB answer cap and what a seat reads
    fake.script("claude-echo", echo=True)  # a careless provider: it quotes the key it was sent
    fake.script("claude-cut", body={**MESSAGE, "content": [{"type": "text", "text": "The bug is on"}]})
    fake.anthropic_facts["claude-talker"] = {
        "max_input_tokens": 200_000,
        "max_tokens": 64_000,
        "capabilities": {"image_input": {"supported": True}},
    }


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeUpstream]:
    with FakeUpstream(require_key=KEY) as upstream:
        script(upstream)
        yield upstream


@pytest.fixture(scope="module")
def sdk(fake: FakeUpstream) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=fake.anthropic_url, api_key=KEY, max_retries=0, timeout=30)


# -- the fake's Anthropic face, held to the real SDK --------------------------------------------------


def test_the_fake_answers_the_anthropic_sdk_as_anthropic_does(fake, sdk):
    message = sdk.messages.create(
        model="claude-talker", max_tokens=100, system="Be brief.", messages=[{"role": "user", "content": "Hi"}]
    )
    assert (message.type, message.role, message.stop_reason) == ("message", "assistant", "end_turn")
    assert [(b.type, b.text) for b in message.content] == [("text", "Hello from the Messages API.")]
    assert message.usage.cache_read_input_tokens == 300
    # This SDK sends its key as a bearer token and a newer version; the fake takes either way, as Anthropic does.
    sent = fake.message_requests[-1]
    assert (sent.headers["authorization"], bool(sent.headers["anthropic-version"])) == (f"Bearer {KEY}", True)

    called = sdk.messages.create(
        model="claude-tooler", max_tokens=100, tools=[WEATHER], messages=[{"role": "user", "content": "Paris?"}]
    )
    [use] = called.content
    assert (called.stop_reason, use.type, use.name, use.input) == ("tool_use", "tool_use", "get_weather", CITY)

    with sdk.messages.stream(model="claude-talker", max_tokens=100, messages=[{"role": "user", "content": "Hi"}]) as s:
        streamed = "".join(s.text_stream)
        final = s.get_final_message()
    assert streamed == final.content[0].text == "Hello from the Messages API."


def test_the_fakes_errors_are_the_sdks_exceptions_and_its_listing_pages(fake, sdk):
    hi = [{"role": "user", "content": "Hi"}]
    with pytest.raises(anthropic.RateLimitError) as limited:
        sdk.messages.create(model="claude-busy", max_tokens=10, messages=hi)
    assert limited.value.body["error"]["type"] == "rate_limit_error"
    assert limited.value.response.headers["retry-after"] == "17"
    with pytest.raises(anthropic.OverloadedError) as overloaded:
        sdk.messages.create(model="claude-overloaded", max_tokens=10, messages=hi)
    assert overloaded.value.body["error"] == {"type": "overloaded_error", "message": "Overloaded"}
    with pytest.raises(anthropic.BadRequestError) as long:
        sdk.messages.create(model="claude-small", max_tokens=10, messages=[{"role": "user", "content": "x" * 8000}])
    assert long.value.body["error"]["message"] == "prompt is too long: 2000 tokens > 1000 maximum"
    with pytest.raises(anthropic.NotFoundError):
        sdk.messages.create(model="claude-nobody", max_tokens=10, messages=hi)
    with pytest.raises(anthropic.AuthenticationError):
        anthropic.Anthropic(base_url=fake.anthropic_url, api_key="wrong", max_retries=0).models.list()

    fake.anthropic_page = 2
    try:
        listed = [m.id for m in sdk.models.list(limit=2)]  # the SDK follows after_id itself
    finally:
        fake.anthropic_page = 1000
    assert listed == [
        "claude-talker",
        "claude-tooler",
        "claude-busy",
        "claude-overloaded",
        "claude-small",
        "claude-forbidden",
        "claude-endless",
        "claude-echo",
        "claude-cut",
    ]


# -- the mapping both ways (pure) ------------------------------------------------------------------


def test_a_seats_chat_request_becomes_a_messages_request_images_and_tools_included():
    chat = {
        "model": "claude-x",
        "stream": False,
        "temperature": 0.2,
        "stop": "END",
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "developer", "content": [{"type": "text", "text": "Cite lines."}]},
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "What is it?"},
                    {"type": "image_url", "image_url": {"url": PNG}},
                    {"type": "image_url", "image_url": {"url": "https://example.com/cat.png"}},
                ],
            },
            {
                "role": "assistant",
                "content": "Let me look.",
                "tool_calls": [
                    {"id": "call_1", "type": "function", "function": {"name": "look", "arguments": '{"x":1}'}},
                    {"id": "call_2", "type": "function", "function": {"name": "look", "arguments": "not json"}},
                ],
            },
            {"role": "tool", "tool_call_id": "call_1", "content": "a chair"},
            {"role": "tool", "tool_call_id": "call_2", "content": [{"type": "text", "text": "a table"}]},
        ],
        "tools": [{"type": "function", "function": {"name": "look", "parameters": {"type": "object"}}}],
        "tool_choice": "required",
        "parallel_tool_calls": False,
    }
    assert orjson.loads(messages_request(orjson.dumps(chat), output_cap=64_000)) == {
        "model": "claude-x",
        "max_tokens": 16_384,  # the model's known limit, bounded by what a seat can write
        "system": "Be brief.\n\nCite lines.",
        "messages": [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "What is it?"},
                    {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG_DATA}},
                    {"type": "image", "source": {"type": "url", "url": "https://example.com/cat.png"}},
                ],
            },
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "Let me look."},
                    {"type": "tool_use", "id": "call_1", "name": "look", "input": {"x": 1}},
                    {"type": "tool_use", "id": "call_2", "name": "look", "input": {}},
                ],
            },
            {
                "role": "user",  # both results in one turn, as Anthropic wants them
                "content": [
                    {"type": "tool_result", "tool_use_id": "call_1", "content": "a chair"},
                    {"type": "tool_result", "tool_use_id": "call_2", "content": "a table"},
                ],
            },
        ],
        "temperature": 0.2,
        "stop_sequences": ["END"],
        "tools": [{"name": "look", "input_schema": {"type": "object"}}],
        "tool_choice": {"type": "any", "disable_parallel_tool_use": True},
        "stream": False,
    }


def test_max_tokens_is_always_sent():
    def sent(output_cap: int | None, **asked: int) -> int:
        chat = {"model": "m", "messages": [{"role": "user", "content": "Hi"}], **asked}
        return orjson.loads(messages_request(orjson.dumps(chat), output_cap))["max_tokens"]

    assert sent(None) == 4096  # nothing known: a sane default
    assert sent(8192) == 8192  # the model's known output limit
    assert sent(64_000, max_tokens=300) == 300  # the caller's word first
    assert sent(None, max_completion_tokens=50, max_tokens=300) == 50


def test_a_message_reads_back_as_a_chat_result():
    body = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-x",
        "content": [
            {"type": "thinking", "thinking": "hmm", "signature": "s"},
            {"type": "text", "text": "Two parts: "},
            {"type": "text", "text": "joined."},
            {"type": "tool_use", "id": "toolu_1", "name": "look", "input": {"x": 1}},
        ],
        "stop_reason": "tool_use",
        "usage": CACHED,
    }
    text, calls, usage, finish, model = read_message(200, {}, orjson.dumps(body), ())
    assert (text, finish, model) == ("Two parts: joined.", "tool_calls", "claude-x")
    assert calls == [{"id": "toolu_1", "type": "function", "function": {"name": "look", "arguments": '{"x":1}'}}]
    assert usage == {
        "prompt_tokens": 420,  # 20 + the cache's 100 written and 300 read, as OpenAI counts a prompt
        "completion_tokens": 7,
        "total_tokens": 427,
        "prompt_tokens_details": {"cached_tokens": 300},
        "cache_creation_input_tokens": 100,
    }
    assert usage_of({"input_tokens": 5, "output_tokens": 2}) == {
        "prompt_tokens": 5,
        "completion_tokens": 2,
        "total_tokens": 7,
    }
    finishes = {stop: read_message(200, {}, orjson.dumps({**body, "stop_reason": stop}), ())[3] for stop in (
        "end_turn", "max_tokens", "stop_sequence", "refusal", "model_context_window_exceeded")}  # fmt: skip
    assert finishes == {
        "end_turn": "stop",
        "max_tokens": "length",
        "stop_sequence": "stop",
        "refusal": "content_filter",
        "model_context_window_exceeded": "length",
    }
    with pytest.raises(UpstreamFailure, match=r"not a Message \(no content\)"):
        read_message(200, {}, b'{"choices": []}', ())


def test_anthropic_resets_are_rfc_3339_times():
    now = 1_764_633_600.0  # 2025-12-02T00:00:00Z
    headers = {
        "anthropic-ratelimit-requests-remaining": "0",
        "anthropic-ratelimit-requests-reset": "2025-12-02T00:00:30Z",
        "anthropic-ratelimit-tokens-remaining": "100",
        "anthropic-ratelimit-tokens-reset": "2025-12-02T00:00:05+00:00",
    }
    assert retry_after_seconds(headers, now) == 30.0  # the exhausted window decides
    assert retry_after_seconds({**headers, "retry-after": "12"}, now) == 12.0  # retry-after first
    assert retry_after_seconds({"anthropic-ratelimit-requests-reset": "2025-12-02T00:00:30"}, now) is None  # no zone
    assert retry_after_seconds({"anthropic-ratelimit-requests-reset": "soon"}, now) is None


def test_a_listing_leaves_out_retired_models_and_marks_deprecated_ones():
    from benchwarmers.upstream.listings import parse_listing

    entry = {"type": "model", "display_name": "C", "created_at": "2024-10-22T00:00:00Z"}
    page = {
        "data": [
            {**entry, "id": "claude-new", "lifecycle": "active", "capabilities": {"image_input": {"supported": False}}},
            {**entry, "id": "claude-old", "lifecycle": "deprecated", "retires_at": "2026-10-22T00:00:00Z"},
            {**entry, "id": "claude-gone", "lifecycle": "retired"},
        ],
        "has_more": False,
        "first_id": "claude-new",
        "last_id": "claude-gone",
    }
    new, old = parse_listing("anthropic", page)
    assert (new.model_id, new.vision, new.deprecated) == ("claude-new", False, None)
    assert (old.model_id, old.deprecated) == ("claude-old", "2026-10-22T00:00:00Z")


# -- the client against the fake: errors, listing ----------------------------------------------------


def ref(fake: FakeUpstream, key: str = KEY, base: str | None = None) -> EndpointRef:
    return EndpointRef(f"claude{base or ''}{key}", base or fake.anthropic_url, key, "anthropic")


def chat(model: str, text: str = "Hi") -> bytes:
    return orjson.dumps({"model": model, "stream": False, "messages": [{"role": "user", "content": text}]})


async def test_anthropics_errors_are_the_benchs_failure_kinds(fake):
    pool = UpstreamPool()

    async def failure(model: str, text: str = "Hi", key: str = KEY) -> UpstreamFailure:
        with pytest.raises(UpstreamFailure) as failed:
            await pool.message(ref(fake, key), chat(model, text), 10)
        return failed.value

    try:
        busy = await failure("claude-busy")
        assert (busy.kind, busy.status, busy.retry_after) == (FailureKind.rate_limited, 429, 17.0)
        assert str(busy).startswith("rate limited (429): This request would exceed the rate limit")
        overloaded = await failure("claude-overloaded")
        assert (overloaded.kind, str(overloaded)) == (FailureKind.upstream_error, "upstream error (529): Overloaded")
        long = await failure("claude-small", "x" * 8000)
        assert (long.kind, long.context_limit) == (FailureKind.context_too_long, 1000)
        assert str(long) == "context too long (400): prompt is too long: 2000 tokens > 1000 maximum"
        refused = await failure("claude-talker", key="sk-ant-wrong-key-0000000002")
        assert (refused.kind, str(refused)) == (FailureKind.auth, "auth failed (401): invalid x-api-key")
        forbidden = await failure("claude-forbidden")
        assert (forbidden.kind, forbidden.status) == (FailureKind.auth, 403)
        missing = await failure("claude-nobody")
        assert (missing.kind, str(missing)) == (FailureKind.not_found, "not found (404): model: claude-nobody")
        # A base URL given with /v1, as some providers write it, reaches the same path.
        result = await pool.message(ref(fake, base=fake.anthropic_url + "/v1/"), chat("claude-talker"), 10)
        assert result.answer == "Hello from the Messages API."
    finally:
        await pool.aclose()


async def test_the_listing_is_read_page_after_page(fake):
    pool = UpstreamPool()
    endpoint = ref(fake)
    fake.clear()
    fake.anthropic_page = 4
    try:
        listed = await fetch_listing(
            "anthropic", fake.anthropic_url, lambda method, url, body: pool.request_json(endpoint, method, url, body)
        )
    finally:
        fake.anthropic_page = 1000
        await pool.aclose()
    assert [(r.path, r.query) for r in fake.requests] == [
        ("/anthropic/v1/models", "limit=1000"),
        ("/anthropic/v1/models", "limit=1000&after_id=claude-overloaded"),
        ("/anthropic/v1/models", "limit=1000&after_id=claude-echo"),
    ]
    assert fake.requests[0].headers["x-api-key"] == KEY and "authorization" not in fake.requests[0].headers
    assert [m.model_id for m in listed] == [
        "claude-talker",
        "claude-tooler",
        "claude-busy",
        "claude-overloaded",
        "claude-small",
        "claude-forbidden",
        "claude-endless",
        "claude-echo",
        "claude-cut",
    ]
    talker = listed[0]
    assert (talker.context_window, talker.output_cap, talker.vision, talker.display_name, talker.created) == (
        200_000,
        64_000,
        True,
        "Claude Talker",
        "2025-05-14T00:00:00Z",
    )
    assert (listed[1].context_window, listed[1].vision) == (None, None)  # a compatible provider's four fields


# -- an `anthropic` endpoint on a running bench --------------------------------------------------------


@pytest.fixture(scope="module")
def bench(fake: FakeUpstream, tmp_path_factory: pytest.TempPathFactory) -> Iterator[BenchServer]:
    server = BenchServer(tmp_path_factory.mktemp("anthropic") / "home").start()

    async def setup(bench: Any) -> None:
        await bench.endpoints.add_endpoint("claude", fake.anthropic_url, "anthropic", api_key=KEY)
        await bench.endpoints.refresh_endpoint("claude")
        groups = {
            "claudes": ["claude-talker", "claude-tooler"],
            "busy": ["claude-busy"],
            "cut": ["claude-endless", "claude-cut"],
            "echo": ["claude-echo"],
        }
        for name, members in groups.items():
            members = [f"claude/{m}" for m in members]
            await bench.collections.add_collection(
                {"name": name, "members": members, "description": f"{name} work", "tags": [], "max_explorers": 0}
            )

    server.admin(setup)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def client(bench: BenchServer) -> OpenAI:
    return OpenAI(base_url=bench.v1, api_key="not-needed-on-loopback", max_retries=0, timeout=30)


def seat_rows(bench: BenchServer, panel: str) -> list[dict[str, Any]]:
    columns = (seats.c.alias, seats.c.endpoint, seats.c.status, seats.c.answer, seats.c.error, seats.c.error_kind)
    query = select(*columns, seats.c.usage, seats.c.tool_calls).where(seats.c.panel_id == panel)

    async def read(b: Any) -> list[dict[str, Any]]:
        async with b.state.read() as conn:
            return [dict(row._mapping) for row in await conn.execute(query.order_by(seats.c.position))]

    return bench.admin(read)


def test_an_anthropic_endpoint_is_seated_and_its_usage_and_rate_limits_are_recorded(bench, fake, client):
    fake.clear()
    tool = {"type": "function", "function": {"name": "get_weather", "parameters": WEATHER["input_schema"]}}
    reply = client.chat.completions.create(
        model="bench/claudes",
        messages=[{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Weather in Paris?"}],
        tools=[tool],
    )
    panel = reply.model_extra["bench"]["panel"]
    tool_id = fake.message_requests and reply.model_extra["bench"]["seats"][1]["tool_calls"][0]["id"]
    assert tool_id.startswith("toolu_call_")  # the tool_use block's id, as the model sent it
    assert seat_rows(bench, panel) == [
        {
            "alias": "claude/claude-talker",
            "endpoint": "claude",
            "status": "ok",
            "answer": "Hello from the Messages API.",
            "error": "",
            "error_kind": None,
            "usage": {
                "prompt_tokens": 420,
                "completion_tokens": 7,
                "total_tokens": 427,
                "prompt_tokens_details": {"cached_tokens": 300},
                "cache_creation_input_tokens": 100,
            },
            "tool_calls": None,
        },
        {
            "alias": "claude/claude-tooler",
            "endpoint": "claude",
            "status": "ok",
            "answer": "",
            "error": "",
            "error_kind": None,
            "usage": {"prompt_tokens": 7, "completion_tokens": 0, "total_tokens": 7},  # the fake's chars / 4
            "tool_calls": [
                {
                    "id": tool_id,
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": json.dumps(CITY, separators=(",", ":"))},
                }
            ],
        },
    ]
    # Each seat was asked over the Messages API with Anthropic's headers, the system prompt lifted out.
    sent = {r.json["model"]: r for r in fake.message_requests}
    assert sent["claude-talker"].json == {
        "model": "claude-talker",
        "max_tokens": 16_384,  # its listed max_tokens (64,000), bounded
        "system": "Be brief.",
        "messages": [{"role": "user", "content": [{"type": "text", "text": "Weather in Paris?"}]}],
        "tools": [{"name": "get_weather", "input_schema": WEATHER["input_schema"]}],
        "stream": False,
    }
    assert sent["claude-tooler"].json["max_tokens"] == 4096  # no known limit
    headers = sent["claude-talker"].headers
    assert (headers["x-api-key"], headers["anthropic-version"], "authorization" in headers) == (
        KEY,
        "2023-06-01",
        False,
    )

    # Its rate-limit headers became the model's known limits, once, as a change.
    async def limits(b: Any) -> tuple[Any, list[dict[str, Any]]]:
        async with b.state.read() as conn:
            changes = await list_changes(conn, limit=100, subject="model")
        return (await b.models.model("claude/claude-talker"))["facts"]["rate_limits"], changes

    known, changes = bench.admin(limits)
    window = {"requests": 50, "tokens": 90_000, "input-tokens": 50_000, "output-tokens": 10_000}
    assert known == {"value": window, "source": "headers"}
    [change] = [c for c in changes if c["action"] == "limits"]
    assert (change["name"], change["before"], change["after"]) == (
        "claude/claude-talker",
        {"rate_limits": None},
        {"rate_limits": window},
    )


def test_a_rate_limited_anthropic_seat_cools_down_for_its_retry_after(bench, client):
    started = time.time()
    reply = client.chat.completions.create(model="bench/busy", messages=[{"role": "user", "content": "Hi"}])
    [seat] = reply.model_extra["bench"]["seats"]
    assert (seat["status"], seat["error"]) == (
        "error",
        "rate limited (429): This request would exceed the rate limit for your organization of 50 requests per "
        "minute. For details, refer to: https://docs.claude.com/en/api/rate-limits; retry in 17s",
    )
    [row] = seat_rows(bench, reply.model_extra["bench"]["panel"])
    assert row["error_kind"] == "rate_limited"
    model = bench.admin(lambda b: b.models.model("claude/claude-busy"))
    assert model["status"] == "cooldown"
    assert model["cooldown_until"] == pytest.approx(started + 17, abs=2)


def test_anthropic_answers_past_the_cap_or_cut_by_max_tokens_are_marked(bench, client):
    from tests.fakes.behaviour import huge_text

    reply = client.chat.completions.create(model="bench/cut", messages=[{"role": "user", "content": "Go on."}])
    endless, cut = reply.model_extra["bench"]["seats"]
    assert (endless["status"], endless["truncated_at"], endless["truncated"]) == ("ok", 1024 * 1024, "length")
    assert endless["answer"] == huge_text(1024 * 1024)
    assert (cut["status"], cut["answer"], cut["truncated"]) == ("ok", "The bug is on", "length")
    [row] = [r for r in seat_rows(bench, reply.model_extra["bench"]["panel"]) if r["alias"] == "claude/claude-endless"]
    assert row["usage"] is None  # read only in part: what was salvaged of its usage is not what it sent


def test_a_provider_quoting_the_x_api_key_has_it_scrubbed(bench, client):
    reply = client.chat.completions.create(model="bench/echo", messages=[{"role": "user", "content": "Hi"}])
    [seat] = reply.model_extra["bench"]["seats"]
    assert seat["answer"].startswith("key=") and KEY not in seat["answer"]
    [row] = seat_rows(bench, reply.model_extra["bench"]["panel"])
    assert KEY not in row["answer"] and KEY not in reply.choices[0].message.content


def test_the_listing_gave_the_models_their_facts_and_the_dashboard_offers_the_kind(bench):
    import httpx2

    talker = bench.admin(lambda b: b.models.model("claude/claude-talker"))
    assert {name: talker["facts"][name]["value"] for name in ("context_window", "output_cap")} == {
        "context_window": 200_000,
        "output_cap": 64_000,
    }
    page = httpx2.get(f"{bench.url}/settings").text
    assert '<option value="anthropic">anthropic</option>' in page


def test_endpoint_add_kind_anthropic_on_the_command_line(fake, tmp_path, monkeypatch):
    monkeypatch.setenv("BENCHWARMERS_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.setenv("COLUMNS", "200")
    runner = CliRunner()

    def cli(*args: str) -> tuple[int, str]:
        result = runner.invoke(app, list(args))
        return result.exit_code, result.output

    added = ("endpoint", "add", "claude", "--base-url", fake.anthropic_url, "--kind", "anthropic")
    assert cli(*added, "--api-key-env", "ANTHROPIC_API_KEY") == (
        0,
        f"added endpoint claude (anthropic, {fake.anthropic_url}, key: $ANTHROPIC_API_KEY)\n"
        "next: benchwarmers endpoint refresh claude\n",
    )
    code, out = cli("endpoint", "refresh", "claude")
    assert (code, out.splitlines()[0]) == (0, "claude: 9 models listed, 9 new, 0 gone")
    helped = " ".join(cli("endpoint", "add", "--help")[1].replace("│", " ").split())  # the panel's lines joined
    assert "responses, anthropic, llm (default openai)" in helped
    assert "(with --kind anthropic, the Anthropic SDK's, e.g. https://api.anthropic.com)" in helped
