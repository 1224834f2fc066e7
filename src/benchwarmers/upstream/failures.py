"""What went wrong upstream, in the few kinds the bench acts on.

The bench cools a model down on `rate_limited`, lowers its learned window on `context_too_long`,
and merely records the rest. A message is scrubbed here of key-shaped text and the secrets its
call knew (the endpoint's own key); what a model call gives back, answer and error, is scrubbed of
every secret the bench knows once more, in one place: the model-calling service (bench/calls/).
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Iterable, Mapping
from enum import StrEnum
from http import HTTPStatus
from typing import Any

import orjson

from benchwarmers.redaction import scrub_text
from benchwarmers.upstream.ratelimits import retry_after_seconds

MAX_MESSAGE_CHARS = 500
# Error bodies are small; anything bigger is not worth parsing as JSON.
_MAX_JSON_BODY = 1_000_000
# Scrub a bounded prefix: the message is cut to 500 characters afterwards anyway.
_MAX_SCRUB_CHARS = 20_000

_WHITESPACE = re.compile(r"\s+")
_HTML_TITLE = re.compile(r"<title[^>]*>(.*?)</title>", re.IGNORECASE | re.DOTALL)
_HTML_DROP = re.compile(r"<(script|style)\b.*?</\1\s*>", re.IGNORECASE | re.DOTALL)
_HTML_TAG = re.compile(r"<[^>]+>")
# Patterns providers use to say the prompt does not fit; the number is the window.
_CONTEXT_LIMIT = (
    re.compile(r"maximum context length is (\d[\d,]*)", re.IGNORECASE),
    re.compile(r"context (?:window|length|size) (?:is|of) (\d[\d,]*)", re.IGNORECASE),
    re.compile(r"(\d[\d,]*) maximum context length", re.IGNORECASE),
    re.compile(r"prompt is too long: \d[\d,]* tokens > (\d[\d,]*)", re.IGNORECASE),
    re.compile(r"available context size \((\d[\d,]*) tokens\)", re.IGNORECASE),  # llama.cpp's server
)
_CONTEXT_PHRASES = re.compile(
    r"reduce the length|context[_ ]length[_ ]exceeded|exceeds? (?:the )?(?:model's )?context"
    r"|prompt is too long|context window exceeded|exceeds the available context size",
    re.IGNORECASE,
)
_RATE_LIMIT_CODES = {"rate_limit_exceeded", "resource_exhausted", "insufficient_quota", "too_many_requests"}
# A 400 that is about the key, not the request (Gemini: INVALID_ARGUMENT "API key not valid").
_BAD_KEY = re.compile(r"api[_ ]key[_ ](?:not[_ ]valid|invalid)|invalid[_ ]api[_ ]key|incorrect api key", re.IGNORECASE)
# A 4xx that says the model is not there (Mistral's "Invalid model", OpenRouter's "not a valid model
# ID"): the roster's problem, whatever the request said.
_NO_MODEL = re.compile(
    r"invalid model|not a valid model|model[_ ]not[_ ]found|unknown model|model \S+ (?:does not exist|not found)",
    re.IGNORECASE,
)
# A server's request validation quoted in its error: pydantic's `loc` starting at the body, as
# llama.cpp's server sends it with a 500 (`'loc': ('body', 'response_format', 'type')`) and FastAPI
# servers with a 422 (`"loc": ["body", "top_p"]`).
_REQUEST_VALIDATION = re.compile(r"validation error", re.IGNORECASE)
_REQUEST_LOC = re.compile(r"\bloc['\"]?\s*:\s*[\[(]\s*['\"]body['\"]", re.IGNORECASE)


class FailureKind(StrEnum):
    rate_limited = "rate_limited"
    context_too_long = "context_too_long"
    auth = "auth"
    not_found = "not_found"
    bad_request = "bad_request"
    upstream_error = "upstream_error"
    timeout = "timeout"
    connection = "connection"


_LABELS = {
    FailureKind.rate_limited: "rate limited",
    FailureKind.context_too_long: "context too long",
    FailureKind.auth: "auth failed",
    FailureKind.not_found: "not found",
    FailureKind.bad_request: "bad request",
    FailureKind.upstream_error: "upstream error",
    FailureKind.timeout: "timeout",
    FailureKind.connection: "connection failed",
}


def clean_message(text: str, secrets: Iterable[str] = ()) -> str:
    """One scrubbed line of at most 500 characters."""
    text = scrub_text(text[:_MAX_SCRUB_CHARS], secrets)
    text = _WHITESPACE.sub(" ", text).strip()
    if len(text) > MAX_MESSAGE_CHARS:
        text = text[: MAX_MESSAGE_CHARS - 1] + "…"
    return text


class UpstreamFailure(Exception):
    """A failed upstream call. `message` is already scrubbed and safe to store or show."""

    def __init__(
        self,
        kind: FailureKind,
        message: str,
        *,
        status: int | None = None,
        retry_after: float | None = None,
        context_limit: int | None = None,
        headers: Mapping[str, str] | None = None,
        secrets: Iterable[str] = (),
    ) -> None:
        self.kind = kind
        self.status = status
        self.message = clean_message(message, secrets)
        self.retry_after = retry_after
        self.context_limit = context_limit
        self.headers = {name.lower(): value for name, value in (headers or {}).items()}
        super().__init__(self.message)

    def __str__(self) -> str:
        if self.kind is FailureKind.timeout:
            return self.message
        label = _LABELS[self.kind]
        head = f"{label} ({self.status})" if self.status is not None else label
        if self.retry_after is None:
            return f"{head}: {self.message}" if self.message else head
        text = f"{head}: {self.message.rstrip('.')}" if self.message else head
        text += f"; retry in {math.ceil(self.retry_after)}s"
        return text

    def __repr__(self) -> str:
        return f"UpstreamFailure({self.kind.value!r}, {self.message!r}, status={self.status!r})"


def _text_of(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        # FastAPI-style validation details: [{"msg": ...}, ...]
        return "; ".join(
            str(item.get("msg") or item.get("message") or item) if isinstance(item, dict) else str(item)
            for item in value
        )
    if value is None:
        return ""
    return orjson.dumps(value).decode()


def _parse_error(body: bytes | str) -> tuple[str, str | None, str | None, int | None]:
    """(message, code, status word, numeric code) from any error body a provider sends."""
    raw = body.encode() if isinstance(body, str) else body
    data: Any = None
    if raw and len(raw) <= _MAX_JSON_BODY and raw.lstrip()[:1] in (b"{", b"["):
        try:
            data = orjson.loads(raw)
        except orjson.JSONDecodeError:
            data = None
    if isinstance(data, list):
        # Gemini's OpenAI-compatible endpoint: [{"error": {...}}]
        data = next((item for item in data if isinstance(item, dict)), None)
    if isinstance(data, dict):
        error = data.get("error")
        if isinstance(error, dict):
            code = error.get("code")
            number = code if isinstance(code, int) and not isinstance(code, bool) else None
            word = str(code) if isinstance(code, str) else None
            status_word = error.get("status") if isinstance(error.get("status"), str) else None
            text = _text_of(error.get("message") or error.get("msg") or error.get("detail") or "")
            return text or word or "", word, status_word, number
        if error:
            return _text_of(error), None, None, None
        for key in ("message", "detail", "msg"):
            if data.get(key):
                return _text_of(data[key]), None, None, None
        return "", None, None, None
    text = raw.decode("utf-8", errors="replace")[:_MAX_SCRUB_CHARS]
    if "<" in text and ">" in text:
        title = _HTML_TITLE.search(text)
        text = title.group(1) if title else _HTML_TAG.sub(" ", _HTML_DROP.sub(" ", text))
    return _WHITESPACE.sub(" ", text).strip(), None, None, None


def error_message_from_body(body: bytes | str) -> str:
    """The human message inside an error body (JSON object, Gemini array, text or HTML)."""
    return _parse_error(body)[0]


def context_limit_in(message: str) -> int | None:
    """The context window a text states ("maximum context length is N"), if it states one."""
    for pattern in _CONTEXT_LIMIT:
        match = pattern.search(message)
        if match:
            return int(match.group(1).replace(",", ""))
    return None


def _n_ctx_in(body: bytes) -> int | None:
    """llama.cpp's server states its window beside the message: `{"error": {..., "n_ctx": 2048}}`."""
    if b'"n_ctx"' not in body or len(body) > _MAX_JSON_BODY:
        return None
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError:
        return None
    error = data.get("error") if isinstance(data, dict) else None
    value = error.get("n_ctx") if isinstance(error, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _status_phrase(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return f"HTTP {status}"


def _kind_for_status(status: int) -> FailureKind:
    if status == 429:
        return FailureKind.rate_limited
    if status in (401, 403):
        return FailureKind.auth
    if status == 404:
        return FailureKind.not_found
    if 400 <= status < 500:
        return FailureKind.bad_request
    return FailureKind.upstream_error


def classify_response(
    status: int, headers: Mapping[str, str], body: bytes, secrets: Iterable[str] = ()
) -> UpstreamFailure:
    """Turn a failed upstream response (or a 200 carrying an error object) into a failure."""
    lowered = {name.lower(): value for name, value in headers.items()}
    message, code, status_word, number = _parse_error(body)
    # A 200 carrying {"error": {"code": 429}} (OpenRouter) means what the code says.
    effective = number if status < 400 and number is not None and 400 <= number <= 599 else status
    code_lower = (code or "").lower()
    if not message:
        message = _status_phrase(effective)

    limit = context_limit_in(message) or _n_ctx_in(body)
    if limit is not None or code_lower == "context_length_exceeded" or _CONTEXT_PHRASES.search(message):
        kind = FailureKind.context_too_long
    elif (status_word or "").upper() == "RESOURCE_EXHAUSTED" or code_lower in _RATE_LIMIT_CODES:
        kind = FailureKind.rate_limited
    elif effective == 400 and (_BAD_KEY.search(message) or code_lower == "invalid_api_key"):
        kind = FailureKind.auth
    else:
        kind = _kind_for_status(effective)
    retry_after = retry_after_seconds(lowered, time.time(), include_resets=kind is FailureKind.rate_limited)
    return UpstreamFailure(
        kind,
        message,
        status=effective,
        retry_after=retry_after,
        context_limit=limit,
        headers=lowered,
        secrets=secrets,
    )


def caused_by_request(failure: UpstreamFailure) -> bool:
    """Whether the request, not the model or its provider, made the call fail: such a failure says
    nothing of the model and never counts toward retiring it (bench/panels/learning.py).

    The request's doing: a prompt larger than the window; any other 4xx refusal (400, 413, 422: an
    unsupported parameter, a field the server's validation rejects), save those about the key or a
    model that is not there; and a 5xx whose message is the server's validation of the request
    (llama.cpp's server answers a `json_schema` response format with a 500 quoting pydantic's
    `'loc': ('body', 'response_format', 'type')`). The model's or provider's: rate limits, auth,
    a model not found, timeouts, dropped connections and every other 5xx.
    """
    if failure.kind is FailureKind.context_too_long:
        return True
    if failure.kind is FailureKind.bad_request:
        return not _NO_MODEL.search(failure.message)
    if failure.kind is FailureKind.upstream_error and failure.status is not None and failure.status >= 500:
        return bool(_REQUEST_VALIDATION.search(failure.message) and _REQUEST_LOC.search(failure.message))
    return False


def timeout_failure(seconds: float, detail: str = "") -> UpstreamFailure:
    message = f"timeout after {seconds:g}s" + (f" ({detail})" if detail else "")
    return UpstreamFailure(FailureKind.timeout, message)


def connection_failure(exc: BaseException, secrets: Iterable[str] = ()) -> UpstreamFailure:
    detail = str(exc).strip() or type(exc).__name__
    return UpstreamFailure(FailureKind.connection, detail, secrets=secrets)


# Class names (anywhere in an exception's MRO) of the provider SDKs' timeouts and dropped connections:
# openai and anthropic (`APITimeoutError`, `APIConnectionError`), httpx (`TimeoutException`, `ConnectError`).
_TIMEOUT_CLASSES = frozenset({"TimeoutError", "TimeoutException", "APITimeoutError"})
_CONNECTION_CLASSES = frozenset({"ConnectionError", "ConnectError", "APIConnectionError", "NetworkError"})
_RATE_LIMIT_PHRASES = re.compile(r"rate[ _-]?limit|too many requests|resource[_ ]exhausted|quota", re.IGNORECASE)


def _status_of(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and 100 <= value <= 599 else None


def _headers_of(headers: Any) -> dict[str, str]:
    items = getattr(headers, "items", None)
    return {str(name).lower(): str(value) for name, value in items()} if callable(items) else {}


def failure_from_exception(exc: BaseException, secrets: Iterable[str] = ()) -> UpstreamFailure:
    """An exception from a provider's SDK or a model plugin, as a failure of the same kinds.

    An HTTP error is read by its shape, whichever SDK raised it: a `status_code`, and a `response`
    with `status_code`, `headers` and `content` (openai, anthropic, ollama, httpx), classified like
    any response, Retry-After included. Timeouts and dropped connections are told by class name;
    anything else (a plugin's `ModelError`) by what its message says, else `upstream_error`.
    """
    message = str(exc).strip() or type(exc).__name__
    response = getattr(exc, "response", None)
    status = _status_of(getattr(exc, "status_code", None)) or _status_of(getattr(response, "status_code", None))
    if status is not None:
        content = getattr(response, "content", None)
        body = content if isinstance(content, bytes) and content.strip() else message.encode()
        return classify_response(status, _headers_of(getattr(response, "headers", None)), body, secrets)
    names = {cls.__name__ for cls in type(exc).__mro__}
    if names & _TIMEOUT_CLASSES:
        return UpstreamFailure(FailureKind.timeout, f"timeout: {message}", secrets=secrets)
    if names & _CONNECTION_CLASSES or isinstance(exc, OSError):
        return connection_failure(exc, secrets)
    limit = context_limit_in(message)
    if limit is not None or _CONTEXT_PHRASES.search(message):
        return UpstreamFailure(FailureKind.context_too_long, message, context_limit=limit, secrets=secrets)
    if _RATE_LIMIT_PHRASES.search(message):
        return UpstreamFailure(FailureKind.rate_limited, message, secrets=secrets)
    return UpstreamFailure(FailureKind.upstream_error, message, secrets=secrets)
