"""Refusals: the OpenAI error shape, the right status, a message that teaches what to do."""

from __future__ import annotations

import httpx2
import openai
import pytest

from tests.support.panels import collection

CATALOGUE = "Collections: bench/pair: pair work [test]; bench/small: small work [test]"


@pytest.fixture
def two_collections(bench_with_roster):
    collection(bench_with_roster, "pair", ["llama-3.3-70b", "qwen3-32b"])
    collection(bench_with_roster, "small", ["phi-4", "llama-3.1-8b"])
    return bench_with_roster


def post(server, body, **kwargs):
    return httpx2.post(f"{server.v1}/chat/completions", json=body, **kwargs)


def test_a_model_that_is_not_a_collection_is_400_listing_every_collection(two_collections, fake):
    response = post(two_collections, {"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]})
    assert response.status_code == 400
    assert response.json() == {
        "error": {
            "message": f"model 'gpt-4o' is not a collection: ask for a collection as bench/<name>. {CATALOGUE}",
            "type": "invalid_request_error",
            "param": "model",
            "code": "model_not_collection",
        }
    }
    missing = post(two_collections, {"messages": [{"role": "user", "content": "hi"}]})
    assert missing.status_code == 400
    assert missing.json()["error"]["message"].startswith("no model was given: ask for a collection")
    assert fake.chat_requests == []


def test_an_unknown_collection_is_404_listing_every_collection(two_collections):
    response = post(two_collections, {"model": "bench/nope", "messages": [{"role": "user", "content": "hi"}]})
    assert response.status_code == 404
    assert response.json() == {
        "error": {
            "message": f"collection bench/nope does not exist. {CATALOGUE}",
            "type": "invalid_request_error",
            "param": "model",
            "code": "model_not_found",
        }
    }


def test_a_prompt_larger_than_a_members_window_is_413_naming_each(two_collections, fake):
    # 40,000 characters of prose (no code symbols) → ceil(40,000 / 3.6 × 1.1) = 12,223 tokens: larger
    # than llama-3.1-8b's 8,000 only. No seat has reported usage yet, so the default ratio is named.
    response = post(two_collections, {"model": "bench/small", "messages": [{"role": "user", "content": "z" * 40_000}]})
    assert response.status_code == 413
    assert response.json() == {
        "error": {
            "message": "the prompt is about 12,223 tokens (prose, default 3.6 characters a token + 10% until the "
            "model's usage is known), larger than the context window of fake/llama-3.1-8b "
            "(8,000 tokens). Trim the prompt or pick a collection with larger windows (GET /v1/models "
            "shows each collection's together.context_window).",
            "type": "invalid_request_error",
            "param": "messages",
            "code": "context_length_exceeded",
        }
    }
    # 80,000 characters → 24,445 tokens: both members named.
    both = post(two_collections, {"model": "bench/small", "messages": [{"role": "user", "content": "z" * 80_000}]})
    assert "fake/phi-4 (16,000 tokens), fake/llama-3.1-8b (8,000 tokens)" in both.json()["error"]["message"]
    assert fake.chat_requests == []


def test_the_sdk_raises_the_right_exceptions(two_collections, client):
    with pytest.raises(openai.BadRequestError) as bad:
        client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": "hi"}])
    assert bad.value.code == "model_not_collection"
    with pytest.raises(openai.NotFoundError):
        client.chat.completions.create(model="bench/nope", messages=[{"role": "user", "content": "hi"}])
    with pytest.raises(openai.APIStatusError) as large:
        client.chat.completions.create(model="bench/small", messages=[{"role": "user", "content": "z" * 80_000}])
    assert large.value.status_code == 413


@pytest.mark.parametrize(
    ("body", "message", "param"),
    [
        ({"model": "bench/pair"}, "messages must be a non-empty list of chat messages", "messages"),
        (
            {"model": "bench/pair", "messages": [{"content": "x"}]},
            "messages[0] must be an object with a role",
            "messages",
        ),
        (
            {"model": "bench/pair:fused", "messages": [{"role": "user", "content": "x"}]},
            "model 'bench/pair:fused' has an unknown suffix ':fused'; use ':merged', ':all' or ':pick'",
            "model",
        ),
        (
            {
                "model": "bench/pair",
                "messages": [{"role": "user", "content": "x"}],
                "bench": {"reply": "some"},
            },
            "bench.reply must be 'all', 'merged' or 'pick'",
            "bench.reply",
        ),
        (
            {"model": "bench/pair", "messages": [{"role": "user", "content": "x"}], "bench": {"colour": 1}},
            "unknown bench option(s): colour; known: reply, with, shape",
            "bench",
        ),
        (
            {
                "model": "bench/pair",
                "messages": [{"role": "user", "content": "x"}],
                "bench": {"shape": "poetry"},
            },
            "bench.shape 'poetry' is not known. Shapes are: general, review, design, enumeration, code, writing, "
            "math, vision",
            "bench.shape",
        ),
    ],
)
def test_malformed_requests_are_400_with_what_is_wrong(two_collections, body, message, param):
    response = post(two_collections, body)
    assert response.status_code == 400
    assert response.json()["error"] == {
        "message": message,
        "type": "invalid_request_error",
        "param": param,
        "code": "invalid_request",
    }


def test_invalid_json_and_unknown_routes_use_the_same_error_shape(two_collections):
    response = httpx2.post(
        f"{two_collections.v1}/chat/completions",
        content=b"{not json",
        headers={"content-type": "application/json"},
    )
    assert response.status_code == 400
    assert response.json()["error"]["message"].startswith("the body is not valid JSON")
    missing = httpx2.get(f"{two_collections.url}/v1/engines")
    assert missing.status_code == 404
    assert missing.json() == {
        "error": {
            "message": "no route GET /v1/engines; see /v1/models, /v1/chat/completions",
            "type": "invalid_request_error",
            "param": None,
            "code": "not_found",
        }
    }
    assert missing.headers["x-request-id"].startswith("req-")
    wrong_method = httpx2.get(f"{two_collections.v1}/chat/completions")
    assert wrong_method.status_code == 405
    assert wrong_method.json()["error"]["code"] == "method_not_allowed"


def test_no_collections_yet_says_how_to_make_one(bench_with_roster):
    response = post(bench_with_roster, {"model": "bench/x", "messages": [{"role": "user", "content": "hi"}]})
    assert response.json()["error"]["message"] == (
        "collection bench/x does not exist. No collections exist yet: create one with `benchwarmers collection add`."
    )
