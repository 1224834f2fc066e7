"""A chat completion as server-sent events, the way OpenAI streams one."""

from __future__ import annotations

from typing import Any

import orjson

from benchwarmers.bench.panels.reply import ChatCompletion

PING = b": ping\n\n"  # an SSE comment: keeps proxies from closing a quiet stream while seats run


def _chunk(
    reply: ChatCompletion, delta: dict[str, Any], finish: str | None, extra: dict[str, Any] | None = None
) -> bytes:
    chunk: dict[str, Any] = {
        "id": reply["id"],
        "object": "chat.completion.chunk",
        "created": reply["created"],
        "model": reply["model"],
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}],
        "usage": None,
    }
    if extra:
        chunk.update(extra)
    return b"data: " + orjson.dumps(chunk) + b"\n\n"


def stream_chunks(reply: ChatCompletion, include_usage: bool) -> list[bytes]:
    """The whole reply as SSE: one content chunk carrying `bench`, a chunk per tool call (a picked
    seat's), the finish chunk, usage, [DONE]."""
    choice = reply["choices"][0]
    message = choice["message"]
    chunks = [_chunk(reply, {"role": "assistant", "content": message["content"]}, None, {"bench": reply["bench"]})]
    for index, call in enumerate(message.get("tool_calls") or ()):
        delta = {"tool_calls": [{"index": index, **call}]}
        chunks.append(_chunk(reply, delta, None))
    chunks.append(_chunk(reply, {}, choice["finish_reason"]))
    if include_usage:
        usage_chunk = {
            "id": reply["id"],
            "object": "chat.completion.chunk",
            "created": reply["created"],
            "model": reply["model"],
            "choices": [],
            "usage": reply["usage"],
        }
        chunks.append(b"data: " + orjson.dumps(usage_chunk) + b"\n\n")
    chunks.append(b"data: [DONE]\n\n")
    return chunks
