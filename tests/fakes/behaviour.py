"""How one scripted model of the fake provider behaves: its settings, and the failures real
providers send (error bodies in their several dialects, bodies cut short or trickled)."""

from __future__ import annotations

import asyncio
import math
import socket
import struct
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import orjson

from tests.fakes.wire import Response, default_error, encode, error_body


@dataclass
class Behaviour:
    """How one model answers. Any non-200 outcome can also be dropped mid-body with `drop`."""

    reply: str | None = None
    latency: float | tuple[float, float] = 0.0
    empty: bool = False
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: str | bytes | dict[str, Any] | list[Any] | None = None
    context_limit: int | None = None
    # A local server's window: prompts of more tokens (characters / 4) are refused as llama.cpp's
    # server refuses them (`window_error="llama.cpp"`) or as llama-cpp-python's does ("llama-cpp-python").
    window: int | None = None
    window_error: str = "llama.cpp"
    quote_input: bool = False  # a 400 whose message quotes the caller's last message, as some providers do
    gemini_error: bool = False
    plain_error: str | None = None
    drop: bool = False
    hang: bool = False
    usage: dict[str, Any] | None = None
    slow_stream: float = 0.0
    # A careless provider: the answer (or, with an error status, the error message) quotes the bearer
    # key and the messages it was sent.
    echo: bool = False
    content_type: str | None = None  # overrides the guessed content type of `body`
    truncated_chunks: bool = False  # a chunked 200 that hangs up in the middle of its first chunk
    trickle: float = 0.0  # a chunked 200 that sends one byte every `trickle` seconds, for `trickle_for` seconds
    trickle_for: float = 60.0
    # Answers text, but refuses a request carrying an image with a 400, as text-only models do.
    blind: bool = False
    # Answers what this function makes of the request body (the suite's scripted reviewers).
    respond: Callable[[dict[str, Any]], str] | None = None
    # A tool-calling model: offered tools, it calls one (tool_choice's, else the first) with these
    # arguments; `tool_name` makes it claim another tool's name (a call the request did not offer).
    tool_call: dict[str, Any] | None = None
    tool_name: str | None = None
    # The reply written by hand, as these pieces in turn (each its own write, flushed before the next):
    # framings, codings and heads the normal replies never use. `()` reads the request and hangs up
    # without a byte. After the pieces, `after` says what the connection does: "close" it, "keep" it
    # for the next request, "hang" with it open, or "reset" it (a TCP reset, as a crashing server's).
    raw: tuple[bytes, ...] | None = None
    after: str = "close"
    # A model that will not stop: a 200 whose answer is this many bytes of HUGE_LINE (`huge_text`),
    # written in pieces with a content-length, or chunked with `huge_chunked`.
    huge: int = 0
    huge_chunked: bool = False


def text_chars(request: Any) -> int:
    messages = request.get("messages") if isinstance(request, dict) else None
    chars = 0
    for message in messages if isinstance(messages, list) else ():
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, str):
            chars += len(content)
        elif isinstance(content, list):
            chars += sum(len(p.get("text") or "") for p in content if isinstance(p, dict))
    return chars


def tokens(chars: int) -> int:
    return math.ceil(chars / 4)


def echoed(token: str, request: Any) -> str:
    """What an `echo` model says: the key it was sent and the messages, as JSON."""
    messages = request.get("messages") if isinstance(request, dict) else None
    return f"key={token} messages={orjson.dumps(messages).decode()}"


def has_image(data: dict[str, Any]) -> bool:
    messages = data.get("messages")
    return any(
        isinstance(part, dict) and part.get("type") == "image_url"
        for message in (messages if isinstance(messages, list) else ())
        if isinstance(message, dict) and isinstance(message.get("content"), list)
        for part in message["content"]
    )


def failure(behaviour: Behaviour, model: str, token: str, data: dict[str, Any]) -> Response | None:
    """The scripted error response, or None when the model answers normally."""
    if behaviour.blind and has_image(data):
        error = error_body(f"{model} does not support image input.", "invalid_request_error", None, "messages")
        return Response(400, orjson.dumps(error))
    if behaviour.body is not None:
        raw, content_type = encode(behaviour.body)
        return Response(behaviour.status, raw, behaviour.content_type or content_type)
    if behaviour.plain_error is not None:
        status = behaviour.status if behaviour.status != 200 else 502
        return Response(status, behaviour.plain_error.encode(), "text/plain; charset=utf-8")
    if behaviour.gemini_error:
        status = behaviour.status if behaviour.status != 200 else 429
        error = {
            "code": status,
            "message": "Resource has been exhausted (e.g. check quota).",
            "status": "RESOURCE_EXHAUSTED",
        }
        return Response(status, orjson.dumps([{"error": error}]))
    if behaviour.quote_input:
        messages = data.get("messages") or [{}]
        quoted = str(messages[-1].get("content", ""))[:500]
        error = error_body(f"Invalid prompt, could not process: {quoted}", "invalid_request_error", None)
        return Response(400, orjson.dumps(error))
    if behaviour.context_limit is not None:
        limit = behaviour.context_limit
        used = max(limit + 1, tokens(text_chars(data)))
        message = (
            f"This model's maximum context length is {limit} tokens. However, your messages resulted in "
            f"{used} tokens. Please reduce the length of the messages."
        )
        error = error_body(message, "invalid_request_error", "context_length_exceeded", "messages")
        return Response(400, orjson.dumps(error))
    if behaviour.window is not None and tokens(text_chars(data)) > behaviour.window:
        return window_refusal(behaviour, data)
    if behaviour.status != 200 and behaviour.echo:
        error = error_body(echoed(token, data), "invalid_request_error", None)
        return Response(behaviour.status, orjson.dumps(error))
    if behaviour.status != 200:
        return Response(behaviour.status, orjson.dumps(default_error(behaviour.status, model, token)))
    return None


def window_refusal(behaviour: Behaviour, data: dict[str, Any]) -> Response:
    """A prompt longer than a local server's window, refused in that server's own words."""
    window, used = behaviour.window or 0, tokens(text_chars(data))
    if behaviour.window_error == "llama-cpp-python":
        # llama_cpp/server/errors.py (0.3.x): its context_length_exceeded formatter, OpenAI's dialect.
        asked = data.get("max_tokens") or 0
        message = (
            f"This model's maximum context length is {window} tokens. However, you requested {used + asked} "
            f"tokens ({used} in the messages, {asked} in the completion). Please reduce the length of the "
            "messages or completion."
        )
        return Response(
            400, orjson.dumps(error_body(message, "invalid_request_error", "context_length_exceeded", "messages"))
        )
    # llama.cpp's server (tools/server), newer builds: the window beside the message, not in it.
    error = {
        "code": 400,
        "message": "the request exceeds the available context size, try increasing it",
        "type": "exceed_context_size_error",
        "n_prompt_tokens": used,
        "n_ctx": window,
    }
    return Response(400, orjson.dumps({"error": error}))


async def hostile_chunks(behaviour: Behaviour, headers: dict[str, str], writer: asyncio.StreamWriter) -> bool:
    """A 200 whose chunked body never completes: cut mid-chunk, or trickled a byte at a time.

    The trickle stops by itself after `trickle_for` seconds (or when the client hangs up)."""
    head = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n"
    head += "".join(f"{name}: {value}\r\n" for name, value in headers.items())
    writer.write(head.encode("latin-1") + b"\r\n")
    if behaviour.truncated_chunks:
        piece = b'{"id": "chatcmpl-cut", "choices": [{"message": {"content": "half an ans'
        writer.write(b"%x\r\n%s" % (len(piece) + 40, piece))  # announces 40 bytes more than it sends
        await writer.drain()
        return False
    deadline = time.monotonic() + behaviour.trickle_for
    while time.monotonic() < deadline:
        writer.write(b"1\r\n \r\n")
        await writer.drain()
        await asyncio.sleep(behaviour.trickle)
    return False


async def by_hand(behaviour: Behaviour, writer: asyncio.StreamWriter) -> bool:
    """Write `behaviour.raw` piece by piece, then keep, close or hold the connection as `after` says."""
    for piece in behaviour.raw or ():
        writer.write(piece)
        await writer.drain()
    if behaviour.after == "hang":
        await asyncio.Event().wait()
    if behaviour.after == "reset":
        # A crash, not a close: SO_LINGER 0 makes the close a TCP reset.
        writer.get_extra_info("socket").setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        writer.transport.abort()
    return behaviour.after == "keep"


HUGE_LINE = "All work and no play makes a very long answer.\n"
_HUGE_BLOCK = 1024  # lines a write: about 48 KB


def huge_text(size: int) -> str:
    """The first `size` bytes of a `huge` model's answer (ASCII: a byte is a character)."""
    return (HUGE_LINE * (size // len(HUGE_LINE) + 1))[:size]


async def huge_answer(
    behaviour: Behaviour, model: str, headers: dict[str, str], writer: asyncio.StreamWriter, face: str = "chat"
) -> bool:
    """A 200 carrying a `behaviour.huge`-byte answer (a chat completion, a Response or, `face` being
    "anthropic", a Message), written a block at a time from one shared block: the fake never holds the
    answer, let alone twice. A client that stops reading and hangs up ends it (the write fails and the
    connection closes)."""
    size = behaviour.huge
    lines, rest = divmod(size, len(HUGE_LINE))
    line = orjson.dumps(HUGE_LINE)[1:-1]  # as JSON writes it inside a string: the newline escaped
    usage = {"prompt_tokens": 10, "completion_tokens": size // 4, "total_tokens": 10 + size // 4}
    if face == "anthropic":
        head = b'{"id":"msg_huge","type":"message","role":"assistant","model":' + orjson.dumps(model)
        head += b',"content":[{"type":"text","text":"'
        usage = {"input_tokens": 10, "output_tokens": size // 4}
        end = b'"}],"stop_reason":"end_turn","stop_sequence":null,"usage":' + orjson.dumps(usage) + b"}"
    elif face == "responses":
        head = b'{"id":"resp_huge","object":"response","status":"completed","model":' + orjson.dumps(model)
        head += b',"output":[{"type":"message","role":"assistant","content":[{"type":"output_text","text":"'
        usage = {"input_tokens": 10, "output_tokens": size // 4}
        end = b'"}]}],"usage":' + orjson.dumps(usage) + b"}"
    else:
        head = b'{"id":"chatcmpl-huge","object":"chat.completion","created":0,"model":' + orjson.dumps(model)
        head += b',"choices":[{"index":0,"message":{"role":"assistant","content":"'
        end = b'"},"logprobs":null,"finish_reason":"stop"}],"usage":' + orjson.dumps(usage) + b"}"
    blocks, left = divmod(lines, _HUGE_BLOCK)
    block = line * _HUGE_BLOCK
    last = line * left + orjson.dumps(HUGE_LINE[:rest])[1:-1] + end
    response = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
    if behaviour.huge_chunked:
        response += "transfer-encoding: chunked\r\n"
    else:
        response += f"content-length: {len(head) + blocks * len(block) + len(last)}\r\n"
    response += "".join(f"{name}: {value}\r\n" for name, value in headers.items())
    writer.write(response.encode("latin-1") + b"\r\n")
    for piece in (head, *(block for _ in range(blocks)), last):
        writer.write(b"%x\r\n%s\r\n" % (len(piece), piece) if behaviour.huge_chunked else piece)
        await writer.drain()
    if behaviour.huge_chunked:
        writer.write(b"0\r\n\r\n")
        await writer.drain()
    return True
