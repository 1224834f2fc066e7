"""`/openapi.json` describes what the routes really read and send: every body, every query and
path parameter, and the one error body (never FastAPI's 422 `{"detail": [...]}`)."""

from __future__ import annotations

import json
import re
from typing import Any

import httpx2
import pytest

from tests.support.benchserver import BenchServer

ERROR_REF = {"$ref": "#/components/schemas/ErrorBody"}
ANTHROPIC_ERROR_REF = {"$ref": "#/components/schemas/AnthropicErrorBody"}


def error_ref(path: str) -> dict[str, str]:
    """The error body a route sends: Anthropic's on the Messages routes, else the one error body."""
    return ANTHROPIC_ERROR_REF if path.startswith("/v1/messages") else ERROR_REF


# Every query parameter each route reads: a new one must be documented, and land here.
QUERIES = {
    ("get", "/bench/panels"): {"limit", "before", "owed"},
    ("get", "/api/panels"): {"limit", "before", "after", "owed", "collection", "model", "status", "caller", "q"},
    ("get", "/api/changes"): {"limit", "subject"},
    ("get", "/api/alerts"): {"all"},
    ("get", "/api/models/{alias}/wrong"): {"limit"},
    ("delete", "/api/endpoints/{name}"): {"force"},
    ("get", "/api/discover"): {"free", "vision", "min_context", "provider", "limit"},
    ("get", "/api/keys"): {"revoked"},
    ("get", "/api/leaderboard"): {"shape", "days", "human_only"},
    ("get", "/api/reports"): {"days"},
    ("get", "/api/suite/tasks/{task_id}"): {"run"},
    ("get", "/api/trends/useful"): {"days", "shape"},
    ("get", "/api/trends/calls"): {"days", "shape"},
    ("get", "/api/trends/value"): {"days"},
    ("get", "/api/trends/suite"): {"runs"},
    ("get", "/leaderboard"): {"days"},
    ("get", "/trends"): {"days"},
    ("get", "/suite"): {"run", "task"},
    ("get", "/discover"): {"free", "vision", "min_context", "q", "page"},
    ("get", "/settings"): {"provider"},
    ("get", "/login"): {"next", "token"},
}
NO_BODY = {  # POSTs that read no body
    ("post", "/api/endpoints/{name}/refresh"),
    ("post", "/api/endpoints/{name}/test"),
    ("post", "/api/notify/{name}/test"),
    ("post", "/api/alerts/{alert_id}/ack"),
    ("post", "/api/models/{alias}/restore"),
    ("post", "/logout"),
}


@pytest.fixture(scope="module")
def document(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    server = BenchServer(tmp_path_factory.mktemp("openapi")).start()
    try:
        response = httpx2.get(f"{server.url}/openapi.json")
    finally:
        server.stop()
    assert response.status_code == 200
    return response.json()


def operations(document: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [(method, path, op) for path, ops in document["paths"].items() for method, op in ops.items()]


def resolve(document: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    ref = schema.get("$ref")
    return document["components"]["schemas"][ref.rsplit("/", 1)[-1]] if ref else schema


def test_no_validation_error_of_fastapi_is_advertised(document):
    assert not {"HTTPValidationError", "ValidationError"} & set(document["components"]["schemas"])
    assert "HTTPValidationError" not in json.dumps(document)
    for method, path, op in operations(document):
        # A 422 is advertised only where the bench answers one itself: an Idempotency-Key reused.
        if "422" in op["responses"]:
            replayed = {("post", "/v1/chat/completions"), ("post", "/v1/responses"), ("post", "/v1/messages")}
            assert (method, path) in replayed, f"{method} {path}"
            assert op["responses"]["422"]["content"] == {"application/json": {"schema": error_ref(path)}}
    for schema in document["components"]["schemas"].values():
        assert "detail" not in schema.get("properties", {})


def test_every_4xx_is_the_error_body(document):
    error = document["components"]["schemas"]["ErrorBody"]
    assert error["required"] == ["error"]
    detail = resolve(document, error["properties"]["error"])
    assert set(detail["properties"]) == set(detail["required"]) == {"message", "type", "param", "code"}
    for method, path, op in operations(document):
        for status, response in op["responses"].items():
            if status.startswith("4"):
                expected = {"application/json": {"schema": error_ref(path)}}
                assert response["content"] == expected, f"{method} {path} {status}"
        if op.get("parameters") or op.get("requestBody"):
            assert "400" in op["responses"], f"{method} {path}"


def test_every_body_is_described(document):
    for method, path, op in operations(document):
        if method not in ("post", "put", "patch") or (method, path) in NO_BODY:
            assert "requestBody" not in op, f"{method} {path}"
            continue
        assert op["requestBody"]["required"] is True, f"{method} {path}"
        [(media, content)] = op["requestBody"]["content"].items()
        schema = resolve(document, content["schema"])
        assert schema["properties"], f"{method} {path}"
        assert "413" in op["responses"], f"{method} {path}"
        if path.startswith("/api/") or path == "/bench/verdict":
            assert (media, schema["additionalProperties"]) == ("application/json", False), f"{method} {path}"
            assert all(p.get("description") for p in schema["properties"].values()), f"{method} {path}"


def test_the_chat_body_is_described_though_the_route_reads_it_itself(document):
    op = document["paths"]["/v1/chat/completions"]["post"]
    chat = resolve(document, op["requestBody"]["content"]["application/json"]["schema"])
    assert chat["required"] == ["model", "messages"]
    assert {"model", "messages", "stream", "stream_options", "bench"} <= set(chat["properties"])
    assert chat.get("additionalProperties", True) is not False  # every other OpenAI field goes to the seats
    options = resolve(document, chat["properties"]["bench"]["anyOf"][0])
    assert set(options["properties"]) == {"reply", "with", "shape"}
    assert {p["name"] for p in op["parameters"]} == {"Idempotency-Key", "x-stainless-retry-count"}
    assert {"400", "401", "403", "404", "413", "429"} <= set(op["responses"])


def test_every_parameter_is_listed_with_its_type(document):
    for method, path, op in operations(document):
        parameters = op.get("parameters", [])
        query = {p["name"] for p in parameters if p["in"] == "query"}
        assert query == QUERIES.get((method, path), set()), f"{method} {path}"
        in_path = {p["name"] for p in parameters if p["in"] == "path"}
        assert in_path == set(re.findall(r"\{(\w+)\}", path)), f"{method} {path}"
        for parameter in parameters:
            schema = parameter["schema"]
            assert schema.get("type") or schema.get("anyOf"), f"{method} {path} {parameter['name']}"
            if parameter["in"] == "query":
                assert schema.get("description") or parameter.get("description"), f"{method} {path}"
    limit = next(p for p in document["paths"]["/bench/panels"]["get"]["parameters"] if p["name"] == "limit")
    assert (limit["schema"]["type"], limit["schema"]["minimum"], limit["schema"]["maximum"]) == ("integer", 1, 200)


def test_who_may_call_each_route(document):
    schemes = document["components"]["securitySchemes"]
    assert set(schemes) == {"gatewayKey", "adminToken", "adminSession"}
    for method, path, op in operations(document):
        names = {name for requirement in op.get("security", []) for name in requirement}
        if path.startswith(("/v1/", "/bench/")):
            assert names == {"gatewayKey"}, f"{method} {path}"
        elif path.startswith("/api/"):
            assert names == {"adminToken", "adminSession"}, f"{method} {path}"


def test_the_messages_routes_document_anthropics_bodies_and_errors(document):
    op = document["paths"]["/v1/messages"]["post"]
    body = resolve(document, op["requestBody"]["content"]["application/json"]["schema"])
    assert body["required"] == ["model", "messages"]
    assert {"system", "tools", "tool_choice", "max_tokens", "stream", "stop_sequences", "bench"} <= set(
        body["properties"]
    )
    assert {p["name"] for p in op["parameters"]} == {"anthropic-version", "x-api-key"}
    assert {"400", "401", "403", "404", "413", "429", "500"} <= set(op["responses"])
    count = document["paths"]["/v1/messages/count_tokens"]["post"]
    counted = resolve(document, count["requestBody"]["content"]["application/json"]["schema"])
    assert counted["required"] == ["model", "messages"] and "max_tokens" not in counted["properties"]
    error = document["components"]["schemas"]["AnthropicErrorBody"]
    assert set(error["required"]) == {"type", "error"}
    detail = resolve(document, error["properties"]["error"])
    assert set(detail["required"]) == {"type", "message"}
