"""The Responses API, called: seats on endpoints of kind `responses` (OpenAI itself, ChatGPT-plan
relays such as CLIProxyAPI's `/v1/responses`) are sent the panel's chat request as a Responses
request, and their Response is read back as a chat result: text, function calls, usage.

Failures are classified as for chat: an HTTP error through `classify_response`, and a Response
whose status is `failed` as the error it carries.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import orjson

from benchwarmers.upstream.chat_wire import ChatResult, EndpointRef, bounded, key_secrets, parsed
from benchwarmers.upstream.content import content_text
from benchwarmers.upstream.failures import FailureKind, UpstreamFailure, classify_response
from benchwarmers.upstream.seat_client import SeatPost

# Chat fields with the same meaning in a Responses request.
_SAME = ("temperature", "top_p", "parallel_tool_calls", "user", "metadata")


def _part(part: Any) -> dict[str, Any] | None:
    kind = part.get("type") if isinstance(part, dict) else None
    if kind == "text":
        return {"type": "input_text", "text": str(part.get("text", ""))}
    if kind == "image_url":
        image = part.get("image_url")
        url = image.get("url") if isinstance(image, dict) else image
        found: dict[str, Any] = {"type": "input_image", "image_url": url}
        if isinstance(image, dict) and isinstance(image.get("detail"), str):
            found["detail"] = image["detail"]
        return found
    return None


def _input(messages: Sequence[Any]) -> tuple[str | None, list[dict[str, Any]]]:
    """System messages become `instructions`; the rest become input items."""
    instructions: list[str] = []
    items: list[dict[str, Any]] = []
    for message in messages:
        if not isinstance(message, dict):
            continue
        role, content = message.get("role"), message.get("content")
        if role in ("system", "developer"):
            instructions.append(content_text(content))
        elif role == "tool":
            items.append(
                {
                    "type": "function_call_output",
                    "call_id": str(message.get("tool_call_id", "")),
                    "output": content_text(content),
                }
            )
        elif role == "assistant":
            if text := content_text(content):
                items.append({"role": "assistant", "content": [{"type": "output_text", "text": text}]})
            for call in message.get("tool_calls") or ():
                function = call.get("function") or {}
                items.append(
                    {
                        "type": "function_call",
                        "call_id": str(call.get("id", "")),
                        "name": str(function.get("name", "")),
                        "arguments": str(function.get("arguments") or "{}"),
                    }
                )
        elif isinstance(content, list):
            parts = [found for part in content if (found := _part(part)) is not None]
            items.append({"role": "user", "content": parts})
        else:
            items.append({"role": "user", "content": [{"type": "input_text", "text": content_text(content)}]})
    return ("\n\n".join(instructions) or None), items


def _tool_choice(choice: Any) -> Any:
    if isinstance(choice, dict):
        function = choice.get("function")
        if isinstance(function, dict) and "name" in function:
            return {"type": "function", "name": function["name"]}
    return choice


def responses_request(body: bytes | Sequence[bytes]) -> bytes:
    """A seat's chat body (as the panel built it) as a Responses request."""
    chat = orjson.loads(body if isinstance(body, bytes) else b"".join(body))
    instructions, items = _input(chat.get("messages") or [])
    request: dict[str, Any] = {"model": chat["model"], "input": items, "stream": False, "store": False}
    if instructions:
        request["instructions"] = instructions
    request |= {key: chat[key] for key in _SAME if key in chat}
    cap = chat.get("max_completion_tokens", chat.get("max_tokens"))
    if isinstance(cap, int):
        request["max_output_tokens"] = cap
    tools = [t.get("function") for t in chat.get("tools") or () if isinstance(t, dict)]
    if tools:
        request["tools"] = [{"type": "function", **function} for function in tools if isinstance(function, dict)]
        if "tool_choice" in chat:
            request["tool_choice"] = _tool_choice(chat["tool_choice"])
    fmt = chat.get("response_format")
    if isinstance(fmt, dict) and fmt.get("type") == "json_schema":
        request["text"] = {"format": {"type": "json_schema", **(fmt.get("json_schema") or {})}}
    elif isinstance(fmt, dict) and fmt.get("type") == "json_object":
        request["text"] = {"format": {"type": "json_object"}}
    return orjson.dumps(request)


def _usage(usage: Any) -> dict[str, Any] | None:
    if not isinstance(usage, dict):
        return None
    prompt, completion = usage.get("input_tokens"), usage.get("output_tokens")
    total = usage.get("total_tokens")
    if not isinstance(total, int) and isinstance(prompt, int) and isinstance(completion, int):
        total = prompt + completion
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": total}


def read_response(
    status: int, headers: Mapping[str, str], body: bytes, secrets: tuple[str, ...], data: Any = None
) -> tuple[str, list[dict[str, Any]], dict[str, Any] | None, str, str | None]:
    """(text, tool calls, usage, finish reason, model) of a Response; a failure for anything else.
    `data` is the body already read as JSON (what was salvaged of a cut one)."""
    if data is None:
        try:
            data = orjson.loads(body)
        except orjson.JSONDecodeError:
            raise UpstreamFailure(
                FailureKind.upstream_error, "response is not JSON", status=status, headers=dict(headers)
            ) from None
    if not isinstance(data, dict) or data.get("object") not in ("response", None) or "output" not in data:
        if isinstance(data, dict | list) and (isinstance(data, list) or data.get("error")):
            raise classify_response(status, dict(headers), body, secrets)
        raise UpstreamFailure(
            FailureKind.upstream_error, "response is not a Response (no output)", status=status, headers=dict(headers)
        )
    if data.get("status") == "failed":
        error = data.get("error") if isinstance(data.get("error"), dict) else {"message": "the response failed"}
        raise classify_response(
            status if status >= 400 else 502, dict(headers), orjson.dumps({"error": error}), secrets
        )
    texts: list[str] = []
    calls: list[dict[str, Any]] = []
    for item in data.get("output") or ():
        if not isinstance(item, dict):
            continue
        if item.get("type") == "message":
            texts += [
                p.get("text", "")
                for p in item.get("content") or ()
                if isinstance(p, dict) and p.get("type") == "output_text"
            ]
        elif item.get("type") == "function_call":
            calls.append(
                {
                    "id": str(item.get("call_id") or item.get("id") or f"call_{len(calls)}"),
                    "type": "function",
                    "function": {"name": str(item.get("name", "")), "arguments": str(item.get("arguments") or "{}")},
                }
            )
    incomplete = data.get("status") == "incomplete"
    finish = "length" if incomplete else "tool_calls" if calls else "stop"
    model = data.get("model")
    return "".join(texts), calls, _usage(data.get("usage")), finish, model if isinstance(model, str) else None


class ResponsesClient:
    """The `SeatClient` of the Responses API (upstream/seat_client.py), posting through the pool."""

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
        """A seat on a Responses-API endpoint: the chat body sent as `POST {base}/responses`, the
        Response read back as a chat result."""
        reply = await self.pool.post_seat(endpoint, "/responses", responses_request(body), timeout, cap)
        secrets = key_secrets(endpoint)
        data = parsed(reply, secrets) if reply.cut else None
        text, calls, usage, finish, model = read_response(reply.status, reply.headers, reply.body, secrets, data)
        result = ChatResult(text, usage, reply.status, reply.headers, reply.seconds, model, calls, finish)
        return bounded(result, cap, reply.cut)
