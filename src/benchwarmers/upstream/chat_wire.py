"""Chat completions as sent and read: the endpoint a seat is sent to, the caller's request stamped
with each seat's model, the reply read back as a chat result (bounded by the answer cap). What every
seat client shares; the pool that sends them is upstream/client.py.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson

from benchwarmers.upstream.failures import FailureKind, UpstreamFailure, classify_response, error_message_from_body
from benchwarmers.upstream.truncation import cap_text, salvage

_DROPPED_FIELDS = frozenset({"model", "stream", "stream_options", "bench"})


@dataclass(frozen=True)
class EndpointRef:
    name: str
    base_url: str
    api_key: str | None
    kind: str = "openai"


class ChatBody:
    """The caller's request, serialised once per panel and stamped with each seat's model.

    The messages (possibly megabytes of images) are encoded once and shared by every seat:
    `parts_for` returns the body as pieces that reference them, never a copy per seat.
    """

    __slots__ = ("_fields", "_head", "_messages")

    def __init__(self, fields: dict[str, Any], messages: Any) -> None:
        self._fields = fields
        self._messages = b"" if messages is None else orjson.dumps(messages)
        self._head = self._encode_fields(fields)

    @classmethod
    def from_request(cls, body: Mapping[str, Any]) -> ChatBody:
        """Keep every field except `model`, `stream`, `stream_options` and `bench`."""
        fields = {key: value for key, value in body.items() if key not in _DROPPED_FIELDS}
        messages = fields.pop("messages", None)
        return cls(fields, messages)

    @staticmethod
    def _encode_fields(fields: Mapping[str, Any]) -> bytes:
        # Everything between `"stream":false` and the messages.
        rest = orjson.dumps(dict(fields))[1:-1]
        return b"," + rest if rest else b""

    def parts_for(self, model_id: str, overrides: Mapping[str, Any] | None = None) -> tuple[bytes, ...]:
        """The JSON body for one seat as pieces: `model` first, `stream: false`, the shared messages.

        `overrides` replace top-level fields for this seat only (a value of None removes one).
        """
        head = self._head
        if overrides:
            merged = {**self._fields, **overrides}
            head = self._encode_fields({key: value for key, value in merged.items() if value is not None})
        start = b'{"model":' + orjson.dumps(model_id) + b',"stream":false' + head
        if not self._messages:
            return (start + b"}",)
        return (start + b',"messages":', self._messages, b"}")

    def for_model(self, model_id: str, overrides: Mapping[str, Any] | None = None) -> bytes:
        """The same body as one `bytes` (a copy: seats use `parts_for`)."""
        return b"".join(self.parts_for(model_id, overrides))


@dataclass
class ChatResult:
    answer: str
    usage: dict[str, Any] | None
    status: int
    headers: dict[str, str]
    seconds: float
    model: str | None
    tool_calls: list[dict[str, Any]] = field(default_factory=list)  # chat-completion shape
    finish_reason: str | None = None
    truncated_at: int | None = None  # the answer was cut to its first this many bytes (the answer cap)


@dataclass
class Reply:
    status: int
    headers: dict[str, str]
    body: bytes
    seconds: float
    cut: bool = False  # the body is only its first bytes: the read stopped at its limit


def bounded(result: ChatResult, cap: int | None, cut: bool = False) -> ChatResult:
    """The result with its answer at most `cap` bytes. A `cut` reply (read only in part) keeps no tool
    calls or usage: what the salvage closed of them is not what the model sent."""
    if cap is not None:
        result.answer, result.truncated_at = cap_text(result.answer, cap)
    if cut:
        result.tool_calls, result.usage = [], None
        if result.truncated_at is None:
            result.truncated_at = len(result.answer.encode("utf-8", "surrogatepass"))
    if result.truncated_at is not None:
        result.finish_reason = "length"
    return result


def key_secrets(endpoint: EndpointRef) -> tuple[str, ...]:
    return (endpoint.api_key,) if endpoint.api_key else ()


def _text_answer(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(part["text"] for part in content if isinstance(part, dict) and isinstance(part.get("text"), str))
    return str(content)


def not_json(reply: Reply, secrets: tuple[str, ...]) -> UpstreamFailure:
    snippet = error_message_from_body(reply.body[:2000])
    return UpstreamFailure(
        FailureKind.upstream_error,
        f"response is not JSON: {snippet}" if snippet else "empty response",
        status=reply.status,
        headers=reply.headers,
        secrets=secrets,
    )


def parsed(reply: Reply, secrets: tuple[str, ...]) -> Any:
    """The reply's JSON; of a cut reply, what its first bytes hold (upstream/truncation.py)."""
    if reply.cut:
        data = salvage(reply.body)
        if data is None:
            raise not_json(reply, secrets)
        return data
    try:
        return orjson.loads(reply.body)
    except orjson.JSONDecodeError:
        raise not_json(reply, secrets) from None


def chat_result(reply: Reply, secrets: tuple[str, ...]) -> ChatResult:
    data = parsed(reply, secrets)
    if isinstance(data, list) or (isinstance(data, dict) and data.get("error")):
        raise classify_response(reply.status, reply.headers, reply.body, secrets)
    choices = data.get("choices") if isinstance(data, dict) else None
    choice = choices[0] if isinstance(choices, list) and choices else None
    if not isinstance(choice, dict):
        raise UpstreamFailure(
            FailureKind.upstream_error,
            "response is not a chat completion (no choices)",
            status=reply.status,
            headers=reply.headers,
        )
    if choice.get("error"):
        # OpenRouter reports a provider failure inside the choice.
        raise classify_response(reply.status, reply.headers, orjson.dumps({"error": choice["error"]}), secrets)
    message = choice.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    usage = data.get("usage")
    model = data.get("model")
    finish = choice.get("finish_reason")
    return ChatResult(
        answer=_text_answer(content),
        usage=usage if isinstance(usage, dict) else None,
        status=reply.status,
        headers=reply.headers,
        seconds=reply.seconds,
        model=model if isinstance(model, str) else None,
        tool_calls=tool_calls_of(message),
        finish_reason=finish if isinstance(finish, str) else None,
    )


def tool_calls_of(message: Any) -> list[dict[str, Any]]:
    """A chat message's function calls as `{id, type, function: {name, arguments}}`, arguments a string
    (some providers send them as an object); anything else in the list is left out."""
    raw = message.get("tool_calls") if isinstance(message, dict) else None
    found: list[dict[str, Any]] = []
    for index, call in enumerate(raw if isinstance(raw, list) else ()):
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(function, dict) or not isinstance(function.get("name"), str):
            continue
        arguments = function.get("arguments")
        if not isinstance(arguments, str):
            arguments = orjson.dumps(arguments if arguments is not None else {}).decode()
        call_id = call.get("id")
        found.append(
            {
                "id": call_id if isinstance(call_id, str) and call_id else f"call_{index}",
                "type": "function",
                "function": {"name": function["name"], "arguments": arguments},
            }
        )
    return found
