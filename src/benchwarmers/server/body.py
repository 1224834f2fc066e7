"""Reading a request body within the cap, whether it comes with Content-Length or chunked."""

from __future__ import annotations

from typing import Any

import orjson
from starlette.requests import Request

from benchwarmers.errors import InvalidRequest, TooLarge

BODY_CAP = 20 * 1024 * 1024

TOO_LARGE = (
    "the request body is larger than 20 MB. Send images as https:// URLs, or smaller images "
    "(models scale a photo to about 1,500-2,000 pixels on its long side anyway)."
)


async def read_body(request: Request, cap: int = BODY_CAP) -> bytearray:
    """The body in one buffer, growing as it arrives (a list of chunks joined at the end would
    hold a large image request twice)."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > cap:
        raise TooLarge(TOO_LARGE)
    body = bytearray()
    async for chunk in request.stream():
        if len(body) + len(chunk) > cap:
            raise TooLarge(TOO_LARGE)
        body += chunk
    return body


def parse_json_object(raw: bytes | bytearray) -> dict[str, Any]:
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise InvalidRequest(f"the body is not valid JSON ({exc.msg} at character {exc.pos})") from None
    if not isinstance(data, dict):
        raise InvalidRequest("the body must be a JSON object")
    return data
