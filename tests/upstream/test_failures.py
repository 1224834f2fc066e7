import orjson
import pytest

from benchwarmers.upstream.failures import (
    FailureKind,
    UpstreamFailure,
    classify_response,
    connection_failure,
    error_message_from_body,
    timeout_failure,
)

KEY = "sk-live-0123456789abcdefghij"


def openai_error(message: str, code: str | None = None, kind: str = "invalid_request_error") -> bytes:
    return orjson.dumps({"error": {"message": message, "type": kind, "param": None, "code": code}})


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b'{"error": {"message": "Bad thing", "type": "x"}}', "Bad thing"),
        (b'{"error": "plain string error"}', "plain string error"),
        (b'{"message": "top-level message"}', "top-level message"),
        (b'{"detail": "Not Found"}', "Not Found"),
        (b'{"detail": [{"msg": "field required"}, {"msg": "bad type"}]}', "field required; bad type"),
        (
            b'[{"error": {"code": 429, "message": "Resource has been exhausted", "status": "RESOURCE_EXHAUSTED"}}]',
            "Resource has been exhausted",
        ),
        (b"  upstream   connect error\n or disconnect  ", "upstream connect error or disconnect"),
        (b"<html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>", "502 Bad Gateway"),
        (
            b"<html><body><h1>Service\n Unavailable</h1><p>try later</p></body></html>",
            "Service Unavailable try later",
        ),
        (b"{not json", "{not json"),
        (b"", ""),
        ('{"error": {"message": "from str"}}', "from str"),
    ],
)
def test_error_message_from_body(body: bytes | str, message: str) -> None:
    assert error_message_from_body(body) == message


def test_rate_limited_with_retry_after() -> None:
    failure = classify_response(429, {"Retry-After": "12"}, openai_error("Rate limit reached", "rate_limit_exceeded"))
    assert failure.kind is FailureKind.rate_limited
    assert failure.status == 429
    assert failure.retry_after == 12.0
    assert failure.headers == {"retry-after": "12"}
    assert str(failure) == "rate limited (429): Rate limit reached; retry in 12s"


def test_rate_limited_from_groq_reset_header() -> None:
    failure = classify_response(429, {"x-ratelimit-reset-requests": "2m59.56s"}, openai_error("Slow down"))
    assert failure.kind is FailureKind.rate_limited
    assert failure.retry_after == pytest.approx(179.56)
    assert str(failure) == "rate limited (429): Slow down; retry in 180s"


def test_rate_limited_without_any_hint() -> None:
    failure = classify_response(429, {}, b"")
    assert (failure.kind, failure.retry_after, failure.message) == (
        FailureKind.rate_limited,
        None,
        "Too Many Requests",
    )


def test_gemini_array_is_rate_limited() -> None:
    body = b'[{"error": {"code": 429, "message": "Quota exceeded", "status": "RESOURCE_EXHAUSTED"}}]'
    failure = classify_response(429, {}, body)
    assert (failure.kind, failure.status, failure.message) == (
        FailureKind.rate_limited,
        429,
        "Quota exceeded",
    )


def test_rate_limit_code_on_another_status() -> None:
    failure = classify_response(413, {}, openai_error("Request too large on tokens per min", "rate_limit_exceeded"))
    assert failure.kind is FailureKind.rate_limited


def test_error_object_inside_a_200_uses_its_code() -> None:
    failure = classify_response(200, {}, b'{"error": {"message": "Provider returned error", "code": 429}}')
    assert (failure.kind, failure.status) == (FailureKind.rate_limited, 429)


@pytest.mark.parametrize(
    ("status", "body", "limit"),
    [
        (
            400,
            openai_error(
                "This model's maximum context length is 4097 tokens. However, your messages resulted in "
                "4294 tokens. Please reduce the length of the messages.",
                "context_length_exceeded",
            ),
            4097,
        ),
        (400, openai_error("This model's maximum context length is 128,000 tokens."), 128000),
        (413, openai_error("Input exceeds the context window of 8192 tokens"), 8192),
        (
            400,
            openai_error("Prompt contains 40000 tokens, too large for model with 32768 maximum context length"),
            32768,
        ),
        (400, openai_error("prompt is too long: 210000 tokens > 200000 maximum"), 200000),
        (400, openai_error("Too long", "context_length_exceeded"), None),
        # llama.cpp's server, newer builds: the window beside the message, and in it on older ones.
        (
            400,
            b'{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it",'
            b'"type":"exceed_context_size_error","n_prompt_tokens":2605,"n_ctx":2048}}',
            2048,
        ),
        (
            400,
            b'{"error":{"code":400,"message":"request (4476 tokens) exceeds the available context size (4096 tokens)",'
            b'"type":"exceed_context_size_error","n_prompt_tokens":4476,"n_ctx":4096}}',
            4096,
        ),
        (500, openai_error("Please reduce the length of the messages or completion."), None),
    ],
)
def test_context_too_long(status: int, body: bytes, limit: int | None) -> None:
    failure = classify_response(status, {}, body)
    assert failure.kind is FailureKind.context_too_long
    assert failure.context_limit == limit
    assert failure.status == status


@pytest.mark.parametrize(
    ("status", "kind"),
    [
        (401, FailureKind.auth),
        (403, FailureKind.auth),
        (404, FailureKind.not_found),
        (400, FailureKind.bad_request),
        (422, FailureKind.bad_request),
        (500, FailureKind.upstream_error),
        (502, FailureKind.upstream_error),
        (503, FailureKind.upstream_error),
    ],
)
def test_status_kinds(status: int, kind: FailureKind) -> None:
    failure = classify_response(status, {}, openai_error("nope"))
    assert (failure.kind, failure.status, failure.message, failure.context_limit) == (
        kind,
        status,
        "nope",
        None,
    )


def test_upstream_error_text() -> None:
    failure = classify_response(503, {}, openai_error("overloaded", "overloaded", "server_error"))
    assert str(failure) == "upstream error (503): overloaded"


def test_explicit_retry_after_on_5xx_but_not_reset_headers() -> None:
    assert classify_response(503, {"retry-after": "5"}, b"busy").retry_after == 5.0
    assert classify_response(503, {"x-ratelimit-reset-requests": "2m"}, b"busy").retry_after is None


def test_message_is_scrubbed_one_line_and_short() -> None:
    body = openai_error(f"Incorrect API key provided: {KEY}.\nSee\thttps://example.com " + "x" * 900)
    failure = classify_response(401, {}, body, secrets=[KEY])
    assert KEY not in str(failure)
    assert KEY not in repr(failure)
    assert failure.message.startswith("Incorrect API key provided: [redacted]. See https://example.com xxx")
    assert "\n" not in failure.message
    assert len(failure.message) == 500
    assert failure.message.endswith("…")


def test_key_shapes_are_scrubbed_without_being_told() -> None:
    failure = classify_response(401, {}, openai_error("bad key gsk_0123456789abcdefghijKLMN"))
    assert failure.message == "bad key [redacted]"


def test_timeout_failures() -> None:
    failure = timeout_failure(30)
    assert (failure.kind, failure.status, str(failure)) == (FailureKind.timeout, None, "timeout after 30s")
    assert str(timeout_failure(0.25)) == "timeout after 0.25s"


def test_transport_errors() -> None:
    refused = connection_failure(ConnectionRefusedError(111, "Connection refused"), [KEY])
    assert (refused.kind, str(refused)) == (FailureKind.connection, "connection failed: [Errno 111] Connection refused")
    leaky = connection_failure(OSError(f"boom {KEY}"), secrets=[KEY])
    assert str(leaky) == "connection failed: boom [redacted]"
    assert str(timeout_failure(12.5)) == "timeout after 12.5s"


def test_failure_is_an_exception_with_attributes() -> None:
    failure = UpstreamFailure(FailureKind.bad_request, "bad", status=400, headers={"X-A": "1"})
    assert isinstance(failure, Exception)
    assert failure.headers == {"x-a": "1"}
    assert (failure.retry_after, failure.context_limit) == (None, None)
    assert str(failure) == "bad request (400): bad"
