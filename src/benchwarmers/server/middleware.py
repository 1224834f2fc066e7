"""Pure ASGI middleware (no BaseHTTPMiddleware: it buffers and hides client disconnects)."""

from __future__ import annotations

import secrets

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from benchwarmers.header_numbers import header_int
from benchwarmers.server import body_memory


class RequestIdMiddleware:
    """Every response carries `x-request-id`: the panel id on panels, else the id given to the
    request when it arrived (kept in the scope's state, so a 500 and its log line cite the same)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        request_id = f"req-{secrets.token_hex(8)}"
        scope.setdefault("state", {})["request_id"] = request_id

        async def send_with_id(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                if not any(name == b"x-request-id" for name, _ in headers):
                    headers.append((b"x-request-id", request_id.encode()))
                    message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, send_with_id)


DRAIN_LIMIT = 64_000_000  # bytes of an unread body read and dropped so that the client sees the reply


class UnreadBodyMiddleware:
    """A refusal sent before the request body was read (413 on Content-Length, 401, 404 ...) reaches
    clients that write the whole body before reading, such as urllib: the reply's bytes go out at
    once, then the rest of the body is read and dropped (up to DRAIN_LIMIT) before the reply ends.
    Closing instead would reset the connection under the client's feet, and it would see no reply.
    A body too large to drain, or chunked, gets `connection: close` so it is not read for ever.
    Once the request has ended, the memory its body held in the budget is given back."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope["headers"])
        declared = headers.get(b"content-length", b"0")
        chunked = b"chunked" in headers.get(b"transfer-encoding", b"").lower()
        size = header_int(declared) or 0  # the server has checked it is a number
        unread = chunked or size > 0
        received = 0
        drain = False

        async def counting_receive() -> Message:
            nonlocal unread, received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                unread = unread and message.get("more_body", False)
            else:
                unread = False
            return message

        async def draining_send(message: Message) -> None:
            nonlocal drain
            if message["type"] == "http.response.start" and unread:
                # A client that asked `Expect: 100-continue` sends no body after a final reply.
                waiting = headers.get(b"expect", b"").lower() == b"100-continue" and received == 0
                drain = not waiting and (chunked or size - received <= DRAIN_LIMIT)
                if chunked or not drain:
                    message = {**message, "headers": [*message.get("headers", []), (b"connection", b"close")]}
            elif message["type"] == "http.response.body" and drain and not message.get("more_body", False):
                await send({**message, "more_body": True})
                dropped = 0
                while unread and dropped <= DRAIN_LIMIT:
                    dropped += len((await counting_receive()).get("body", b""))
                message = {"type": "http.response.body", "body": b"", "more_body": False}
            await send(message)

        try:
            await self.app(scope, counting_receive, draining_send)
        finally:
            body_memory.release(scope)  # the reply is out: what the body held is given back


class RequestMetricsMiddleware:
    """Counts each HTTP request by its route's template (`/api/models/{alias}`, never the path itself:
    one series per route, not per model or panel id) and the status it was answered with."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        status = 500

        async def noting(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, noting)
        finally:
            bench = getattr(scope["app"].state, "bench", None)
            if bench is not None:
                route = scope.get("route")
                bench.metrics.request(getattr(route, "path", None) or "unmatched", status)
