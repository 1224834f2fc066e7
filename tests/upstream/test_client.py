"""The upstream client against the fake provider, over real HTTP on 127.0.0.1."""

import asyncio
import base64
import copy
import socket
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx2
import openai
import orjson
import pytest

from benchwarmers.upstream.client import ChatBody, ChatResult, EndpointRef, UpstreamPool
from benchwarmers.upstream.failures import FailureKind, UpstreamFailure
from tests.fakes.upstream import FakeUpstream

KEY = "sk-test-0123456789abcdefghijklmnop"
HELLO = ChatBody.from_request({"model": "bench/x", "messages": [{"role": "user", "content": "hello there"}]})


@pytest.fixture
async def pool() -> AsyncIterator[UpstreamPool]:
    pool = UpstreamPool()
    yield pool
    await pool.aclose()


def endpoint(fake: FakeUpstream, key: str | None = KEY, name: str = "fake") -> EndpointRef:
    return EndpointRef(name=name, base_url=fake.base_url, api_key=key)


async def fail(pool: UpstreamPool, fake: FakeUpstream, model: str, timeout: float = 5.0) -> UpstreamFailure:
    with pytest.raises(UpstreamFailure) as caught:
        await pool.chat(endpoint(fake), HELLO.for_model(model), timeout)
    failure = caught.value
    assert KEY not in str(failure)
    assert KEY not in failure.message
    assert KEY not in repr(failure)
    return failure


# -- ChatBody ----------------------------------------------------------------------------------


def request_with_everything() -> dict[str, Any]:
    png = "data:image/png;base64," + base64.b64encode(bytes(3000)).decode()
    return {
        "model": "bench/coding",
        "stream": True,
        "stream_options": {"include_usage": True},
        "bench": {"reply": "all"},
        "temperature": 0.3,
        "max_tokens": 512,
        "stop": ["\n\n", "END"],
        "tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}],
        "messages": [
            {"role": "system", "content": "be brief"},
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "what is in these?"},
                    {"type": "image_url", "image_url": {"url": png, "detail": "high"}},
                    {"type": "image_url", "image_url": {"url": "https://img.example/cat.jpg"}},
                ],
            },
        ],
    }


def test_chat_body_passes_fields_through() -> None:
    request = request_with_everything()
    before = copy.deepcopy(request)
    body = ChatBody.from_request(request)

    raw = body.for_model("llama-3.3-70b")

    assert raw.startswith(b'{"model":"llama-3.3-70b","stream":false,')
    expected = {key: value for key, value in before.items() if key not in ("stream_options", "bench")}
    assert orjson.loads(raw) == {**expected, "model": "llama-3.3-70b", "stream": False}
    assert request == before
    # The seats' pieces share one encoding of the messages.
    first, second = body.parts_for("a"), body.parts_for("b")
    assert first[1] is second[1]
    assert b"".join(first) == body.for_model("a")


def test_chat_body_overrides_per_seat() -> None:
    body = ChatBody.from_request(request_with_everything())
    parsed = orjson.loads(body.for_model("m", {"max_tokens": 100, "stop": None}))
    assert parsed["max_tokens"] == 100
    assert "stop" not in parsed
    assert orjson.loads(body.for_model("m"))["max_tokens"] == 512


def test_chat_body_minimal() -> None:
    body = ChatBody.from_request({"model": "bench/x", "messages": []})
    assert body.for_model("m") == b'{"model":"m","stream":false,"messages":[]}'
    assert ChatBody.from_request({"model": "x"}).for_model("m") == b'{"model":"m","stream":false}'


async def test_fake_receives_the_body_unchanged(fake_upstream: FakeUpstream, pool: UpstreamPool) -> None:
    fake_upstream.script("m")
    request = request_with_everything()
    await pool.chat(endpoint(fake_upstream), ChatBody.from_request(request).parts_for("m"), 5)
    [seen] = fake_upstream.requests
    expected = {key: value for key, value in request.items() if key not in ("stream_options", "bench")}
    assert seen.json == {**expected, "model": "m", "stream": False}
    assert (seen.method, seen.path) == ("POST", "/v1/chat/completions")
    assert seen.headers["authorization"] == f"Bearer {KEY}"
    assert seen.headers["content-type"] == "application/json"


# -- answers -----------------------------------------------------------------------------------


async def test_answer(fake_upstream: FakeUpstream, pool: UpstreamPool) -> None:
    fake_upstream.script("m1", reply="forty-two", headers={"x-ratelimit-remaining-requests": "9"})
    result = await pool.chat(endpoint(fake_upstream), HELLO.for_model("m1"), 5)
    assert isinstance(result, ChatResult)
    assert (result.answer, result.status, result.model) == ("forty-two", 200, "m1")
    assert result.usage == {"prompt_tokens": 3, "completion_tokens": 3, "total_tokens": 6}
    assert result.headers["x-ratelimit-remaining-requests"] == "9"
    assert 0 < result.seconds < 5


async def test_default_reply_and_no_key(fake_upstream: FakeUpstream, pool: UpstreamPool) -> None:
    fake_upstream.script("m2", usage={"prompt_tokens": 1, "completion_tokens": 2, "total_tokens": 3})
    result = await pool.chat(endpoint(fake_upstream, key=None), HELLO.for_model("m2"), 5)
    assert (result.answer, result.usage) == (
        "answer from m2",
        {"prompt_tokens": 1, "completion_tokens": 2, "total_tokens": 3},
    )
    assert "authorization" not in fake_upstream.requests[0].headers


async def test_empty_answer(fake_upstream: FakeUpstream, pool: UpstreamPool) -> None:
    fake_upstream.script("quiet", empty=True)
    assert (await pool.chat(endpoint(fake_upstream), HELLO.for_model("quiet"), 5)).answer == ""


@pytest.mark.parametrize(
    ("content", "answer"),
    [(None, ""), ([{"type": "text", "text": "a"}, {"type": "text", "text": "b"}], "ab")],
)
async def test_content_shapes(fake_upstream: FakeUpstream, pool: UpstreamPool, content: Any, answer: str) -> None:
    fake_upstream.script(
        "odd", body={"model": "odd", "choices": [{"message": {"role": "assistant", "content": content}}]}
    )
    result = await pool.chat(endpoint(fake_upstream), HELLO.for_model("odd"), 5)
    assert (result.answer, result.usage) == (answer, None)


async def test_not_a_chat_completion(fake_upstream: FakeUpstream, pool: UpstreamPool) -> None:
    fake_upstream.script("weird", body={"object": "list", "data": []})
    failure = await fail(pool, fake_upstream, "weird")
    assert (failure.kind, failure.status, failure.message) == (
        FailureKind.upstream_error,
        200,
        "response is not a chat completion (no choices)",
    )


async def test_error_object_inside_a_200(fake_upstream: FakeUpstream, pool: UpstreamPool) -> None:
    fake_upstream.script("or", body={"error": {"message": "Provider returned error", "code": 429}})
    failure = await fail(pool, fake_upstream, "or")
    assert (failure.kind, failure.status, failure.message) == (
        FailureKind.rate_limited,
        429,
        "Provider returned error",
    )


async def test_invalid_json_on_200(fake_upstream: FakeUpstream, pool: UpstreamPool) -> None:
    fake_upstream.script("html", body="<html><title>Captive portal</title></html>")
    failure = await fail(pool, fake_upstream, "html")
    assert (failure.kind, failure.message) == (
        FailureKind.upstream_error,
        "response is not JSON: Captive portal",
    )


# -- failures from real responses -------------------------------------------------------------


async def test_429_with_retry_after(fake_upstream: FakeUpstream, pool: UpstreamPool) -> None:
    fake_upstream.script("busy", status=429, headers={"retry-after": "12"})
    failure = await fail(pool, fake_upstream, "busy")
    assert (failure.kind, failure.status, failure.retry_after) == (FailureKind.rate_limited, 429, 12.0)
    assert failure.headers["retry-after"] == "12"
    assert str(failure) == (
        "rate limited (429): Rate limit reached for busy on requests per min (RPM): "
        "Limit 20, Used 20, Requested 1; retry in 12s"
    )


async def test_429_with_groq_reset(fake_upstream: FakeUpstream, pool: UpstreamPool) -> None:
    fake_upstream.script("groq", status=429, headers={"x-ratelimit-reset-requests": "2m59.56s"})
    failure = await fail(pool, fake_upstream, "groq")
    assert failure.kind is FailureKind.rate_limited
    assert failure.retry_after == pytest.approx(179.56)


async def test_context_error(fake_upstream: FakeUpstream, pool: UpstreamPool) -> None:
    fake_upstream.script("small", context_limit=4097)
    failure = await fail(pool, fake_upstream, "small")
    assert (failure.kind, failure.status, failure.context_limit) == (FailureKind.context_too_long, 400, 4097)
    assert failure.message.startswith("This model's maximum context length is 4097 tokens.")


async def test_gemini_array_error(fake_upstream: FakeUpstream, pool: UpstreamPool) -> None:
    fake_upstream.script("gemini-2.5-flash", gemini_error=True)
    failure = await fail(pool, fake_upstream, "gemini-2.5-flash")
    assert (failure.kind, failure.status, failure.message) == (
        FailureKind.rate_limited,
        429,
        "Resource has been exhausted (e.g. check quota).",
    )


async def test_plain_text_502(fake_upstream: FakeUpstream, pool: UpstreamPool) -> None:
    fake_upstream.script("proxy", plain_error="upstream connect error or disconnect/reset before headers", status=502)
    failure = await fail(pool, fake_upstream, "proxy")
    assert (failure.kind, failure.status, str(failure)) == (
        FailureKind.upstream_error,
        502,
        "upstream error (502): upstream connect error or disconnect/reset before headers",
    )


@pytest.mark.parametrize(
    ("status", "kind", "message"),
    [
        (400, FailureKind.bad_request, "Invalid request."),
        (403, FailureKind.auth, "Country, region, or territory not supported"),
        (404, FailureKind.not_found, "The model `m` does not exist or you do not have access to it."),
        (
            500,
            FailureKind.upstream_error,
            "The server had an error while processing your request. Sorry about that!",
        ),
        (503, FailureKind.upstream_error, "The server is overloaded or not ready yet."),
    ],
)
async def test_status_failures(
    fake_upstream: FakeUpstream, pool: UpstreamPool, status: int, kind: FailureKind, message: str
) -> None:
    fake_upstream.script("m", status=status)
    failure = await fail(pool, fake_upstream, "m")
    assert (failure.kind, failure.status, failure.message) == (kind, status, message)


async def test_401_echoing_the_key_is_scrubbed(fake_upstream: FakeUpstream, pool: UpstreamPool) -> None:
    fake_upstream.script("m", status=401)
    failure = await fail(pool, fake_upstream, "m")
    assert failure.kind is FailureKind.auth
    assert failure.message.startswith("Incorrect API key provided: [redacted].")


@pytest.mark.parametrize("status", [400, 401, 404, 429, 500, 503])
async def test_key_never_in_failures(fake_upstream: FakeUpstream, pool: UpstreamPool, status: int) -> None:
    fake_upstream.script("echo", status=status, body={"error": {"message": f"you sent {KEY} (Bearer {KEY})"}})
    failure = await fail(pool, fake_upstream, "echo")
    assert failure.message == "you sent [redacted] (Bearer [redacted])"


async def test_key_not_shaped_like_a_key_is_still_scrubbed(fake_upstream: FakeUpstream, pool: UpstreamPool) -> None:
    odd_key = "plainpassword-9f8e7d"
    fake_upstream.script("echo", status=401, plain_error=f"bad key {odd_key}")
    with pytest.raises(UpstreamFailure) as caught:
        await pool.chat(endpoint(fake_upstream, key=odd_key), HELLO.for_model("echo"), 5)
    assert str(caught.value) == "auth failed (401): bad key [redacted]"


async def test_unscripted_model_is_404(fake_upstream: FakeUpstream, pool: UpstreamPool) -> None:
    failure = await fail(pool, fake_upstream, "ghost")
    assert (failure.kind, failure.status, failure.message) == (
        FailureKind.not_found,
        404,
        "The model `ghost` does not exist or you do not have access to it.",
    )


async def test_timeout_on_hang(fake_upstream: FakeUpstream, pool: UpstreamPool) -> None:
    fake_upstream.script("sleepy", hang=True)
    failure = await fail(pool, fake_upstream, "sleepy", timeout=0.3)
    assert (failure.kind, failure.status, str(failure)) == (FailureKind.timeout, None, "timeout after 0.3s")


async def test_connection_dropped_mid_body(fake_upstream: FakeUpstream, pool: UpstreamPool) -> None:
    fake_upstream.script("flaky", drop=True)
    failure = await fail(pool, fake_upstream, "flaky")
    assert failure.kind is FailureKind.connection
    assert str(failure) == "connection failed: the connection dropped before the whole reply arrived"


async def test_connection_refused(pool: UpstreamPool) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    closed = EndpointRef("gone", f"http://127.0.0.1:{port}/v1", KEY)
    with pytest.raises(UpstreamFailure) as caught:
        await pool.chat(closed, HELLO.for_model("m"), 5)
    assert caught.value.kind is FailureKind.connection
    assert str(caught.value).startswith("connection failed: ")


# -- pooling and concurrency -------------------------------------------------------------------


async def test_concurrency_is_bounded_per_endpoint(fake_upstream: FakeUpstream) -> None:
    fake_upstream.script("slow", latency=0.2)
    pool = UpstreamPool(per_endpoint=2)
    try:
        results = await asyncio.gather(
            *(pool.chat(endpoint(fake_upstream), HELLO.for_model("slow"), 5) for _ in range(6))
        )
    finally:
        await pool.aclose()
    assert [r.answer for r in results] == ["answer from slow"] * 6
    assert fake_upstream.peak_in_flight == 2
    assert fake_upstream.connections_opened == 2


async def test_bound_is_per_endpoint_not_global(fake_upstream: FakeUpstream) -> None:
    fake_upstream.script("slow", latency=0.2)
    pool = UpstreamPool(per_endpoint=2)
    calls = [
        pool.chat(endpoint(fake_upstream, name=name), HELLO.for_model("slow"), 5)
        for name in ("a", "b")
        for _ in range(3)
    ]
    try:
        await asyncio.gather(*calls)
    finally:
        await pool.aclose()
    assert fake_upstream.peak_in_flight == 4


async def test_waiting_for_a_slot_counts_toward_the_timeout(fake_upstream: FakeUpstream) -> None:
    fake_upstream.script("sleepy", hang=True)
    fake_upstream.script("m")
    pool = UpstreamPool(per_endpoint=1)
    try:
        first = asyncio.create_task(pool.chat(endpoint(fake_upstream), HELLO.for_model("sleepy"), 0.5))
        await asyncio.sleep(0.05)
        with pytest.raises(UpstreamFailure) as caught:
            await pool.chat(endpoint(fake_upstream), HELLO.for_model("m"), 0.2)
        assert str(caught.value) == "timeout after 0.2s (waiting for a free connection)"
        with pytest.raises(UpstreamFailure):
            await first
    finally:
        await pool.aclose()


async def test_keep_alive_reuses_one_connection(fake_upstream: FakeUpstream, pool: UpstreamPool) -> None:
    fake_upstream.script("m")
    for _ in range(5):
        await pool.chat(endpoint(fake_upstream), HELLO.for_model("m"), 5)
    assert fake_upstream.connections_opened == 1


async def test_forget_closes_and_recreates(fake_upstream: FakeUpstream, pool: UpstreamPool) -> None:
    fake_upstream.script("m", latency=0.2)
    ref = endpoint(fake_upstream)
    running = asyncio.create_task(pool.chat(ref, HELLO.for_model("m"), 5))
    await asyncio.sleep(0.05)
    pool.forget("fake")
    pool.forget("never-seen")
    assert (await running).answer == "answer from m"
    assert (await pool.chat(ref, HELLO.for_model("m"), 5)).answer == "answer from m"
    assert fake_upstream.connections_opened == 2


# -- listings ----------------------------------------------------------------------------------


async def test_request_json_relative_and_default_models(fake_upstream: FakeUpstream, pool: UpstreamPool) -> None:
    fake_upstream.script("a")
    fake_upstream.script("b")
    listing = await pool.request_json(endpoint(fake_upstream), "GET", "models")
    assert [m["id"] for m in listing["data"]] == ["a", "b"]
    assert listing["data"][0] == {"id": "a", "object": "model", "created": 1_700_000_000, "owned_by": "fake"}
    assert fake_upstream.requests[0].headers["authorization"] == f"Bearer {KEY}"


async def test_request_json_absolute_and_keyed_show(fake_upstream: FakeUpstream, pool: UpstreamPool) -> None:
    fake_upstream.listing("/api/tags", {"models": [{"name": "llama3.2:3b"}]})
    fake_upstream.listing("/api/show", {"llama3.2:3b": {"capabilities": ["completion", "vision"]}})
    ref = endpoint(fake_upstream)
    tags = await pool.request_json(ref, "GET", f"{fake_upstream.root_url}/api/tags")
    shown = await pool.request_json(ref, "POST", f"{fake_upstream.root_url}/api/show", json={"model": "llama3.2:3b"})
    assert tags == {"models": [{"name": "llama3.2:3b"}]}
    assert shown == {"capabilities": ["completion", "vision"]}
    assert fake_upstream.requests[1].json == {"model": "llama3.2:3b"}
    with pytest.raises(UpstreamFailure) as caught:
        await pool.request_json(ref, "POST", f"{fake_upstream.root_url}/api/show", json={"model": "nope"})
    assert (caught.value.kind, caught.value.message) == (FailureKind.not_found, "model 'nope' not found")


async def test_key_is_not_sent_to_another_origin(fake_upstream: FakeUpstream, pool: UpstreamPool) -> None:
    with FakeUpstream() as other:
        other.listing("/elsewhere", {"ok": True})
        assert await pool.request_json(endpoint(fake_upstream), "GET", f"{other.root_url}/elsewhere") == {"ok": True}
        assert "authorization" not in other.requests[0].headers


async def test_request_json_failures(fake_upstream: FakeUpstream, pool: UpstreamPool) -> None:
    fake_upstream.listing("/v1/models", {"error": {"message": f"bad key {KEY}"}}, status=401)
    fake_upstream.listing("/api/v0/models", "not json at all")
    ref = endpoint(fake_upstream)
    with pytest.raises(UpstreamFailure) as auth:
        await pool.request_json(ref, "GET", "/models")
    assert str(auth.value) == "auth failed (401): bad key [redacted]"
    with pytest.raises(UpstreamFailure) as garbage:
        await pool.request_json(ref, "GET", f"{fake_upstream.root_url}/api/v0/models")
    assert (garbage.value.kind, garbage.value.message) == (
        FailureKind.upstream_error,
        "response is not JSON: not json at all",
    )


# -- the fake itself ---------------------------------------------------------------------------


async def test_fake_streams_to_the_openai_sdk(fake_upstream: FakeUpstream) -> None:
    fake_upstream.script("m", reply="one two three", slow_stream=0.01)
    async with httpx2.AsyncClient() as http:
        client = openai.AsyncOpenAI(base_url=fake_upstream.base_url, api_key="k", http_client=http, max_retries=0)
        stream = await client.chat.completions.create(
            model="m",
            messages=[{"role": "user", "content": "count"}],
            stream=True,
            stream_options={"include_usage": True},
        )
        chunks = [chunk async for chunk in stream]
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == "one two three"
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "stop"
    assert chunks[-1].choices == []
    assert chunks[-1].usage is not None
    assert (chunks[-1].usage.prompt_tokens, chunks[-1].usage.completion_tokens) == (2, 4)


async def test_fake_answers_the_openai_sdk(fake_upstream: FakeUpstream) -> None:
    fake_upstream.script("m", reply="hi")
    async with httpx2.AsyncClient() as http:
        client = openai.AsyncOpenAI(base_url=fake_upstream.base_url, api_key="k", http_client=http, max_retries=0)
        completion = await client.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
        with pytest.raises(openai.NotFoundError) as missing:
            await client.chat.completions.create(model="ghost", messages=[{"role": "user", "content": "x"}])
    assert (
        completion.object,
        completion.choices[0].message.content,
        completion.choices[0].finish_reason,
    ) == (
        "chat.completion",
        "hi",
        "stop",
    )
    assert missing.value.code == "model_not_found"


def test_fake_runs_standalone() -> None:
    command = [sys.executable, "-m", "tests.fakes.upstream", "--port", "0", "--latency", "0.01"]
    root = Path(__file__).resolve().parents[2]
    with subprocess.Popen(command, stdout=subprocess.PIPE, text=True, cwd=root) as proc:
        try:
            assert proc.stdout is not None
            line = proc.stdout.readline().strip()
            assert line.startswith("fake upstream at http://127.0.0.1:")
            base_url = line.rsplit(" ", 1)[1]
            body = {"model": "any", "messages": []}
            response = httpx2.post(f"{base_url}/chat/completions", json=body, timeout=5)
            assert response.json()["choices"][0]["message"]["content"] == "answer from any"
        finally:
            proc.terminate()
