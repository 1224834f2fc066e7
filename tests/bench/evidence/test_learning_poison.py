"""Learned context windows that a caller cannot set: not from text the caller wrote, never below a
prompt the model has answered, and forgotten when the endpoint is refreshed."""

from __future__ import annotations

import pytest

from benchwarmers.bench.panels.learning import lowered_window, stated_window
from tests.support.catalog import ALIAS, OR_ID, entry, fact, refresh, setup
from tests.support.panels import ask

POISON = "Summarise this. This model's maximum context length is 1 tokens."


def learned_sources(server) -> list[tuple[str, object]]:
    detail = server.admin(lambda b: b.models.model(ALIAS))
    return [(s["fact"], s["value"]) for s in detail["sources"] if s["source"] == "learned"]


@pytest.fixture
def bench_p(server, fake_upstream):
    setup(server, fake_upstream, entry(window=131_072))
    server.admin(lambda b: b.collections.add_collection({"name": "p", "members": [ALIAS], "max_explorers": 0}))
    return server


def test_a_provider_quoting_the_prompt_cannot_set_the_window(bench_p, fake_upstream, client):
    fake_upstream.script(OR_ID, quote_input=True)
    seat = ask(client, "bench/p", POISON).bench["seats"][0]
    assert seat["status"] == "error"
    assert "maximum context length is 1 tokens" in seat["error"]  # the provider did quote it
    assert fact(bench_p, "context_window") == {"value": 131_072, "source": "listing"}
    assert learned_sources(bench_p) == []
    # The collection still answers prompts of any ordinary size (no 413 from a window of 1).
    fake_upstream.script(OR_ID, reply="fine")
    assert ask(client, "bench/p", "hello").bench["seats"][0]["status"] == "ok"


def test_a_window_is_never_learned_below_a_prompt_the_model_answered(bench_p, fake_upstream, client):
    fake_upstream.script(OR_ID, reply="read it all")
    big = "word " * 40_000  # about 50,000 tokens by the bench's estimate
    assert ask(client, "bench/p", big).bench["seats"][0]["status"] == "ok"
    answered = dict(learned_sources(bench_p))["answered_tokens"]
    assert answered > 40_000

    fake_upstream.script(OR_ID, context_limit=40_000)  # an error that contradicts the answer above
    assert ask(client, "bench/p", "short").bench["seats"][0]["status"] == "error"
    assert fact(bench_p, "context_window") == {"value": 131_072, "source": "listing"}

    fake_upstream.script(OR_ID, context_limit=answered + 1_000)  # above the floor: learned
    assert ask(client, "bench/p", "short").bench["seats"][0]["status"] == "error"
    assert fact(bench_p, "context_window") == {"value": answered + 1_000, "source": "learned"}


def test_the_floor_is_the_prompt_tokens_the_provider_counted_not_the_estimate(bench_p, fake_upstream, client):
    # The numbers: a prose prompt estimated at ~2,400 tokens that the server counted as 1,835.
    prose = "The quick brown fox jumps over the lazy dog. " * 190
    usage = {"prompt_tokens": 1_835, "completion_tokens": 1, "total_tokens": 1_836}
    fake_upstream.script(OR_ID, reply="read it", usage=usage)
    assert ask(client, "bench/p", prose).bench["seats"][0]["status"] == "ok"
    assert dict(learned_sources(bench_p))["answered_tokens"] == 1_835

    # The server's later "2048" is possible after all: learned, where the estimate's floor ignored it.
    fake_upstream.script(OR_ID, context_limit=2_048)
    assert ask(client, "bench/p", "short").bench["seats"][0]["status"] == "error"
    assert fact(bench_p, "context_window") == {"value": 2_048, "source": "learned"}


def test_a_refresh_forgets_learned_windows(bench_p, fake_upstream, client):
    fake_upstream.script(OR_ID, context_limit=40_000)
    assert ask(client, "bench/p", "short").bench["seats"][0]["status"] == "error"
    assert fact(bench_p, "context_window") == {"value": 40_000, "source": "learned"}
    refresh(bench_p)
    assert fact(bench_p, "context_window") == {"value": 131_072, "source": "listing"}
    assert ("context_window", 40_000) not in learned_sources(bench_p)


@pytest.mark.parametrize(
    ("error", "limit", "request_text", "stated"),
    [
        ("This model's maximum context length is 4097 tokens.", 4097, "Review this.", 4097),
        ("Invalid prompt: maximum context length is 1 tokens", 1, "maximum context length is 1 tokens", None),
        ("maximum context length is 8192 tokens", 8192, "use at most 8192 words", None),
        ("", 8192, "anything", None),
        ("maximum context length is 8192 tokens", None, "anything", None),
    ],
)
def test_stated_window(error, limit, request_text, stated):
    assert stated_window(error, limit, request_text) == stated


@pytest.mark.parametrize(
    ("current", "learned", "floor", "lowered"),
    [(None, 4000, 0, 4000), (8000, 4000, 0, 4000), (4000, 8000, 0, None), (8000, 4000, 5000, None), (8000, 0, 0, None)],
)
def test_lowered_window(current, learned, floor, lowered):
    assert lowered_window(current, learned, floor) == lowered
