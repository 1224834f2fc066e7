"""Anthropic's API, called: its Messages API and its model listing. Seats on endpoints of kind
`anthropic` (Anthropic itself, and the providers that offer an Anthropic-compatible endpoint) are sent
the panel's chat request as a Messages request, and the Message is read back as a chat result: text,
tool calls, usage, finish reason. The listing (`GET /v1/models`) is read page after page.

The endpoint's base URL is what the Anthropic SDKs take as theirs (`https://api.anthropic.com`, a
provider's `https://host/anthropic`); a base ending in `/v1` is taken as the same. Seats call
`POST {base}/v1/messages` with `x-api-key` and `anthropic-version`; errors come in Anthropic's shape
(`{"type": "error", "error": {"type", "message"}}`), which `classify_response` reads like any other:
429 `rate_limit_error` is rate_limited (its retry-after read), 529 `overloaded_error` an upstream
error, 400 "prompt is too long: N tokens > M maximum" context_too_long (window M), 401/403 auth.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any
from urllib.parse import quote

import orjson

from benchwarmers.catalog.facts import ListedModel
from benchwarmers.upstream.chat_wire import ChatResult, EndpointRef, bounded, key_secrets, parsed
from benchwarmers.upstream.content import content_text
from benchwarmers.upstream.failures import FailureKind, UpstreamFailure, classify_response
from benchwarmers.upstream.seat_client import SeatPost

ANTHROPIC_VERSION = "2023-06-01"
# Anthropic requires max_tokens. Unless the caller sets one, a seat may write the model's known output
# limit, but no more than a seat can write within its timeout and the answer cap; a model whose limit
# is unknown gets DEFAULT_MAX_TOKENS.
DEFAULT_MAX_TOKENS = 4096
MAX_DEFAULT_TOKENS = 16_384
_DATA_URL = re.compile(r"data:(image/[\w.+-]+);base64,(.*)", re.DOTALL)
# stop_reason → the chat finish reason.
_FINISH = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "pause_turn": "stop",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "tool_use": "tool_calls",
    "refusal": "content_filter",
}


def api_path(base_url: str, path: str) -> str:
    """`/v1/{path}` under an Anthropic base URL, or `/{path}` when the base already ends in `/v1`."""
    return f"/{path}" if base_url.strip().rstrip("/").endswith("/v1") else f"/v1/{path}"


def auth_headers(api_key: str | None) -> dict[str, str]:
    headers = {"anthropic-version": ANTHROPIC_VERSION}
    if api_key:
        headers["x-api-key"] = api_key
    return headers


def _image(part: Mapping[str, Any]) -> dict[str, Any]:
    image = part.get("image_url")
    url = str(image.get("url", "") if isinstance(image, dict) else image or "")
    inline = _DATA_URL.fullmatch(url)
    if inline:
        return {"type": "image", "source": {"type": "base64", "media_type": inline[1], "data": inline[2]}}
    return {"type": "image", "source": {"type": "url", "url": url}}


def _blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    blocks: list[dict[str, Any]] = []
    for part in content if isinstance(content, list) else ():
        kind = part.get("type") if isinstance(part, dict) else None
        if kind == "text" and part.get("text"):
            blocks.append({"type": "text", "text": str(part["text"])})
        elif kind == "image_url":
            blocks.append(_image(part))
    return blocks


def _tool_use(call: Any) -> dict[str, Any]:
    function = call.get("function") if isinstance(call, dict) else None
    function = function if isinstance(function, dict) else {}
    arguments = function.get("arguments")
    try:
        given = orjson.loads(arguments) if isinstance(arguments, str) and arguments else arguments
    except orjson.JSONDecodeError:
        given = None
    return {
        "type": "tool_use",
        "id": str(call.get("id", "")),
        "name": str(function.get("name", "")),
        "input": given if isinstance(given, dict) else {},  # Anthropic takes an object only
    }


def _turns(messages: Sequence[Any]) -> tuple[str | None, list[dict[str, Any]]]:
    """System messages become `system`; the rest become turns of content blocks, tool results as the
    user's, consecutive turns of one role merged (Anthropic wants every tool result of a turn in one)."""
    system: list[str] = []
    turns: list[dict[str, Any]] = []
    for message in messages:
        if not isinstance(message, dict):
            continue
        role, content = message.get("role"), message.get("content")
        if role in ("system", "developer"):
            system.append(content_text(content))
            continue
        if role == "tool":
            call_id = str(message.get("tool_call_id", ""))
            role, blocks = "user", [{"type": "tool_result", "tool_use_id": call_id, "content": content_text(content)}]
        elif role == "assistant":
            blocks = _blocks(content) + [_tool_use(call) for call in message.get("tool_calls") or ()]
        else:
            role, blocks = "user", _blocks(content)
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"] += blocks
        else:
            turns.append({"role": role, "content": blocks})
    return ("\n\n".join(text for text in system if text) or None), turns


def _tool_choice(choice: Any, parallel: Any) -> dict[str, Any] | None:
    if choice == "none":
        return {"type": "none"}
    if choice == "required":
        found: dict[str, Any] = {"type": "any"}
    elif isinstance(choice, dict) and isinstance(choice.get("function"), dict):
        found = {"type": "tool", "name": str(choice["function"].get("name", ""))}
    elif choice in (None, "auto"):
        found = {"type": "auto"}
    else:
        return None
    if parallel is False:
        found["disable_parallel_tool_use"] = True
    elif choice is None:
        return None  # nothing asked: Anthropic's own default
    return found


def max_tokens_for(chat: Mapping[str, Any], output_cap: int | None) -> int:
    asked = chat.get("max_completion_tokens", chat.get("max_tokens"))
    if isinstance(asked, int) and not isinstance(asked, bool) and asked > 0:
        return asked
    return min(output_cap, MAX_DEFAULT_TOKENS) if output_cap else DEFAULT_MAX_TOKENS


def messages_request(body: bytes | Sequence[bytes], output_cap: int | None = None) -> bytes:
    """A seat's chat body (as the panel built it) as a Messages request; `output_cap` is the model's
    known output limit, what max_tokens defaults to (bounded) when the caller set none."""
    chat = orjson.loads(body if isinstance(body, bytes) else b"".join(body))
    system, turns = _turns(chat.get("messages") or [])
    request: dict[str, Any] = {"model": chat["model"], "max_tokens": max_tokens_for(chat, output_cap)}
    if system:
        request["system"] = system
    request["messages"] = turns
    request |= {key: chat[key] for key in ("temperature", "top_p", "top_k") if key in chat}
    stop = chat.get("stop")
    if stop:
        request["stop_sequences"] = [stop] if isinstance(stop, str) else list(stop)
    if isinstance(chat.get("user"), str):
        request["metadata"] = {"user_id": chat["user"]}
    functions = [t.get("function") for t in chat.get("tools") or () if isinstance(t, dict)]
    tools = [
        {
            "name": str(f.get("name", "")),
            **({"description": f["description"]} if isinstance(f.get("description"), str) else {}),
            "input_schema": f.get("parameters") or {"type": "object", "properties": {}},
        }
        for f in functions
        if isinstance(f, dict)
    ]
    if tools:
        request["tools"] = tools
        choice = _tool_choice(chat.get("tool_choice"), chat.get("parallel_tool_calls"))
        if choice is not None:
            request["tool_choice"] = choice
    request["stream"] = False
    return orjson.dumps(request)


def usage_of(usage: Any) -> dict[str, Any] | None:
    """Anthropic's usage in the chat names. Its `input_tokens` leaves out the tokens read from or written
    to the prompt cache; `prompt_tokens` counts them all, as OpenAI's does, the read ones also under
    `prompt_tokens_details.cached_tokens` and the written ones under `cache_creation_input_tokens`."""
    if not isinstance(usage, dict):
        return None

    def count(name: str) -> int:
        value = usage.get(name)
        return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0

    written, read = count("cache_creation_input_tokens"), count("cache_read_input_tokens")
    prompt, completion = count("input_tokens") + written + read, count("output_tokens")
    total = prompt + completion
    found: dict[str, Any] = {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": total}
    if read:
        found["prompt_tokens_details"] = {"cached_tokens": read}
    if written:
        found["cache_creation_input_tokens"] = written
    return found


def _calls(content: Sequence[Any]) -> list[dict[str, Any]]:
    calls: list[dict[str, Any]] = []
    for block in content:
        if isinstance(block, dict) and block.get("type") == "tool_use" and isinstance(block.get("name"), str):
            arguments = block.get("input") if block.get("input") is not None else {}
            calls.append(
                {
                    "id": str(block.get("id") or f"call_{len(calls)}"),
                    "type": "function",
                    "function": {"name": block["name"], "arguments": orjson.dumps(arguments).decode()},
                }
            )
    return calls


def read_message(
    status: int, headers: Mapping[str, str], body: bytes, secrets: tuple[str, ...], data: Any = None
) -> tuple[str, list[dict[str, Any]], dict[str, Any] | None, str | None, str | None]:
    """(text, tool calls, usage, finish reason, model) of a Message; a failure for anything else.
    `data` is the body already read as JSON (what was salvaged of a cut one)."""
    if data is None:
        try:
            data = orjson.loads(body)
        except orjson.JSONDecodeError:
            raise UpstreamFailure(
                FailureKind.upstream_error, "response is not JSON", status=status, headers=dict(headers)
            ) from None
    if isinstance(data, dict) and (data.get("type") == "error" or data.get("error")):
        raise classify_response(status if status >= 400 else 502, dict(headers), body, secrets)
    content = data.get("content") if isinstance(data, dict) else None
    if not isinstance(content, list):
        raise UpstreamFailure(
            FailureKind.upstream_error, "response is not a Message (no content)", status=status, headers=dict(headers)
        )
    text = "".join(str(b.get("text", "")) for b in content if isinstance(b, dict) and b.get("type") == "text")
    stop = data.get("stop_reason")
    finish = _FINISH.get(stop, "stop") if isinstance(stop, str) else None
    model = data.get("model")
    return text, _calls(content), usage_of(data.get("usage")), finish, model if isinstance(model, str) else None


# -- the listing ----------------------------------------------------------------------------------

# Pages of a listing read at most: a page holds up to 1,000 models, so this is far past any provider.
LISTING_PAGES = 20
_TEXT_ONLY, _TEXT_IMAGE = frozenset({"text"}), frozenset({"text", "image"})


def _word(value: Any) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _listed(entry: Any) -> ListedModel | None:
    model_id = _word(entry.get("id")) if isinstance(entry, dict) else None
    if model_id is None or entry.get("lifecycle") == "retired":  # its calls fail: not a model to seat
        return None
    capabilities = entry.get("capabilities")
    image = capabilities.get("image_input") if isinstance(capabilities, dict) else None
    sees = image.get("supported") if isinstance(image, dict) else None
    deprecated = None
    if entry.get("lifecycle") == "deprecated":
        deprecated = _word(entry.get("retires_at")) or _word(entry.get("deprecated_at")) or "deprecated"
    return ListedModel(
        model_id=model_id,
        context_window=_count(entry.get("max_input_tokens")),
        output_cap=_count(entry.get("max_tokens")),
        input_kinds=(_TEXT_IMAGE if sees else _TEXT_ONLY) if isinstance(sees, bool) else None,
        deprecated=deprecated,
        display_name=_word(entry.get("display_name")),
        created=_word(entry.get("created_at")),
    )


def parse_anthropic(payload: Any) -> list[ListedModel]:
    """One page of `GET /v1/models`: `{"data": [{id, display_name, created_at, type}], "has_more",
    "first_id", "last_id"}`. Anthropic's newer entries add `max_input_tokens` (the window), `max_tokens`
    (the output limit), `capabilities.image_input.supported` and `lifecycle`: a retired model is left
    out, a deprecated one marked. Compatible providers list the first four fields only."""
    entries = payload.get("data") if isinstance(payload, dict) else None
    if not isinstance(entries, list):
        raise ValueError("not a model listing: expected a list under 'data'")
    found: dict[str, ListedModel] = {}
    for model in map(_listed, entries):
        if model is not None:
            found.setdefault(model.model_id, model)
    return list(found.values())


async def fetch_anthropic(
    base_url: str, fetch_json: Callable[[str, str, Any | None], Awaitable[Any]]
) -> list[ListedModel]:
    """Every page of the listing, the next asked `after_id` the last page's `last_id` while `has_more`."""
    url = f"{base_url.strip().rstrip('/').removesuffix('/v1')}/v1/models?limit=1000"
    payload = await fetch_json("GET", url, None)
    pages = [payload]
    while isinstance(payload, dict) and payload.get("has_more") is True and len(pages) < LISTING_PAGES:
        last = _word(payload.get("last_id"))
        if last is None:
            break
        payload = await fetch_json("GET", f"{url}&after_id={quote(last, safe='')}", None)
        pages.append(payload)
    found: dict[str, ListedModel] = {}
    for page in pages:
        for model in parse_anthropic(page):
            found.setdefault(model.model_id, model)
    return list(found.values())


class AnthropicClient:
    """The `SeatClient` of Anthropic's Messages API (upstream/seat_client.py), posting through the pool."""

    def __init__(self, pool: SeatPost) -> None:
        self.pool = pool

    async def seat(
        self,
        endpoint: EndpointRef,
        body: bytes | Sequence[bytes],
        timeout: float,  # noqa: ASYNC109
        cap: int | None = None,
        concurrency: int | None = None,
        output_cap: int | None = None,
    ) -> ChatResult:
        """A seat on an Anthropic-format endpoint: the chat body sent as `POST {base}/v1/messages`, the
        Message read back as a chat result. `output_cap` is the model's known output limit, what
        max_tokens defaults to."""
        path = api_path(endpoint.base_url, "messages")
        reply = await self.pool.post_seat(endpoint, path, messages_request(body, output_cap), timeout, cap)
        secrets = key_secrets(endpoint)
        data = parsed(reply, secrets) if reply.cut else None
        text, calls, usage, finish, model = read_message(reply.status, reply.headers, reply.body, secrets, data)
        result = ChatResult(text, usage, reply.status, reply.headers, reply.seconds, model, calls, finish)
        return bounded(result, cap, reply.cut)
