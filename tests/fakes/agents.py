"""What the fake provider does for agents: tool calls, and the Responses API (`POST /v1/responses`),
plain and streamed, the way OpenAI answers them."""

from __future__ import annotations

import asyncio
import itertools
import time
from typing import Any

import orjson

_ids = itertools.count(1)


def _tool_name(tool: Any) -> str | None:
    if not isinstance(tool, dict):
        return None
    function = tool.get("function")
    name = function.get("name") if isinstance(function, dict) else tool.get("name")
    return name if isinstance(name, str) else None


def tool_calls_for(arguments: dict[str, Any] | None, name: str | None, data: dict[str, Any]) -> list[dict[str, Any]]:
    """A tool-calling model's calls: the tool `tool_choice` names, else the first offered, with the
    scripted arguments (`name` overrides which tool it claims to call). None offered: no call."""
    tools = data.get("tools")
    if arguments is None or not isinstance(tools, list) or not tools:
        return []
    choice = data.get("tool_choice")
    chosen = _tool_name(choice) if isinstance(choice, dict) else None
    called = name or chosen or _tool_name(tools[0]) or "unknown"
    return [
        {
            "id": f"call_{next(_ids)}",
            "type": "function",
            "function": {"name": called, "arguments": orjson.dumps(arguments).decode()},
        }
    ]


def chat_deltas(calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Tool calls as streamed chat deltas: the head (id, name), then the arguments in two pieces."""
    deltas = []
    for index, call in enumerate(calls):
        function = call["function"]
        head = {"index": index, "id": call["id"], "type": "function", "function": {"name": function["name"]}}
        deltas.append({"tool_calls": [{**head, "function": {**head["function"], "arguments": ""}}]})
        half = len(function["arguments"]) // 2
        for piece in (function["arguments"][:half], function["arguments"][half:]):
            deltas.append({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
    return deltas


# -- the Responses API ------------------------------------------------------------------------------


def _parts(content: Any) -> Any:
    if not isinstance(content, list):
        return content
    parts = []
    for part in content:
        kind = part.get("type") if isinstance(part, dict) else None
        if kind in ("input_text", "output_text"):
            parts.append({"type": "text", "text": part.get("text", "")})
        elif kind == "input_image":
            parts.append({"type": "image_url", "image_url": {"url": part.get("image_url", "")}})
    return parts


def chat_view(data: dict[str, Any]) -> dict[str, Any]:
    """A Responses request seen as a chat request, for the checks the fake makes on either."""
    messages: list[dict[str, Any]] = []
    if isinstance(data.get("instructions"), str):
        messages.append({"role": "system", "content": data["instructions"]})
    given = data.get("input")
    if isinstance(given, str):
        messages.append({"role": "user", "content": given})
    for item in given if isinstance(given, list) else ():
        if isinstance(item, dict) and "role" in item:
            messages.append({"role": item["role"], "content": _parts(item.get("content"))})
    cap = data.get("max_output_tokens")
    return {**data, "messages": messages, **({"max_tokens": cap} if isinstance(cap, int) else {})}


def response_object(
    model: str, answer: str, calls: list[dict[str, Any]], usage: dict[str, Any], status: str = "completed"
) -> dict[str, Any]:
    output: list[dict[str, Any]] = []
    if answer or not calls:
        content = [{"type": "output_text", "text": answer, "annotations": [], "logprobs": []}]
        output.append(
            {"type": "message", "id": f"msg_{next(_ids)}", "status": status, "role": "assistant", "content": content}
        )
    for call in calls:
        function = call["function"]
        output.append(
            {
                "type": "function_call",
                "id": f"fc_{next(_ids)}",
                "call_id": call["id"],
                "name": function["name"],
                "arguments": function["arguments"],
                "status": "completed",
            }
        )
    return {
        "id": f"resp_{next(_ids)}",
        "object": "response",
        "created_at": int(time.time()),
        "status": status,
        "model": model,
        "output": output,
        "usage": {
            "input_tokens": usage["prompt_tokens"],
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": usage["completion_tokens"],
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": usage["total_tokens"],
        },
        "error": None,
        "incomplete_details": None,
    }


def response_events(final: dict[str, Any]) -> list[dict[str, Any]]:
    """The event sequence OpenAI streams for a response: created, each item's deltas, completed."""
    opening = {**final, "status": "in_progress", "output": [], "usage": None}
    events: list[dict[str, Any]] = [
        {"type": "response.created", "response": opening},
        {"type": "response.in_progress", "response": opening},
    ]
    for index, item in enumerate(final["output"]):
        if item["type"] == "message":
            text = item["content"][0]["text"]
            events.append(
                {"type": "response.output_item.added", "output_index": index, "item": {**item, "content": []}}
            )
            where = {"item_id": item["id"], "output_index": index, "content_index": 0}
            empty = {"type": "output_text", "text": "", "annotations": []}
            events.append({"type": "response.content_part.added", **where, "part": empty})
            for word in text.split(" "):
                piece = word if word == text.split(" ")[0] else " " + word
                events.append({"type": "response.output_text.delta", **where, "delta": piece, "logprobs": []})
            events.append({"type": "response.output_text.done", **where, "text": text, "logprobs": []})
            events.append({"type": "response.content_part.done", **where, "part": item["content"][0]})
        else:
            events.append(
                {"type": "response.output_item.added", "output_index": index, "item": {**item, "arguments": ""}}
            )
            where = {"item_id": item["id"], "output_index": index}
            events.append({"type": "response.function_call_arguments.delta", **where, "delta": item["arguments"]})
            events.append({"type": "response.function_call_arguments.done", **where, "arguments": item["arguments"]})
        events.append({"type": "response.output_item.done", "output_index": index, "item": item})
    events.append({"type": "response.completed", "response": final})
    return [{**event, "sequence_number": number} for number, event in enumerate(events)]


async def stream_events(
    writer: asyncio.StreamWriter, events: list[dict[str, Any]], headers: dict[str, str], drop: bool = False
) -> bool:
    """Write events as a chunked `text/event-stream` (`event:` and `data:` lines); `drop` hangs up
    after the first two, as a connection lost mid-stream."""
    head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\n"
    head += "transfer-encoding: chunked\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    writer.write(head.encode("latin-1") + b"\r\n")
    for index, event in enumerate(events):
        frame = f"event: {event['type']}\n".encode() + b"data: " + orjson.dumps(event) + b"\n\n"
        writer.write(b"%x\r\n%s\r\n" % (len(frame), frame))
        await writer.drain()
        if drop and index == 1:
            return False
    writer.write(b"0\r\n\r\n")
    await writer.drain()
    return True
