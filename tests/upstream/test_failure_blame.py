"""Whose failure it is (`caused_by_request`), on real error bodies from the providers the bench
supports: only the model's or provider's failures count toward retiring a model.

llama.cpp's bodies were captured from `python -m llama_cpp.server` 0.3.36 (tests/real/ runs it);
the others are the bodies those providers send, as reported in public issues (OpenAI's and Groq's
SDK errors, OpenRouter's and Gemini's OpenAI-compatible endpoints, Mistral's and vLLM's servers,
Ollama's OpenAI-compatible API)."""

from __future__ import annotations

import orjson
import pytest

from benchwarmers.upstream.failures import (
    FailureKind,
    UpstreamFailure,
    caused_by_request,
    classify_response,
    timeout_failure,
)

LLAMA_CPP_SCHEMA = (
    "1 validation error:\n  {'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), 'msg': "
    "\"Input should be 'text' or 'json_object'\", 'input': 'json_schema', "
    "'ctx': {'expected': \"'text' or 'json_object'\"}}\n\n  File "
    '"/venv/lib/python3.11/site-packages/llama_cpp/server/app.py", line 376, in create_chat_completion\n    POST '
    "/v1/chat/completions"
)
LLAMA_CPP_NUMBER = (
    "1 validation error:\n  {'type': 'float_parsing', 'loc': ('body', 'temperature'), 'msg': 'Input should be a valid "
    "number, unable to parse string as a number', 'input': 'hot'}"
)


def openai_body(message: str, code: str | None = None, kind: str = "invalid_request_error", **extra: object) -> bytes:
    return orjson.dumps({"error": {"message": message, "type": kind, "param": None, "code": code, **extra}})


def gemini_body(code: int, message: str, status: str) -> bytes:
    return orjson.dumps([{"error": {"code": code, "message": message, "status": status}}])


def mistral_body(message: object, kind: str = "invalid_request_error", code: str | None = None) -> bytes:
    return orjson.dumps({"object": "error", "message": message, "type": kind, "param": None, "code": code})


def vllm_body(message: str, kind: str, code: int) -> bytes:
    return orjson.dumps({"object": "error", "message": message, "type": kind, "param": None, "code": code})


THE_REQUESTS = [
    pytest.param(
        400,
        openai_body(
            "This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens. "
            "Please reduce the length of the messages.",
            "context_length_exceeded",
        ),
        FailureKind.context_too_long,
        id="openai-context",
    ),
    pytest.param(
        400,
        openai_body(
            "Unsupported parameter: 'max_tokens' is not supported with this model. "
            "Use 'max_completion_tokens' instead.",
            "unsupported_parameter",
        ),
        FailureKind.bad_request,
        id="openai-unsupported-parameter",
    ),
    pytest.param(
        400,
        orjson.dumps(
            {
                "error": {
                    "message": "This endpoint's maximum context length is 131072 tokens. However, you requested about "
                    "200000 tokens (200000 of text input). Please reduce the length of either one.",
                    "code": 400,
                }
            }
        ),
        FailureKind.context_too_long,
        id="openrouter-context",
    ),
    pytest.param(
        400,
        orjson.dumps(
            {
                "error": {
                    "message": "Provider returned error",
                    "code": 400,
                    "metadata": {"raw": "messages[2] assistant content must contain at least one part"},
                }
            }
        ),
        FailureKind.bad_request,
        id="openrouter-provider-refused-the-request",
    ),
    pytest.param(
        400,
        openai_body("Please reduce the length of the messages or completion.", "context_length_exceeded"),
        FailureKind.context_too_long,
        id="groq-context",
    ),
    pytest.param(
        400,
        openai_body("'response_format.type' : value is not one of the allowed values ['text','json_object']"),
        FailureKind.bad_request,
        id="groq-json-schema",
    ),
    pytest.param(
        400,
        gemini_body(
            400,
            "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).",
            "INVALID_ARGUMENT",
        ),
        FailureKind.bad_request,
        id="gemini-too-many-tokens",
    ),
    pytest.param(
        422,
        mistral_body(
            {
                "detail": [
                    {
                        "type": "extra_forbidden",
                        "loc": ["body", "safe_mode"],
                        "msg": "Extra inputs are not permitted",
                        "input": False,
                    }
                ]
            }
        ),
        FailureKind.bad_request,
        id="mistral-422-validation",
    ),
    pytest.param(
        400,
        mistral_body(
            "Prompt contains 40000 tokens and 0 draft tokens, too large for model with 32768 maximum context length"
        ),
        FailureKind.context_too_long,
        id="mistral-context",
    ),
    pytest.param(
        500, openai_body(LLAMA_CPP_SCHEMA, kind="internal_server_error"), FailureKind.upstream_error, id="llama-schema"
    ),
    pytest.param(
        500, openai_body(LLAMA_CPP_NUMBER, kind="internal_server_error"), FailureKind.upstream_error, id="llama-number"
    ),
    pytest.param(
        400,
        openai_body(
            "This model's maximum context length is 2048 tokens. However, you requested 3039 tokens (3031 in the "
            "messages, 8 in the completion). Please reduce the length of the messages or completion.",
            "context_length_exceeded",
        ),
        FailureKind.context_too_long,
        id="llama-context",
    ),
    pytest.param(
        400,
        vllm_body(
            "This model's maximum context length is 4096 tokens. However, you requested 6379 tokens (6029 in the "
            "messages, 350 in the completion). Please reduce the length of the messages or completion.",
            "BadRequestError",
            400,
        ),
        FailureKind.context_too_long,
        id="vllm-context",
    ),
    pytest.param(
        400,
        vllm_body("max_tokens must be at least 1, got -186.", "BadRequestError", 400),
        FailureKind.bad_request,
        id="vllm-max-tokens",
    ),
    pytest.param(
        400,
        openai_body('invalid format: expected "json" or a JSON schema', kind="invalid_request_error"),
        FailureKind.bad_request,
        id="ollama-format",
    ),
]

THE_MODELS = [
    pytest.param(
        401,
        openai_body(
            "Incorrect API key provided: sk-abc***. You can find your API key on the dashboard.", "invalid_api_key"
        ),
        FailureKind.auth,
        id="openai-key",
    ),
    pytest.param(
        404,
        openai_body("The model `gpt-5-turbo` does not exist or you do not have access to it.", "model_not_found"),
        FailureKind.not_found,
        id="openai-no-model",
    ),
    pytest.param(
        500,
        openai_body("The server had an error while processing your request. Sorry about that!", kind="server_error"),
        FailureKind.upstream_error,
        id="openai-500",
    ),
    pytest.param(
        429,
        openai_body("Rate limit reached for gpt-4o on requests per min (RPM): Limit 3.", "rate_limit_exceeded"),
        FailureKind.rate_limited,
        id="openai-429",
    ),
    pytest.param(
        502,
        orjson.dumps({"error": {"message": "Provider returned error", "code": 502}}),
        FailureKind.upstream_error,
        id="openrouter-502",
    ),
    pytest.param(
        401,
        orjson.dumps({"error": {"message": "No auth credentials found", "code": 401}}),
        FailureKind.auth,
        id="or-401",
    ),
    pytest.param(
        400,
        orjson.dumps({"error": {"message": "foo/bar is not a valid model ID", "code": 400}}),
        FailureKind.bad_request,
        id="openrouter-no-model",
    ),
    pytest.param(
        400,
        gemini_body(400, "API key not valid. Please pass a valid API key.", "INVALID_ARGUMENT"),
        FailureKind.auth,
        id="gemini-key",
    ),
    pytest.param(
        503,
        gemini_body(503, "The model is overloaded. Please try again later.", "UNAVAILABLE"),
        FailureKind.upstream_error,
        id="gemini-overloaded",
    ),
    pytest.param(
        429,
        gemini_body(429, "Resource has been exhausted (e.g. check quota).", "RESOURCE_EXHAUSTED"),
        FailureKind.rate_limited,
        id="gemini-quota",
    ),
    pytest.param(
        400,
        mistral_body("Invalid model: mistral-huge", "invalid_model", "1500"),
        FailureKind.bad_request,
        id="mistral-no-model",
    ),
    pytest.param(
        401, orjson.dumps({"message": "Unauthorized", "request_id": "abc123"}), FailureKind.auth, id="mistral-401"
    ),
    pytest.param(
        404,
        openai_body('model "llama3" not found, try pulling it first', kind="api_error"),
        FailureKind.not_found,
        id="ollama-no-model",
    ),
    pytest.param(
        500,
        openai_body("llama runner process has terminated: signal: killed", kind="api_error"),
        FailureKind.upstream_error,
        id="ollama-runner-died",
    ),
    pytest.param(
        404,
        vllm_body("The model `foo` does not exist.", "NotFoundError", 404),
        FailureKind.not_found,
        id="vllm-no-model",
    ),
    pytest.param(
        500,
        openai_body("llama_decode returned -3", kind="internal_server_error"),
        FailureKind.upstream_error,
        id="llama-500-not-validation",
    ),
]


@pytest.mark.parametrize(("status", "body", "kind"), THE_REQUESTS)
def test_a_refusal_of_the_request_is_the_requests_doing(status: int, body: bytes, kind: FailureKind) -> None:
    failure = classify_response(status, {}, body)
    assert failure.kind is kind
    assert caused_by_request(failure) is True


@pytest.mark.parametrize(("status", "body", "kind"), THE_MODELS)
def test_a_failure_of_the_model_or_provider_is_theirs(status: int, body: bytes, kind: FailureKind) -> None:
    failure = classify_response(status, {}, body)
    assert failure.kind is kind
    assert caused_by_request(failure) is False


def test_failures_without_a_response() -> None:
    assert caused_by_request(timeout_failure(120)) is False
    assert caused_by_request(UpstreamFailure(FailureKind.connection, "Connection refused")) is False
    # The llm client refusing what a plugin cannot take (an image, an option out of range).
    assert caused_by_request(UpstreamFailure(FailureKind.bad_request, "the llm client sends text only")) is True
    # A 500 that merely says "validation error" without naming the request's body is the server's.
    assert caused_by_request(UpstreamFailure(FailureKind.upstream_error, "validation error", status=500)) is False
