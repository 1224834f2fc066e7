"""CORS for browser apps on the origins the user allowed, on the gateway routes only.

The rules (GATEWAY.md "Who may call"): an allowed origin is echoed, never `*`, and credentials are
never allowed (the gateway key travels in a header, not a cookie); the preflight allows
`Authorization`, `Content-Type` and any other plain header names asked for (the OpenAI JS SDK
sends `X-Stainless-*`); other origins get no CORS headers; the dashboard, `/api` and `/login`
answer no preflight. A pure ASGI middleware: it neither buffers bodies nor hides disconnects.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import cast

from starlette.types import ASGIApp, Message, Receive, Scope, Send

GATEWAY_PREFIXES = ("/v1/", "/bench/")
ALLOW_METHODS = b"GET, POST"
BASE_HEADERS = ("authorization", "content-type")
# Headers an SDK reads from a reply: request id, and how long to wait after a 429.
EXPOSE_HEADERS = b"x-request-id, retry-after, retry-after-ms, x-should-retry"
MAX_AGE = b"600"
_PLAIN_NAME = re.compile(r"^[A-Za-z0-9_-]{1,100}$")
_PREFLIGHT_VARY = b"Origin, Access-Control-Request-Method, Access-Control-Request-Headers"


def is_gateway_path(path: str) -> bool:
    return path.startswith(GATEWAY_PREFIXES)


def allowed_headers(requested: str | None) -> str:
    """`Authorization`, `Content-Type` and every plain header name the preflight asked for."""
    names = list(BASE_HEADERS)
    for raw in (requested or "").split(","):
        name = raw.strip().lower()
        if name and _PLAIN_NAME.match(name) and name not in names:
            names.append(name)
    return ", ".join(names)


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", ()):
        if key == name:
            return cast(bytes, value).decode("latin-1")
    return None


def _with_vary(headers: list[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
    for i, (key, value) in enumerate(headers):
        if key.lower() == b"vary":
            if b"origin" not in value.lower():
                headers[i] = (key, value + b", Origin")
            return headers
    headers.append((b"vary", b"Origin"))
    return headers


class CorsMiddleware:
    def __init__(self, app: ASGIApp, origins: Iterable[str] = ()) -> None:
        self.app = app
        self.origins = frozenset(o.rstrip("/") for o in origins)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not self.origins or not is_gateway_path(scope["path"]):
            await self.app(scope, receive, send)
            return
        origin = _header(scope, b"origin")
        allowed = origin is not None and origin in self.origins
        if allowed and scope["method"] == "OPTIONS" and _header(scope, b"access-control-request-method"):
            await self._preflight(scope, send, origin or "")
            return

        async def send_with_cors(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = _with_vary(list(message.get("headers", [])))
                if allowed:
                    headers.append((b"access-control-allow-origin", (origin or "").encode("latin-1")))
                    headers.append((b"access-control-expose-headers", EXPOSE_HEADERS))
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, send_with_cors)

    async def _preflight(self, scope: Scope, send: Send, origin: str) -> None:
        asked = _header(scope, b"access-control-request-headers")
        headers = [
            (b"access-control-allow-origin", origin.encode("latin-1")),
            (b"access-control-allow-methods", ALLOW_METHODS),
            (b"access-control-allow-headers", allowed_headers(asked).encode()),
            (b"access-control-max-age", MAX_AGE),
            (b"vary", _PREFLIGHT_VARY),
            (b"content-length", b"0"),
        ]
        await send({"type": "http.response.start", "status": 204, "headers": headers})
        await send({"type": "http.response.body", "body": b""})
