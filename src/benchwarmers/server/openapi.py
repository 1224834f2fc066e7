"""`/openapi.json`: every route with its parameters, its body and the errors it really sends.

FastAPI documents typed parameters itself. On top of that, this builder:

- gives each route that reads a `JsonBody` its request body (the route reads the body itself,
  after the guard and within a cap, so FastAPI does not see it), and the chat route's body from
  its `openapi_extra`; the models go in `components.schemas`;
- replaces FastAPI's 422 `HTTPValidationError` (`{"detail": [...]}`, which this app never sends)
  with the one error body, `ErrorBody`, on a 400, and adds 404 for routes with a path parameter,
  413 for routes with a body and 500 everywhere;
- says who may call each route (`security`): a gateway key, or the admin token or session;
- gives the Messages routes (`/v1/messages...`) Anthropic's error body, `AnthropicErrorBody`, which
  is what server/errors.py sends there;
- documents what `/login` reads by hand (`?next=` and its form).
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi
from fastapi.routing import APIRoute, iter_route_contexts
from pydantic import BaseModel
from pydantic.json_schema import models_json_schema

from benchwarmers.server.deps import body_of, guard_of
from benchwarmers.server.errors import anthropic_route
from benchwarmers.server.schemas import DOCUMENTED_MODELS, ERROR_REF, error_responses

REF = "#/components/schemas/{model}"
DESCRIPTION = (
    "An OpenAI-compatible gateway that sends one prompt to a collection of models (see docs/GATEWAY.md). "
    'Every error has one shape, `ErrorBody`: `{"error": {"message", "type", "param", "code"}}`; on the '
    'Anthropic Messages routes, Anthropic\'s: `{"type": "error", "error": {"type", "message"}}`.'
)
ANTHROPIC_ERROR_REF = "#/components/schemas/AnthropicErrorBody"
SECURITY_SCHEMES = {
    "gatewayKey": {
        "type": "http",
        "scheme": "bearer",
        "bearerFormat": "bwk_...",
        "description": "A gateway key; needed when BENCHWARMERS_REQUIRE_KEYS or BENCHWARMERS_ADMIN_TOKEN is set.",
    },
    "adminToken": {
        "type": "http",
        "scheme": "bearer",
        "description": "The dashboard's token as a bearer, on /api only: BENCHWARMERS_ADMIN_TOKEN, or with "
        "BENCHWARMERS_REQUIRE_KEYS alone the one in BENCHWARMERS_HOME/dashboard-token; needed when either is set.",
    },
    "adminSession": {
        "type": "apiKey",
        "in": "cookie",
        "name": "bw_session",
        "description": "The session /login sets for the dashboard's token; needed when BENCHWARMERS_ADMIN_TOKEN "
        "or BENCHWARMERS_REQUIRE_KEYS is set.",
    },
}


def security(guard: str, path: str) -> list[dict[str, list[str]]]:
    """Who may call: `{}` among the requirements means none is needed, as installed on one machine."""
    if guard == "gateway":
        return [{"gatewayKey": []}, {}]
    if path.startswith("/api/"):
        return [{"adminToken": []}, {"adminSession": []}, {}]
    return [{"adminSession": []}, {}]


# What server/routes/login.py reads by hand (`?next=`, and the form within a cap), documented here.
_NEXT = {"type": "string", "description": "A path on this server to go to after logging in."}
_TOKEN = {
    "type": "string",
    "description": "The dashboard's token, exchanged once for the session cookie (the URL `serve` and "
    "`benchwarmers dashboard-url` print).",
}
BY_HAND: dict[tuple[str, str], dict[str, Any]] = {
    ("/login", "get"): {
        "parameters": [
            {"name": "next", "in": "query", "required": False, "schema": _NEXT},
            {"name": "token", "in": "query", "required": False, "schema": _TOKEN},
        ],
        "responses": error_responses(429),
    },
    ("/login", "post"): {
        "requestBody": {
            "required": True,
            "content": {
                "application/x-www-form-urlencoded": {
                    "schema": {
                        "type": "object",
                        "required": ["token"],
                        "properties": {"token": _TOKEN, "next": _NEXT},
                    }
                }
            },
        },
        "responses": error_responses(403, 429),
    },
}


def install(app: FastAPI) -> None:
    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            app.openapi_schema = document(app)
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]


def _add_missing(operation: dict[str, Any], *statuses: int) -> None:
    responses = operation.setdefault("responses", {})
    for status, response in error_responses(*statuses).items():
        responses.setdefault(str(status), response)


def _json_body(model: type[BaseModel]) -> dict[str, Any]:
    schema = {"$ref": REF.format(model=model.__name__)}
    return {"required": True, "content": {"application/json": {"schema": schema}}}


def _anthropic_errors(operation: dict[str, Any]) -> None:
    # New response objects: FastAPI may share one between the routes of a router.
    for status, response in list(operation["responses"].items()):
        schema = response.get("content", {}).get("application/json", {}).get("schema", {})
        if status[0] in "45" and schema.get("$ref") == ERROR_REF:
            content = {"application/json": {"schema": {"$ref": ANTHROPIC_ERROR_REF}}}
            operation["responses"][status] = {**response, "content": content}


def document(app: FastAPI) -> dict[str, Any]:
    doc = get_openapi(title=app.title, version=app.version, description=DESCRIPTION, routes=app.routes)
    models: dict[str, type[BaseModel]] = {m.__name__: m for m in DOCUMENTED_MODELS}
    for route in iter_route_contexts(app.routes):  # included routers' routes, as they are served
        if not isinstance(route.original_route, APIRoute) or not route.include_in_schema:
            continue
        body, guard, path = body_of(route), guard_of(route), route.path_format or ""
        operations = doc["paths"].get(path, {})
        for method in sorted(m.lower() for m in route.methods or ()):
            operation = operations.get(method)
            if operation is None:
                continue
            operation["responses"].pop("422", None)
            if body is not None:
                models[body.model.__name__] = body.model
                operation["requestBody"] = _json_body(body.model)
            for part, value in BY_HAND.get((path, method), {}).items():
                if part == "responses":
                    operation["responses"].update({str(status): response for status, response in value.items()})
                else:
                    operation[part] = value
            if "requestBody" in operation:
                _add_missing(operation, 400, 413)
            parameters = operation.get("parameters", [])
            if any(p.get("in") in ("query", "path") for p in parameters):
                _add_missing(operation, 400)
            if any(p.get("in") == "path" for p in parameters):
                _add_missing(operation, 404)
            _add_missing(operation, 500)
            if guard is not None:
                operation["security"] = security(guard, path)
            if anthropic_route(path):
                _anthropic_errors(operation)
            operation["responses"] = dict(sorted(operation["responses"].items()))
    _, definitions = models_json_schema([(m, "validation") for m in models.values()], ref_template=REF)
    components = doc.setdefault("components", {})
    schemas = components.setdefault("schemas", {})
    schemas.update(definitions.get("$defs", {}))
    for name in ("HTTPValidationError", "ValidationError"):
        schemas.pop(name, None)
    components["securitySchemes"] = SECURITY_SCHEMES
    return doc
