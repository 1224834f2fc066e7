"""One sentence for a refused parameter or body field: which one, and what it takes.

The "what it takes" is read from the field's JSON schema, the same one the OpenAPI document
shows, so a refusal and the document never disagree: `limit must be a whole number from 1 to 200`.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from fastapi.exceptions import RequestValidationError
from fastapi.routing import APIRoute
from pydantic import BaseModel, ValidationError
from starlette.requests import Request

from benchwarmers.errors import InvalidRequest

Schema = dict[str, Any]

_PLURAL = {"string": "strings", "integer": "whole numbers", "number": "numbers", "object": "objects"}


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


def _bounds(schema: Schema) -> str:
    low, high = schema.get("minimum"), schema.get("maximum")
    above = schema.get("exclusiveMinimum")
    if low is not None and high is not None:
        return f" from {_number(low)} to {_number(high)}"
    if low is not None:
        return f" of {_number(low)} or more"
    if above is not None and above != 0:
        return f" greater than {_number(above)}"
    if high is not None:
        return f" of at most {_number(high)}"
    return ""


def _length(schema: Schema) -> str:
    low, high = schema.get("minLength"), schema.get("maxLength")
    if low and high:
        return f" of {low} to {high} characters"
    if high:
        return f" of at most {high} characters"
    if low:
        return f" of at least {low} characters"
    return ""


def _resolve(schema: Schema, defs: dict[str, Schema]) -> Schema:
    ref = schema.get("$ref")
    return defs.get(ref.rsplit("/", 1)[-1], {}) if isinstance(ref, str) else schema


def describe(schema: Schema, defs: dict[str, Schema] | None = None) -> str:
    """What a value of this schema is, in words: `a whole number from 1 to 200`, `true or false`."""
    defs = defs or {}
    schema = _resolve(schema, defs)
    options = schema.get("anyOf") or schema.get("oneOf")
    if options:  # null is left out: where it is allowed, leaving the field out says the same
        kinds = [describe(option, defs) for option in options if option.get("type") != "null"]
        return " or ".join(dict.fromkeys(kinds)) or "null"
    if "enum" in schema:
        return "one of " + ", ".join(repr(value) for value in schema["enum"])
    kind = schema.get("type")
    positive = "positive " if schema.get("exclusiveMinimum") == 0 else ""
    if kind == "integer":
        return f"a {positive}whole number{_bounds(schema)}"
    if kind == "number":
        return f"a {positive}number{_bounds(schema)}"
    if kind == "boolean":
        return "true or false"
    if kind == "string":
        if schema.get("minLength") == 1 and not schema.get("maxLength"):
            return "a non-empty string"
        return f"a string{_length(schema)}"
    if kind == "array":
        items = _resolve(schema.get("items") or {}, defs)
        return f"a list of {_PLURAL.get(items.get('type', ''), 'values')}"
    if kind == "object":
        return "an object"
    return "a valid value"


def _help(description: str | None) -> str:
    """A field's description as the end of a sentence: `: the call id of the seat judged`."""
    if not description:
        return ""
    text = description.rstrip(".")
    if len(text) > 1 and text[0].isupper() and text[1].islower():
        text = text[0].lower() + text[1:]
    return f": {text}"


def _sentence(name: str, error: dict[str, Any], schema: Schema | None, defs: dict[str, Schema]) -> str:
    if error.get("type") == "missing":
        return f"{name} is required" + _help((schema or {}).get("description"))
    if schema is None:
        return f"{name}: {error.get('msg', 'not valid')}"
    return f"{name} must be {describe(schema, defs)}"


# -- bodies -------------------------------------------------------------------------------------------


@lru_cache(maxsize=64)
def _model_schema(model: type[BaseModel]) -> Schema:
    return model.model_json_schema()


def body_refusal(model: type[BaseModel], exc: ValidationError) -> InvalidRequest:
    """A body the model refused: every unknown field at once, else the first field at fault."""
    schema = _model_schema(model)
    properties: dict[str, Schema] = schema.get("properties", {})
    errors = exc.errors()
    unknown = sorted({str(e["loc"][0]) for e in errors if e["type"] == "extra_forbidden" and e["loc"]})
    if unknown:
        return InvalidRequest(
            f"unknown field(s): {', '.join(unknown)}; expected: {', '.join(sorted(properties))}", param=unknown[0]
        )
    first = errors[0]
    if not first["loc"]:
        return InvalidRequest(f"the body is not valid: {first['msg']}")
    name = str(first["loc"][0])
    return InvalidRequest(_sentence(name, dict(first), properties.get(name), schema.get("$defs", {})), param=name)


# -- query and path parameters ------------------------------------------------------------------------


def _parameter_schema(request: Request, where: str, name: str) -> tuple[Schema | None, dict[str, Schema]]:
    """The parameter's schema in the app's OpenAPI document."""
    route = request.scope.get("route")
    if not isinstance(route, APIRoute):
        return None, {}
    document = request.app.openapi()
    operations = document.get("paths", {}).get(route.path_format, {})
    operation = operations.get(request.method.lower()) or operations.get("get", {})
    defs = document.get("components", {}).get("schemas", {})
    for parameter in operation.get("parameters", []):
        if parameter.get("name") == name and parameter.get("in") == where:
            return parameter.get("schema", {}), defs
    return None, defs


def parameter_refusal(request: Request, exc: RequestValidationError) -> InvalidRequest:
    """A query or path parameter FastAPI could not read as its declared type and bounds."""
    errors = exc.errors()
    if not errors:
        return InvalidRequest("the request is not valid")
    first = dict(errors[0])
    loc = [str(part) for part in first.get("loc", ())]
    if len(loc) < 2:
        return InvalidRequest(f"the request is not valid: {first.get('msg', '')}".rstrip(": "))
    where, name = loc[0], loc[1]
    schema, defs = _parameter_schema(request, where, name)
    return InvalidRequest(_sentence(name, first, schema, defs), param=name)
