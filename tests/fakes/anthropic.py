"""The fake provider's Anthropic face: `{root}/anthropic` is a base URL as the Anthropic SDKs take it
(as compatible providers serve one beside their OpenAI one), answering `POST /v1/messages` and
`GET /v1/models` the way Anthropic does: `x-api-key` and `anthropic-version` required, Messages with
content blocks, tool_use and usage, streamed as Anthropic's events, errors in its error shape, the
listing in pages (`limit`, `after_id`, `has_more`, `first_id`, `last_id`).

The scripted models are the same as the OpenAI face's: a Messages request is seen as a chat request
(`chat_view`) for every behaviour's checks, and OpenAI-style failures are spoken in Anthropic's words."""

from __future__ import annotations

import itertools
from typing import Any
from urllib.parse import parse_qs

import orjson

from tests.fakes.behaviour import Behaviour, text_chars, tokens
from tests.fakes.wire import Response

PREFIX = "/anthropic"
VERSION = "2023-06-01"
_ids = itertools.count(1)
# Anthropic's error types by status (its errors page).
_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    402: "billing_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}
_MESSAGES = {
    401: "invalid x-api-key",
    403: "Your API key does not have permission to use the specified resource.",
    429: "This request would exceed the rate limit for your organization of 50 requests per minute. "
    "For details, refer to: https://docs.claude.com/en/api/rate-limits.",
    500: "Internal server error",
    529: "Overloaded",
}


def error_response(status: int, message: str | None = None) -> Response:
    kind = _TYPES.get(status, "api_error" if status >= 500 else "invalid_request_error")
    body = {
        "type": "error",
        "error": {"type": kind, "message": message or _MESSAGES.get(status, kind)},
        "request_id": f"req_fake{next(_ids):04d}",
    }
    return Response(status, orjson.dumps(body))


def api_key(headers: dict[str, str]) -> str:
    return headers.get("x-api-key") or headers.get("authorization", "").removeprefix("Bearer ").strip()


def refusal(headers: dict[str, str], require_key: str | None) -> Response | None:
    """What Anthropic answers a request without its version or its key (`x-api-key`, or a bearer
    token as the newer SDKs send it)."""
    if not headers.get("anthropic-version"):
        return error_response(400, "anthropic-version: header is required")
    key = api_key(headers)
    if not key and require_key is not None:
        return error_response(401, "x-api-key header is required")
    if require_key is not None and key != require_key:
        return error_response(401)
    return None


def in_words(response: Response, behaviour: Behaviour, model: str, data: dict[str, Any]) -> Response:
    """One of the fake's OpenAI-style failures as Anthropic words it (a body the test scripted is not
    one: it is sent as it is)."""
    if response.content_type != "application/json":
        return response
    error = orjson.loads(response.body).get("error")
    error = error if isinstance(error, dict) else {}
    if error.get("code") == "context_length_exceeded" and behaviour.context_limit is not None:
        used = max(behaviour.context_limit + 1, tokens(text_chars(data)))
        return error_response(400, f"prompt is too long: {used} tokens > {behaviour.context_limit} maximum")
    if response.status == 404:
        return error_response(404, f"model: {model}")
    if response.status in (400, 422):
        return error_response(response.status, error.get("message"))
    return error_response(response.status)


# -- requests --------------------------------------------------------------------------------------


def _parts(content: Any) -> tuple[Any, list[dict[str, Any]], list[dict[str, Any]]]:
    """(chat content, tool results as tool messages, tool_use blocks as chat tool calls)."""
    if isinstance(content, str):
        return content, [], []
    parts: list[dict[str, Any]] = []
    results: list[dict[str, Any]] = []
    calls: list[dict[str, Any]] = []
    for block in content if isinstance(content, list) else ():
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "text":
            parts.append({"type": "text", "text": block.get("text", "")})
        elif kind == "image":
            source = block.get("source") or {}
            url = source.get("url") or f"data:{source.get('media_type')};base64,{source.get('data', '')}"
            parts.append({"type": "image_url", "image_url": {"url": url}})
        elif kind == "tool_result":
            given = block.get("content")
            text = given if isinstance(given, str) else "".join(p.get("text", "") for p in given or ())
            results.append({"role": "tool", "tool_call_id": block.get("tool_use_id"), "content": text})
        elif kind == "tool_use":
            function = {"name": block.get("name"), "arguments": orjson.dumps(block.get("input")).decode()}
            calls.append({"id": block.get("id"), "type": "function", "function": function})
    return parts, results, calls


def chat_view(data: dict[str, Any]) -> dict[str, Any]:
    """A Messages request seen as a chat request, for the checks the fake makes on either."""
    system = data.get("system")
    if isinstance(system, list):
        system = "".join(block.get("text", "") for block in system if isinstance(block, dict))
    messages: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
    for message in data.get("messages") or ():
        content, results, calls = _parts(message.get("content"))
        messages += results
        if content or not results:
            called = {"tool_calls": calls} if calls else {}
            messages.append({"role": message.get("role"), "content": content, **called})
    tools = [
        {"type": "function", "function": {"name": t.get("name"), "parameters": t.get("input_schema")}}
        for t in data.get("tools") or ()
    ]
    choice = data.get("tool_choice")
    view = {**data, "messages": messages, "tools": tools}
    if isinstance(choice, dict) and choice.get("type") == "tool":
        view["tool_choice"] = {"type": "function", "function": {"name": choice.get("name")}}
    return view


# -- replies ---------------------------------------------------------------------------------------


def usage(scripted: dict[str, Any] | None, data: dict[str, Any], answer: str) -> dict[str, Any]:
    """Anthropic's usage: a scripted one in its names as it is, one in chat names translated."""
    if scripted is not None and "input_tokens" in scripted:
        return scripted
    if scripted is not None:
        return {"input_tokens": scripted.get("prompt_tokens"), "output_tokens": scripted.get("completion_tokens")}
    found = {"input_tokens": tokens(text_chars(data)), "output_tokens": tokens(len(answer))}
    return {**found, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}


def message(model: str, answer: str, calls: list[dict[str, Any]], used: dict[str, Any]) -> dict[str, Any]:
    content: list[dict[str, Any]] = [{"type": "text", "text": answer}] if answer or not calls else []
    for call in calls:
        function = call["function"]
        arguments = orjson.loads(function["arguments"])
        content.append({"type": "tool_use", "id": f"toolu_{call['id']}", "name": function["name"], "input": arguments})
    return {
        "id": f"msg_fake{next(_ids):04d}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": "tool_use" if calls else "end_turn",
        "stop_sequence": None,
        "usage": used,
    }


def events(final: dict[str, Any]) -> list[dict[str, Any]]:
    """The event sequence Anthropic streams for a message: start, each block's deltas, delta, stop."""
    opening = {**final, "content": [], "stop_reason": None, "usage": {**final["usage"], "output_tokens": 1}}
    found: list[dict[str, Any]] = [{"type": "message_start", "message": opening}, {"type": "ping"}]
    for index, block in enumerate(final["content"]):
        if block["type"] == "text":
            found.append({"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}})
            words = block["text"].split(" ")
            for number, word in enumerate(words):
                delta = {"type": "text_delta", "text": word if number == 0 else " " + word}
                found.append({"type": "content_block_delta", "index": index, "delta": delta})
        else:
            found.append({"type": "content_block_start", "index": index, "content_block": {**block, "input": {}}})
            delta = {"type": "input_json_delta", "partial_json": orjson.dumps(block["input"]).decode()}
            found.append({"type": "content_block_delta", "index": index, "delta": delta})
        found.append({"type": "content_block_stop", "index": index})
    ending = {"stop_reason": final["stop_reason"], "stop_sequence": None}
    written = {"output_tokens": final["usage"]["output_tokens"]}
    found.append({"type": "message_delta", "delta": ending, "usage": written})
    found.append({"type": "message_stop"})
    return found


def listing(models: list[str], facts: dict[str, dict[str, Any]], query: str, most: int = 1000) -> Response:
    """One page of the listing, `limit` models (20 unless asked, `most` at most) after `after_id`."""
    asked = parse_qs(query)
    limit = int(asked.get("limit", ["20"])[0])
    if not 1 <= limit <= 1000:
        return error_response(400, "limit: Input should be less than or equal to 1000")
    limit = min(limit, most)
    after = asked.get("after_id", [None])[0]
    start = models.index(after) + 1 if after in models else 0
    page = models[start : start + limit]
    data = [
        {
            "type": "model",
            "id": model,
            "display_name": model.replace("-", " ").title(),
            "created_at": "2025-05-14T00:00:00Z",
            **facts.get(model, {}),
        }
        for model in page
    ]
    body = {
        "data": data,
        "has_more": start + limit < len(models),
        "first_id": page[0] if page else None,
        "last_id": page[-1] if page else None,
    }
    return Response(200, orjson.dumps(body))
