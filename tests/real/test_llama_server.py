"""The gateway in front of llama.cpp's real server and a real 135M model (tests/real/llama.py): what
the fake provider cannot show. Answers are a few tokens (max_tokens) to keep each call short."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest

from benchwarmers.bench.admin.alerts import list_alerts
from benchwarmers.bench.services import Bench
from benchwarmers.store import calls
from tests.real.llama import MODEL, N_CTX, LlamaServer
from tests.support.benchserver import BenchServer

ALIAS = f"llama/{MODEL}"
PROSE = "The quick brown fox jumps over the lazy dog near the quiet river bank. "


@pytest.fixture
def bench(tmp_path: Path, llama: LlamaServer) -> Iterator[BenchServer]:
    server = BenchServer(tmp_path / "home").start()
    try:

        async def setup(b: Bench) -> None:
            await b.endpoints.add_endpoint("llama", llama.v1, "openai", free_tier=True)
            await b.endpoints.refresh_endpoint("llama")
            await b.collections.add_collection(
                {"name": "local", "members": [ALIAS], "description": "llama.cpp", "tags": ["real"], "max_explorers": 0}
            )

        server.admin(setup)
        yield server
    finally:
        server.stop()


def ask(server: BenchServer, content: str, **request: Any) -> httpx2.Response:
    body = {"model": "bench/local", "messages": [{"role": "user", "content": content}], "max_tokens": 4, **request}
    return httpx2.post(f"{server.v1}/chat/completions", json=body, timeout=300)


def seat(reply: httpx2.Response) -> dict[str, Any]:
    assert reply.status_code == 200, reply.text
    [only] = reply.json()["bench"]["seats"]
    return only  # type: ignore[no-any-return]


def model_row(server: BenchServer) -> dict[str, Any]:
    return server.admin(lambda b: b.models.model(ALIAS))


async def stored_seats(bench: Bench, panel_id: str) -> list[dict[str, Any]]:
    async with bench.state.read() as conn:
        [panel] = await calls.list_panels(conn, panel_id=panel_id)
    return panel["seats"]  # type: ignore[no-any-return]


def test_a_plain_panel_answers_with_the_servers_own_usage(bench, llama):
    messages = [{"role": "user", "content": "Name one colour."}]
    direct = llama.chat(messages=messages, max_tokens=1).json()["usage"]
    reply = ask(bench, "Name one colour.")
    answered = seat(reply)
    assert (answered["alias"], answered["status"], answered["error"]) == (ALIAS, "ok", "")
    assert answered["answer"].strip()
    usage = reply.json()["bench"]["usage"][answered["call"]]
    # The prompt counted as the server counts it; the answer within max_tokens.
    assert usage["prompt_tokens"] == direct["prompt_tokens"]
    assert 1 <= usage["completion_tokens"] <= 4
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]
    assert reply.json()["usage"] == usage
    [stored] = bench.admin(lambda b: stored_seats(b, reply.json()["bench"]["panel"]))
    assert stored["usage"] == usage


def test_a_json_schema_the_server_refuses_never_retires_the_model(bench):
    # llama.cpp's server answers a json_schema response format with a 500 validation error that
    # names the request's field: the caller's doing, ten times over, and the model stays seated.
    schema = {"type": "json_schema", "json_schema": {"name": "colour", "schema": {"type": "object"}}}
    for _ in range(10):
        refused = seat(ask(bench, "Name one colour as JSON.", response_format=schema))
        assert refused["status"] == "error"
        assert "('body', 'response_format', 'type')" in refused["error"]
    row = model_row(bench)
    assert (row["status"], row["retired_at"]) == ("ok", None)
    assert bench.admin(lambda b: list_alerts(b.state)) == []
    assert seat(ask(bench, "Name one colour."))["status"] == "ok"


def test_an_answer_cut_by_max_tokens_is_marked_truncated(bench):
    reply = ask(bench, "Write a long story about a fox.", max_tokens=3)
    cut = seat(reply)
    assert (cut["status"], cut["truncated"]) == ("ok", "length")
    assert "cut by max_tokens (finish_reason: length)" in reply.json()["choices"][0]["message"]["content"]
    [stored] = bench.admin(lambda b: stored_seats(b, reply.json()["bench"]["panel"]))
    assert stored["truncated"] == "length"


FITS = PROSE * 27  # ~430 of SmolLM2's tokens, estimated above 512 at characters ÷ 4 + 10%
TOO_LONG = PROSE * 40


def learn_the_window(bench: BenchServer) -> None:
    """A large prompt the server answers, then one it refuses with its real context error."""
    answered = ask(bench, FITS, max_tokens=1)
    assert seat(answered)["status"] == "ok", seat(answered)["error"]
    assert answered.json()["usage"]["prompt_tokens"] < N_CTX < len(FITS) / 4 * 1.1
    refused = seat(ask(bench, TOO_LONG, max_tokens=1))
    assert refused["status"] == "error"
    assert f"maximum context length is {N_CTX} tokens" in refused["error"]


def test_the_window_is_learned_from_the_real_error_after_a_large_answered_prompt(bench):
    learn_the_window(bench)
    # The floor under the learned window is what the server counted, so its window is believed.
    row = model_row(bench)
    assert (row["status"], row["context_window"]) == ("ok", N_CTX)
    # A prompt too large for the learned window is refused before any call.
    too_large = ask(bench, TOO_LONG, max_tokens=1)
    assert too_large.status_code == 413, too_large.text


def test_a_prompt_the_server_answered_is_not_refused_after_the_window_is_learned(bench):
    learn_the_window(bench)
    # One answer is not yet evidence: the prose default (3.6 characters a token + 10%) still puts
    # the prompt the server answered above the learned window.
    refused = ask(bench, FITS, max_tokens=1)
    assert refused.status_code == 413, refused.text
    assert "(prose, default 3.6 characters a token + 10% until the model's usage is known)" in refused.text
    # Two more answers of similar prose (the server's own prompt_tokens each time) and the model's
    # ratio is learned: the same prompt is sent, and answered.
    for words in (PROSE * 23, PROSE * 22):  # shorter, so the default lets them through
        assert seat(ask(bench, words, max_tokens=1))["status"] == "ok"
    again = ask(bench, FITS, max_tokens=1)
    assert again.status_code == 200, again.text
    assert seat(again)["status"] == "ok"
