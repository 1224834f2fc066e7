"""The llm client (BENCH_CLIENT=llm): listing, seats and failures through real llm plugins.

Models come from tests/fakes/llm_plugin.py, registered through llm's `register_models` hook, and from
llm's own OpenAI plugin (its `extra-openai-models.yaml`) talking to the fake provider over HTTP.
"""

from __future__ import annotations

import asyncio
from typing import Any

import httpx2
import llm
import openai
import pytest

from benchwarmers.catalog.facts import ListedModel
from benchwarmers.upstream.client import ChatBody, EndpointRef
from benchwarmers.upstream.failures import FailureKind, UpstreamFailure
from benchwarmers.upstream.llm_client import LlmClient
from tests.fakes.upstream import FakeUpstream

REF = EndpointRef(name="llm", base_url="llm:", api_key=None, kind="llm")
TEXT = frozenset({"text"})
CONVERSATION = [
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": "first question"},
    {"role": "assistant", "content": "first answer"},
    {"role": "user", "content": [{"type": "text", "text": "second"}, {"type": "text", "text": "question"}]},
]


def body(model: str, messages: list[dict[str, Any]] | None = None, **fields: Any) -> bytes:
    request = {"model": "bench/x", "messages": messages or [{"role": "user", "content": "hello"}], **fields}
    return ChatBody.from_request(request).for_model(model)


async def fail(client: LlmClient, model: str, timeout: float = 5.0, **request: Any) -> UpstreamFailure:
    with pytest.raises(UpstreamFailure) as caught:
        await client.chat(REF, body(model, **request), timeout)
    return caught.value


@pytest.fixture
async def client(llm_plugin: Any) -> Any:
    opened = LlmClient(per_endpoint=4)
    yield opened
    await opened.aclose()


async def test_the_listing_is_what_the_plugins_reach(client, monkeypatch):
    # llm's own OpenAI models need a key llm does not have here, and bench-keyed too: left out.
    assert await client.listing() == [
        ListedModel("bench-echo", input_kinds=TEXT),
        ListedModel("bench-sync", input_kinds=TEXT),
        ListedModel("bench-script", input_kinds=TEXT),
        ListedModel("bench-local", input_kinds=TEXT),
    ]
    monkeypatch.setenv("LLMTEST_KEY", "test-key-0123")
    listed = [m.model_id for m in await client.listing()]
    assert listed == ["bench-echo", "bench-sync", "bench-keyed", "bench-script", "bench-local"]


async def test_a_conversation_goes_as_system_history_and_prompt(client):
    request = {"temperature": 0.2, "max_tokens": 50, "tools": [{"type": "function"}], "seed": 7}
    result = await client.chat(REF, body("bench-echo", CONVERSATION, **request), 5)
    # The async model is used; max_tokens becomes the plugin's max_output_tokens; no llm option
    # is named tools or seed, so they are not sent.
    assert result.answer == (
        "async system: Be brief.\n"
        "system: Be brief.\n"
        "user: first question\n"
        "assistant: first answer\n"
        "user: second\nquestion\n"
        'options: {"temperature":0.2,"max_output_tokens":50}'
    )
    assert result.usage == {"prompt_tokens": 12, "completion_tokens": 3, "total_tokens": 15}
    assert (result.model, result.status, result.headers) == ("bench-echo", 200, {})


async def test_a_single_turn_is_a_prompt_and_a_system(client):
    messages = [{"role": "developer", "content": "Be brief."}, {"role": "user", "content": "hello"}]
    result = await client.chat(REF, body("bench-echo", messages), 5)
    assert result.answer == "async system: Be brief.\nsystem: Be brief.\nuser: hello\noptions: {}"


async def test_a_sync_only_model_runs_in_the_clients_threads(client):
    result = await client.chat(REF, body("bench-sync"), 5)
    assert (result.answer, result.usage) == ("hello (in llm-seat)", None)


async def test_a_model_that_needs_a_key(client, monkeypatch):
    failure = await fail(client, "bench-keyed")
    assert failure.kind is FailureKind.auth
    assert str(failure) == (
        "auth failed: No key found - add one using 'llm keys set benchtest' or set the LLMTEST_KEY environment variable"
    )
    monkeypatch.setenv("LLMTEST_KEY", "test-key-0123")
    # The client passes the answer on as it came; the bench scrubs the keys llm holds (`secrets`).
    result = await client.chat(REF, body("bench-keyed"), 5)
    assert result.answer == "keyed answer; a careless provider says the key was test-key-0123"
    assert client.secrets() == ("test-key-0123",)


async def test_what_llm_cannot_be_sent(client):
    unknown = await fail(client, "no-such-model")
    assert (unknown.kind, str(unknown)) == (
        FailureKind.not_found,
        "not found: llm has no model 'no-such-model'; `llm models` lists what its plugins register",
    )
    image = [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "https://x.example/a.png"}}]}]
    assert str(await fail(client, "bench-echo", messages=image)) == (
        "bad request: the llm client sends text only, not image_url (images go through the built-in client)"
    )
    tool = [{"role": "tool", "content": "42", "tool_call_id": "c1"}, {"role": "user", "content": "and?"}]
    assert str(await fail(client, "bench-echo", messages=tool)) == (
        "bad request: the llm client sends system, user and assistant messages only (got a tool message)"
    )
    assert str(await fail(client, "bench-echo", temperature=5)) == (
        "bad request: llm refused the request for bench-echo: temperature: Input should be less than or equal to 2"
    )


def _status_error(kind: type[openai.APIStatusError], status: int, headers: dict[str, str], body: bytes) -> Exception:
    request = httpx2.Request("POST", "https://api.example/v1/chat/completions")
    response = httpx2.Response(status, headers=headers, content=body, request=request)
    return kind("provider said no", response=response, body=None)


@pytest.mark.parametrize(
    ("raised", "kind", "text", "retry_after", "limit"),
    [
        (
            lambda: _status_error(
                openai.RateLimitError, 429, {"retry-after": "7"}, b'{"error": {"message": "Slow down, please."}}'
            ),
            FailureKind.rate_limited,
            "rate limited (429): Slow down, please; retry in 7s",
            7.0,
            None,
        ),
        (
            lambda: _status_error(openai.InternalServerError, 503, {}, b""),
            FailureKind.upstream_error,
            "upstream error (503): provider said no",
            None,
            None,
        ),
        (
            lambda: llm.ModelError("This model's maximum context length is 8192 tokens, you asked for 9000."),
            FailureKind.context_too_long,
            "context too long: This model's maximum context length is 8192 tokens, you asked for 9000.",
            None,
            8192,
        ),
        (
            lambda: llm.ModelError("Quota exceeded for quota metric 'Generate Content API requests per minute'"),
            FailureKind.rate_limited,
            "rate limited: Quota exceeded for quota metric 'Generate Content API requests per minute'",
            None,
            None,
        ),
        (
            lambda: openai.APITimeoutError(httpx2.Request("POST", "https://api.example/v1")),
            FailureKind.timeout,
            "timeout: Request timed out.",
            None,
            None,
        ),
        (
            lambda: openai.APIConnectionError(request=httpx2.Request("POST", "https://api.example/v1")),
            FailureKind.connection,
            "connection failed: Connection error.",
            None,
            None,
        ),
        (
            lambda: llm.ModelError("Incorrect API key provided: sk-abcdefghijklmnopqrstuvwxyz012345"),
            FailureKind.upstream_error,
            "upstream error: Incorrect API key provided: [redacted]",
            None,
            None,
        ),
        (lambda: RuntimeError("boom"), FailureKind.upstream_error, "upstream error: boom", None, None),
    ],
)
async def test_plugin_failures_in_the_usual_kinds(client, llm_plugin, raised, kind, text, retry_after, limit):
    llm_plugin.RAISE.append(raised())
    failure = await fail(client, "bench-script")
    assert (failure.kind, str(failure), failure.retry_after, failure.context_limit) == (kind, text, retry_after, limit)


async def test_a_seat_that_hangs_is_a_timeout(client, llm_plugin):
    llm_plugin.HANG.set()
    failure = await fail(client, "bench-script", timeout=0.3)
    assert (failure.kind, str(failure)) == (FailureKind.timeout, "timeout after 0.3s")


async def until(condition: Any) -> None:
    """Poll (on the loop, so the client's own work goes on) until `condition()` holds."""
    async with asyncio.timeout(10):
        while not condition():
            await asyncio.sleep(0.01)


async def test_a_local_plugin_model_takes_one_call_at_a_time_even_past_a_timeout(client, llm_plugin):
    llm_plugin.LOCAL_OPEN.clear()
    first = asyncio.create_task(client.chat(REF, body("bench-local", [{"role": "user", "content": "one"}]), 0.3))
    await until(lambda: llm_plugin.LOCAL_CALLS == ["one"])
    # The first call gives up at its timeout, but its thread still runs the plugin: the slot stays
    # taken, so the next call waits for it rather than running beside it.
    assert (await asyncio.gather(first, return_exceptions=True))[0].kind is FailureKind.timeout
    failure = await fail(client, "bench-local", timeout=0.3, messages=[{"role": "user", "content": "two"}])
    assert str(failure) == "timeout after 0.3s (waiting for bench-local, which takes 1 call at a time)"
    assert llm_plugin.LOCAL_CALLS == ["one"]
    llm_plugin.LOCAL_OPEN.set()  # the first thread ends and frees the slot
    result = await client.chat(REF, body("bench-local", [{"role": "user", "content": "three"}]), 5)
    assert (result.answer, llm_plugin.LOCAL_CALLS) == ("local answer to three", ["one", "three"])


async def test_a_models_concurrency_lets_more_calls_run_at_once(client, llm_plugin):
    llm_plugin.LOCAL_OPEN.clear()
    calls = [
        asyncio.create_task(client.chat(REF, body("bench-local", [{"role": "user", "content": n}]), 10, concurrency=3))
        for n in ("a", "b", "c")
    ]
    await until(lambda: sorted(llm_plugin.LOCAL_CALLS) == ["a", "b", "c"])  # all three inside the plugin at once
    llm_plugin.LOCAL_OPEN.set()
    assert [r.answer for r in await asyncio.gather(*calls)] == [f"local answer to {n}" for n in ("a", "b", "c")]


async def test_llms_own_openai_plugin_against_the_fake_provider(client, fake_upstream: FakeUpstream):
    (llm.user_dir() / "extra-openai-models.yaml").write_text(
        f"- model_id: relay-kimi\n  model_name: kimi-k2\n  api_base: {fake_upstream.base_url}\n"
    )
    fake_upstream.script("kimi-k2", reply="the bug is on line 3", usage={"prompt_tokens": 20, "completion_tokens": 6})
    assert "relay-kimi" in [m.model_id for m in await client.listing()]
    result = await client.chat(REF, body("relay-kimi", CONVERSATION[:2], temperature=0.5), 5)
    assert (result.answer, result.usage) == (
        "the bug is on line 3",
        {"prompt_tokens": 20, "completion_tokens": 6, "total_tokens": 26},
    )
    [sent] = fake_upstream.chat_requests
    assert (sent.json["model"], sent.json["messages"], sent.json["temperature"]) == (
        "kimi-k2",
        [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "first question"}],
        0.5,
    )
    assert sent.json.get("stream") in (None, False)
    fake_upstream.script("kimi-k2", context_limit=8192)
    failure = await fail(client, "relay-kimi")
    assert (failure.kind, failure.status, failure.context_limit) == (FailureKind.context_too_long, 400, 8192)
