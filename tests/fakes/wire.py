"""The fake provider's wire: HTTP/1.1 responses written by hand (so a test can cut one short, or
announce more than it sends), chunked bodies read, the error bodies providers send, and the builders
of whole replies for the `raw=` behaviour (framings, codings and heads the normal replies never use)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any

import orjson

REASONS = {status.value: status.phrase for status in HTTPStatus}


@dataclass
class Response:
    status: int
    body: bytes
    content_type: str = "application/json"


def error_body(message: str, kind: str, code: str | None, param: str | None = None) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": param, "code": code}}


def default_error(status: int, model: str, key: str) -> dict[str, Any]:
    if status == 400:
        return error_body("Invalid request.", "invalid_request_error", None)
    if status == 401:
        # OpenAI echoes the key it was given; the client must scrub it.
        return error_body(
            f"Incorrect API key provided: {key}. You can find your API key at "
            "https://platform.openai.com/account/api-keys.",
            "invalid_request_error",
            "invalid_api_key",
        )
    if status == 403:
        return error_body("Country, region, or territory not supported", "request_forbidden", "unsupported_country")
    if status == 404:
        return error_body(
            f"The model `{model}` does not exist or you do not have access to it.",
            "invalid_request_error",
            "model_not_found",
        )
    if status == 429:
        return error_body(
            f"Rate limit reached for {model} on requests per min (RPM): Limit 20, Used 20, Requested 1.",
            "requests",
            "rate_limit_exceeded",
        )
    if status == 500:
        return error_body(
            "The server had an error while processing your request. Sorry about that!", "server_error", None
        )
    if status == 503:
        return error_body("The server is overloaded or not ready yet.", "server_error", "overloaded")
    kind = "server_error" if status >= 500 else "invalid_request_error"
    return error_body(REASONS.get(status, f"HTTP {status}"), kind, None)


def encode(payload: Any) -> tuple[bytes, str]:
    if isinstance(payload, bytes | str):
        raw = payload.encode() if isinstance(payload, str) else payload
        looks_json = raw.lstrip()[:1] in (b"{", b"[")
        return raw, "application/json" if looks_json else "text/plain; charset=utf-8"
    return orjson.dumps(payload), "application/json"


async def send(
    writer: asyncio.StreamWriter,
    response: Response,
    headers: dict[str, str] | None = None,
    *,
    drop: bool = False,
) -> bool:
    """Write one response; with `drop`, announce the full length, send half, and hang up."""
    lines = [
        f"HTTP/1.1 {response.status} {REASONS.get(response.status, 'Unknown')}",
        f"content-type: {response.content_type}",
        f"content-length: {len(response.body)}",
    ]
    lines += [f"{name}: {value}" for name, value in (headers or {}).items()]
    head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
    body = response.body[: len(response.body) // 2] if drop else response.body
    writer.write(head + body)
    await writer.drain()
    return not drop


async def read_chunked(reader: asyncio.StreamReader) -> bytes:
    parts: list[bytes] = []
    while True:
        size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
        if size == 0:
            await reader.readuntil(b"\r\n")
            return b"".join(parts)
        parts.append(await reader.readexactly(size))
        await reader.readexactly(2)


# -- replies written by hand, for `raw=` behaviours ---------------------------------------------


def completion(answer: str) -> bytes:
    """A minimal chat completion answering `answer`."""
    message = {"role": "assistant", "content": answer}
    choice = {"index": 0, "message": message, "logprobs": None, "finish_reason": "stop"}
    return orjson.dumps({"id": "chatcmpl-1", "object": "chat.completion", "model": "m", "choices": [choice]})


def reply_head(*lines: str, status: str = "HTTP/1.1 200 OK") -> bytes:
    return ("\r\n".join((status, "content-type: application/json", *lines)) + "\r\n\r\n").encode("latin-1")


def sized(body: bytes, *lines: str) -> bytes:
    """A whole reply framed by Content-Length."""
    return reply_head(f"content-length: {len(body)}", *lines) + body


def chunked(body: bytes, sizes: Sequence[int]) -> bytes:
    """`body` as chunks of these sizes (the rest in one more), the last chunk, and a trailer."""
    out, start = b"", 0
    for size in [*sizes, len(body)]:
        piece = body[start : start + size]
        start += len(piece)
        if piece:
            out += b"%x;ext=1\r\n%s\r\n" % (len(piece), piece)
    return out + b"0\r\nx-trailer: done\r\n\r\n"


def pieces(data: bytes, size: int) -> tuple[bytes, ...]:
    """`data` cut every `size` bytes, each piece its own write."""
    return tuple(data[i : i + size] for i in range(0, len(data), size))


def bytewise(data: bytes) -> tuple[bytes, ...]:
    return pieces(data, 1)
