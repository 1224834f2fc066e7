"""The one place where exceptions become HTTP responses, all in OpenAI's error shape."""

from __future__ import annotations

import logging

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import Response

from benchwarmers.errors import BenchError
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


def error_response(
    status: int,
    message: str,
    *,
    type_: str = "invalid_request_error",
    code: str | None = None,
    param: str | None = None,
    headers: dict[str, str] | None = None,
) -> Response:
    body = {"error": {"message": message, "type": type_, "param": param, "code": code}}
    return json_response(body, status, headers)


def install(app: FastAPI) -> None:
    @app.exception_handler(BenchError)
    async def bench_error(_request: Request, exc: BenchError) -> Response:
        headers = {**CHALLENGE, **exc.headers} if exc.status == 401 else exc.headers
        return error_response(exc.status, exc.message, type_=exc.type, code=exc.code, param=exc.param, headers=headers)

    @app.exception_handler(RequestValidationError)
    async def validation_error(request: Request, exc: RequestValidationError) -> Response:
        refused = parameter_refusal(request, exc)  # names the parameter and what it takes
        return error_response(400, refused.message, code=refused.code, param=refused.param)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> Response:
        type_, code = STATUS_TYPES.get(exc.status_code, ("invalid_request_error", None))
        message = str(exc.detail)
        if exc.status_code == 404:
            message = f"no route {request.method} {request.url.path}; see /v1/models, /v1/chat/completions"
        elif exc.status_code == 405:
            message = f"{request.method} is not allowed on {request.url.path}"
        return error_response(exc.status_code, message, type_=type_, code=code, headers=getattr(exc, "headers", None))

    @app.exception_handler(Exception)
    async def unexpected(request: Request, exc: Exception) -> Response:
        request_id = request.headers.get("x-request-id") or getattr(request.state, "request_id", "")
        log.error(
            "unhandled %s on %s %s (request %s)",
            type(exc).__name__,
            request.method,
            request.url.path,
            request_id,
        )
        return error_response(
            500,
            f"internal error ({type(exc).__name__}); the server log has request {request_id}",
            type_="server_error",
            code="internal_error",
        )
