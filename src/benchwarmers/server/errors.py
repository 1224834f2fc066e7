"""The one place where exceptions become HTTP responses: in OpenAI's error shape, and on Anthropic's
Messages routes (`/v1/messages...`, chosen by the path) in Anthropic's."""

from __future__ import annotations

import logging
import textwrap
import traceback

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.requests import ClientDisconnect
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from benchwarmers.errors import BenchError
from benchwarmers.server import rendering
from benchwarmers.server.listen import LATE_BODY
from benchwarmers.server.responses import json_response
from benchwarmers.server.validation import parameter_refusal

log = logging.getLogger("benchwarmers.server")

CHALLENGE = {"WWW-Authenticate": "Bearer"}  # every 401 says how to authenticate (RFC 6750)
STATUS_TYPES = {
    401: ("authentication_error", "invalid_api_key"),
    403: ("permission_error", "forbidden"),
    404: ("invalid_request_error", "not_found"),
    405: ("invalid_request_error", "method_not_allowed"),
    413: ("invalid_request_error", "request_too_large"),
    429: ("rate_limit_error", "rate_limit_exceeded"),
}
# Anthropic's error types by status (its SDKs pick their exception class by the status, and show the type).
ANTHROPIC_PATH = "/v1/messages"
ANTHROPIC_TYPES = {
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    503: "overloaded_error",
    529: "overloaded_error",
}


def anthropic_route(path: str) -> bool:
    return path == ANTHROPIC_PATH or path.startswith(ANTHROPIC_PATH + "/")


def anthropic_type(status: int) -> str:
    return ANTHROPIC_TYPES.get(status, "api_error" if status >= 500 else "invalid_request_error")


def error_response(
    status: int,
    message: str,
    *,
    type_: str = "invalid_request_error",
    code: str | None = None,
    param: str | None = None,
    headers: dict[str, str] | None = None,
    path: str = "",
) -> Response:
    """The error body of the route at `path`: Anthropic's `{"type": "error", "error": {type, message}}`
    on the Messages routes, else OpenAI's `{"error": {message, type, param, code}}`."""
    if anthropic_route(path):
        shaped = {"type": "error", "error": {"type": anthropic_type(status), "message": message}}
        return json_response(shaped, status, headers)
    body = {"error": {"message": message, "type": type_, "param": param, "code": code}}
    return json_response(body, status, headers)


def install(app: FastAPI) -> None:
    @app.exception_handler(BenchError)
    async def bench_error(request: Request, exc: BenchError) -> Response:
        if exc.status != 401 and _wants_page(request):
            return _error_page(request, exc.status, exc.message)
        headers = {**CHALLENGE, **exc.headers} if exc.status == 401 else exc.headers
        return error_response(
            exc.status,
            exc.message,
            type_=exc.type,
            code=exc.code,
            param=exc.param,
            headers=headers,
            path=request.url.path,
        )

    @app.exception_handler(RequestValidationError)
    async def validation_error(request: Request, exc: RequestValidationError) -> Response:
        refused = parameter_refusal(request, exc)  # names the parameter and what it takes
        if _wants_page(request):
            return _error_page(request, 400, refused.message)
        return error_response(400, refused.message, code=refused.code, param=refused.param, path=request.url.path)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> Response:
        type_, code = STATUS_TYPES.get(exc.status_code, ("invalid_request_error", None))
        message = str(exc.detail)
        if exc.status_code == 404 and _wants_page(request):
            return _error_page(request, 404, f"There is no page at {request.url.path}.")
        if exc.status_code == 404:
            message = f"no route {request.method} {request.url.path}; see /v1/models, /v1/chat/completions"
        elif exc.status_code == 405:
            message = f"{request.method} is not allowed on {request.url.path}"
        headers = getattr(exc, "headers", None)
        return error_response(exc.status_code, message, type_=type_, code=code, headers=headers, path=request.url.path)

    @app.exception_handler(ClientDisconnect)
    async def client_left(request: Request, _exc: ClientDisconnect) -> Response:
        # An aborted upload is the client's choice, not our error: one line, and a reply no one reads.
        # (A body past its deadline was answered 408 by the listener, which closed the connection.)
        late = request.scope.get("state", {}).get(LATE_BODY)
        log.info(
            "%s: %s %s (request %s)",
            "request body too slow, answered 408 and closed" if late else "client left while sending its request body",
            request.method,
            request.url.path,
            request_id_of(request.scope),
        )
        return error_response(
            400, "the client closed the connection before its request body arrived", path=request.url.path
        )

    # Only a failure outside our own middleware gets here (Starlette then re-raises it to uvicorn).
    @app.exception_handler(Exception)
    async def unexpected(request: Request, exc: Exception) -> Response:
        return internal_error(request.scope, exc)

    app.add_middleware(UnhandledErrors)  # added first: innermost, so CORS and the request id wrap its 500


def _wants_page(request: Request) -> bool:
    return rendering.wants_page(request)


def _error_page(request: Request, status: int, message: str) -> Response:
    return rendering.error_page(request, status, message)


def request_id_of(scope: Scope) -> str:
    return str(scope.get("state", {}).get("request_id", ""))


def internal_error(scope: Scope, exc: BaseException) -> Response:
    """Log one traceback without request content, and the 500 that cites it."""
    request_id = request_id_of(scope)
    log.error(
        "unhandled %s on %s %s (request %s)\n%s",
        type(exc).__name__,
        scope.get("method"),
        scope.get("path"),
        request_id,
        content_free_traceback(exc),
    )
    return error_response(
        500,
        f"internal error ({type(exc).__name__}) in the bench; the server log has its traceback under request "
        f"{request_id}: please report it",
        type_="server_error",
        code="internal_error",
        headers={"x-request-id": request_id},
        path=str(scope.get("path", "")),
    )


def content_free_traceback(exc: BaseException, _depth: int = 0) -> str:
    """Frames and exception types, never an exception's message or arguments: those can carry the
    request (a ValueError quoting a header, a database error with its statement's parameters)."""
    parts: list[str] = []
    earlier = exc.__cause__ if exc.__cause__ is not None else (None if exc.__suppress_context__ else exc.__context__)
    if earlier is not None and _depth < 5:
        parts += [content_free_traceback(earlier, _depth + 1), "\n\nwhich led to:\n\n"]
    parts += ["Traceback (most recent call last):\n", *traceback.format_tb(exc.__traceback__)]
    parts.append(f"{type(exc).__module__}.{type(exc).__qualname__} (message withheld: it may quote the request)\n")
    if isinstance(exc, BaseExceptionGroup) and _depth < 5:
        for inner in exc.exceptions[:5]:
            parts.append(textwrap.indent(content_free_traceback(inner, _depth + 1), "  | ") + "\n")
    return "".join(parts).rstrip("\n")


class UnhandledErrors:
    """An exception no handler took becomes our 500, and is not passed on: the server would log it
    again with its message. Once a reply has started, it can only be logged (the connection closes)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def tracking(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, receive, tracking)
        except Exception as exc:
            response = internal_error(scope, exc)
            if not started:
                await response(scope, receive, send)
