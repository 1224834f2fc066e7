"""The pick reply: one seat's own message, for callers that need one (tools, JSON, `:pick`).

Every seat still runs and is recorded; the reply carries the message of one seat that answered
validly for the request, chosen in the merger's order (the collection's merger, a pinned primary,
then the panel's seats, explorers included, best evidence on the shape first by the one rule in
bench/evidence/posterior.py, then the router's pick, the first member), then the other seats as
listed: the pick is the best-evidenced valid seat unless the user chose otherwise. Valid:
a `json_schema` answer validates against the schema, a `json_object` answer parses as an object, a
tool call names a tool of the request with arguments that parse. When none is valid, the first
seat that answered is picked and the note says so: the caller's own validation then fails as it
would with one model.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import orjson

from benchwarmers.errors import InvalidRequest

# jsonschema is imported only for a request that carries a schema: a CLI command opening the bench
# (whose services reach this module) would otherwise spend a tenth of a second loading it.

if TYPE_CHECKING:
    from benchwarmers.bench.core.outcomes import SeatOutcome


@dataclass(frozen=True)
class Picked:
    """The seat whose message is the reply (None when no seat answered), why, and a note if any."""

    outcome: SeatOutcome | None
    why: str
    note: str | None = None


def json_schema_of(body: Mapping[str, Any]) -> dict[str, Any] | None:
    """The schema a `json_schema` response_format asks for; None for any other request."""
    fmt = body.get("response_format")
    if not isinstance(fmt, dict) or fmt.get("type") != "json_schema":
        return None
    spec = fmt.get("json_schema")
    schema = spec.get("schema") if isinstance(spec, dict) else None
    return schema if isinstance(schema, dict) else {}


def check_request(body: Mapping[str, Any]) -> None:
    """Refuse, before any seat is called, a response_format or tools the pick could not check."""
    fmt = body.get("response_format")
    if fmt is not None and (not isinstance(fmt, dict) or not isinstance(fmt.get("type"), str)):
        raise InvalidRequest(
            'response_format must be an object such as {"type": "json_object"}', param="response_format"
        )
    schema = json_schema_of(body)
    if schema is not None:
        from jsonschema import Draft202012Validator, validators
        from jsonschema.exceptions import SchemaError

        try:
            validators.validator_for(schema, default=Draft202012Validator).check_schema(schema)
        except SchemaError as exc:
            raise InvalidRequest(
                f"response_format.json_schema.schema is not a valid JSON Schema: {exc.message}",
                param="response_format",
            ) from None
    tools = body.get("tools")
    if tools is not None and not isinstance(tools, list):
        raise InvalidRequest('tools must be a list such as [{"type": "function", "function": {...}}]', param="tools")


def _tool_names(body: Mapping[str, Any]) -> set[str]:
    names = set()
    for tool in body.get("tools") or ():
        function = tool.get("function") if isinstance(tool, dict) else None
        if isinstance(function, dict) and isinstance(function.get("name"), str):
            names.add(function["name"])
    return names


def _required_tool(body: Mapping[str, Any]) -> tuple[bool, str | None]:
    """(a tool call is required, the one tool it must call if named) from tool_choice."""
    choice = body.get("tool_choice")
    if choice == "required":
        return True, None
    if isinstance(choice, dict):
        function = choice.get("function")
        name = function.get("name") if isinstance(function, dict) else choice.get("name")
        return True, name if isinstance(name, str) else None
    return False, None


def _tool_problem(outcome: SeatOutcome, body: Mapping[str, Any]) -> str | None:
    if body.get("tool_choice") == "none":
        return "it called a tool although tool_choice is 'none'"
    names = _tool_names(body)
    _, named = _required_tool(body)
    for call in outcome.tool_calls:
        name = call["function"]["name"]
        if name not in names:
            return f"it called {name!r}, which is not one of the request's tools"
        if named is not None and name != named:
            return f"it called {name!r}, but tool_choice names {named!r}"
        try:
            arguments = orjson.loads(call["function"]["arguments"] or "{}")
        except orjson.JSONDecodeError:
            return f"the arguments of its call to {name!r} are not JSON"
        if not isinstance(arguments, dict):
            return f"the arguments of its call to {name!r} are not a JSON object"
    return None


def _text_problem(outcome: SeatOutcome, body: Mapping[str, Any]) -> str | None:
    required, _ = _required_tool(body)
    if required and body.get("tools"):
        return "it answered in text, but tool_choice requires a tool call"
    fmt = body.get("response_format")
    kind = fmt.get("type") if isinstance(fmt, dict) else None
    if kind not in ("json_object", "json_schema"):
        return None
    try:
        value = orjson.loads(outcome.answer)
    except orjson.JSONDecodeError:
        return "its answer is not JSON"
    if kind == "json_object":
        return None if isinstance(value, dict) else "its answer is JSON but not an object"
    from jsonschema import Draft202012Validator, validators
    from jsonschema.exceptions import best_match
    from referencing import Registry
    from referencing.exceptions import Unresolvable

    schema = json_schema_of(body) or {}
    validator = validators.validator_for(schema, default=Draft202012Validator)
    try:
        # An empty registry: a `$ref` resolves within the schema or not at all. jsonschema's default
        # would fetch a remote one, and the bench sends nothing anywhere the user did not register.
        error = best_match(validator(schema, registry=Registry()).iter_errors(value))
    except Unresolvable:  # a $ref that does not resolve within the schema: the answer cannot be checked
        return (
            "its answer could not be checked: the schema has a $ref that does not resolve within it (none is fetched)"
        )
    if error is None:
        return None
    where = "/".join(str(p) for p in error.absolute_path)
    return f"its answer does not match the schema{f' at {where}' if where else ''}: {error.message[:200]}"


def answer_problem(outcome: SeatOutcome, body: Mapping[str, Any]) -> str | None:
    """Why a seat's answer would not do as the reply to this request; None when it does."""
    if outcome.status != "ok":
        return f"it did not answer ({outcome.status})"
    if outcome.tool_calls:
        return _tool_problem(outcome, body)
    return _text_problem(outcome, body)


def pick_seat(order: Sequence[tuple[str, str]], outcomes: Sequence[SeatOutcome], body: Mapping[str, Any]) -> Picked:
    """The first seat in `order` ((alias, rule) as the merger ranks them), then the other seats as
    listed, whose answer is valid for the request; else the first that answered, with a note."""
    seated = [o for o in outcomes if o.seat in ("member", "nominee", "explorer", "standin")]
    by_alias = {o.alias: o for o in reversed(seated)}
    ranked: list[tuple[SeatOutcome, str]] = [(by_alias[a], rule) for a, rule in order if a in by_alias]
    ranked += [(o, "the first seat that answered validly") for o in seated]
    problems: dict[str, str] = {}
    for outcome, rule in ranked:
        if outcome.call in problems:
            continue
        problem = answer_problem(outcome, body)
        if problem is None:
            return Picked(outcome, rule)
        problems[outcome.call] = problem
    answered = next((o for o in seated if o.status == "ok"), None)
    if answered is None:
        return Picked(None, "", "no seat answered, so there was no message to pick: here is every seat")
    invalid = [f"{o.alias}: {problems[o.call]}" for o in seated if o.status == "ok"]
    return Picked(
        answered,
        "the first seat that answered",
        f"no seat's answer is valid for this request ({'; '.join(invalid)}); this is the first answer",
    )
