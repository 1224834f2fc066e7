"""Reading a request body within the cap, whether it comes with Content-Length or chunked."""

from __future__ import annotations

import asyncio
from typing import Any

import orjson
from starlette.requests import Request

from benchwarmers.bench.panels.prepare import request_hash
from benchwarmers.errors import InvalidRequest, TooLarge
from benchwarmers.header_numbers import header_int
from benchwarmers.server import body_memory

BODY_CAP = 20_000_000  # the chat route's: 20 MB, as the gateway's contract says
# Deeper JSON than this is refused: no OpenAI request needs it (a tool's JSON schema nests a few
# levels), and the seats' request is re-encoded by orjson, which stops at 255 levels.
MAX_DEPTH = 64

_IMAGES = (
    "Send images as https:// URLs, or smaller images "
    "(models scale a photo to about 1,500-2,000 pixels on its long side anyway)."
)


def _size(cap: int) -> str:
    for unit, name in ((1_000_000, "MB"), (1024 * 1024, "MiB"), (1000, "kB"), (1024, "KiB")):
        if cap >= unit and cap % unit == 0:
            return f"{cap // unit} {name}"
    return f"{cap:,} bytes"


def too_large(cap: int) -> str:
    """The 413 message for a route whose body cap is `cap` bytes."""
    if cap >= BODY_CAP:
        return f"the request body is larger than {_size(cap)}. {_IMAGES}"
    return f"the request body is larger than {_size(cap)}, this route's limit; send a smaller body."


TOO_LARGE = too_large(BODY_CAP)


async def read_body(request: Request, cap: int = BODY_CAP) -> bytearray:
    """The body in one buffer, growing as it arrives (a list of chunks joined at the end would
    hold a large image request twice), counted in the process's body memory budget
    (server/body_memory.py) until the request ends."""
    declared = header_int(request.headers.get("content-length"))  # unreadable: the stream's count decides
    if declared is not None and declared > cap:
        raise TooLarge(too_large(cap))
    held = body_memory.held_by(request.scope, request.app.state.body_budget)
    if declared is not None and declared > body_memory.SMALL:
        await held.take(declared)
    body = bytearray()
    async for chunk in request.stream():
        if len(body) + len(chunk) > cap:
            raise TooLarge(too_large(cap))
        body += chunk
        if len(body) > held.size and len(body) > body_memory.SMALL:  # chunked, or more than it declared
            await held.take(min(len(body) + body_memory.STEP, cap) - held.size)
    return body


async def read_panel_request(request: Request) -> tuple[dict[str, Any], str]:
    """A panel route's body, read within BODY_CAP: the object and the hash replays are found by.

    A large body is parsed in a turn of its own (one at a time, each after a pass of the event loop):
    parsing and hashing 19 MB holds the loop for some 50 ms, and bodies that finished arriving
    together would otherwise be parsed back to back, /healthz waiting behind all of them."""
    raw = await read_body(request)
    if len(raw) <= body_memory.SMALL:
        return parse_json_object(raw), request_hash(raw)
    async with request.app.state.body_budget.turn:
        await asyncio.sleep(0)  # what is waiting on the loop goes first
        return parse_json_object(raw), request_hash(raw)


def _deeper_than(value: Any, limit: int) -> bool:
    """Whether containers nest more than `limit` levels, walked level by level (no recursion)."""
    level = [value]
    for _ in range(limit):
        below: list[Any] = []
        for node in level:
            children = node.values() if type(node) is dict else node
            below += [child for child in children if type(child) is dict or type(child) is list]
        if not below:
            return False
        level = below
    return True


def parse_json_object(raw: bytes | bytearray) -> dict[str, Any]:
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        if exc.msg == "depth limit exceeded":  # orjson's own limit, 1024 levels
            raise _too_deep() from None
        raise InvalidRequest(f"the body is not valid JSON ({exc.msg} at character {exc.pos})") from None
    if not isinstance(data, dict):
        raise InvalidRequest("the body must be a JSON object")
    # Counting brackets is fast; only a body with enough of them to nest too deep is walked.
    if raw.count(b"[") + raw.count(b"{") > MAX_DEPTH and _deeper_than(data, MAX_DEPTH):
        raise _too_deep()
    return data


def _too_deep() -> InvalidRequest:
    return InvalidRequest(
        f"the body nests JSON more than {MAX_DEPTH} levels deep (objects and arrays inside each other); "
        f"send at most {MAX_DEPTH} levels"
    )
