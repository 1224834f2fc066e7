"""The Responses API, served: a `POST /v1/responses` request read as the panel's chat request, and
the panel's reply (a chat completion, as recorded) written back as a Response object or as the
Responses event stream. Pure functions: the panel itself runs exactly as for chat completions.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from benchwarmers.bench.panels.reply import ChatCompletion
from benchwarmers.errors import InvalidRequest

# Fields a Response echoes back from its request.
ECHOED = ("instructions", "tools", "tool_choice", "temperature", "top_p", "max_output_tokens", "metadata")
_PASSED = ("model", "stream", "temperature", "top_p", "parallel_tool_calls", "user", "bench", "seed")
_IGNORED = ("store", "metadata", "reasoning", "truncation", "include", "service_tier", "background", "prompt_cache_key")


def _refuse(message: str, param: str) -> InvalidRequest:
    return InvalidRequest(message, param=param, code="unsupported_responses_field")


def _part(part: Any, where: str) -> dict[str, Any]:
    kind = part.get("type") if isinstance(part, dict) else None
    if kind in ("input_text", "output_text", "text") and isinstance(part.get("text"), str):
        return {"type": "text", "text": part["text"]}
    if kind == "input_image":
        url = part.get("image_url")
        if not isinstance(url, str):
            raise _refuse(
                f"{where}: an input_image needs image_url (https:// or a data URL); file_id is not served", where
            )
        image: dict[str, Any] = {"url": url}
        if isinstance(part.get("detail"), str):
            image["detail"] = part["detail"]
        return {"type": "image_url", "image_url": image}
    raise _refuse(f"{where}: content parts may be input_text or input_image, not {kind!r}", where)


def _content(content: Any, where: str) -> Any:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        raise InvalidRequest(f"{where}.content must be a string or a list of parts", param=where)
    parts = [_part(part, f"{where}.content[{i}]") for i, part in enumerate(content)]
    if all(p["type"] == "text" for p in parts):
        return "".join(p["text"] for p in parts)
    return parts


def _output_text(output: Any) -> str:
    if isinstance(output, str):
        return output
    if isinstance(output, list):
        return "".join(p.get("text", "") for p in output if isinstance(p, dict) and isinstance(p.get("text"), str))
    return ""


def _messages(body: Mapping[str, Any]) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    instructions = body.get("instructions")
    if isinstance(instructions, str) and instructions:
        messages.append({"role": "system", "content": instructions})
    given = body.get("input")
    if isinstance(given, str):
        return [*messages, {"role": "user", "content": given}]
    if not isinstance(given, list) or not given:
        raise InvalidRequest("input must be a string or a non-empty list of input items", param="input")
    for index, item in enumerate(given):
        where = f"input[{index}]"
        if not isinstance(item, dict):
            raise InvalidRequest(f"{where} must be an object", param="input")
        kind = item.get("type", "message")
        if kind == "message":
            role = item.get("role")
            if role not in ("user", "assistant", "system", "developer"):
                raise InvalidRequest(f"{where}.role must be user, assistant, system or developer", param="input")
            messages.append(
                {"role": "system" if role == "developer" else role, "content": _content(item.get("content"), where)}
            )
        elif kind == "function_call":
            call = {
                "id": str(item.get("call_id") or item.get("id") or f"call_{index}"),
                "type": "function",
                "function": {"name": str(item.get("name", "")), "arguments": str(item.get("arguments") or "{}")},
            }
            last = messages[-1] if messages else None
            if last is not None and last["role"] == "assistant" and "tool_calls" in last:
                last["tool_calls"].append(call)
            else:
                messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
        elif kind == "function_call_output":
            tool_call_id = str(item.get("call_id", ""))
            messages.append({"role": "tool", "tool_call_id": tool_call_id, "content": _output_text(item.get("output"))})
        elif kind == "reasoning":
            continue  # a model's own reasoning, replayed by some clients: the seats did not write it
        else:
            raise _refuse(
                f"{where}: input items may be messages, function_call or function_call_output, not {kind!r}", "input"
            )
    return messages


def _tools(tools: Any) -> list[dict[str, Any]]:
    if not isinstance(tools, list):
        raise InvalidRequest("tools must be a list of function tools", param="tools")
    found = []
    for index, tool in enumerate(tools):
        if not isinstance(tool, dict) or tool.get("type") != "function" or not isinstance(tool.get("name"), str):
            kind = tool.get("type") if isinstance(tool, dict) else None
            raise _refuse(
                f'tools[{index}]: only function tools ({{"type": "function", "name": ...}}) reach the seats, '
                f"not {kind!r}",
                "tools",
            )
        function = {
            key: tool[key] for key in ("name", "description", "parameters", "strict") if tool.get(key) is not None
        }
        found.append({"type": "function", "function": function})
    return found


def _tool_choice(choice: Any) -> Any:
    if choice in ("auto", "none", "required"):
        return choice
    if isinstance(choice, dict) and choice.get("type") == "function" and isinstance(choice.get("name"), str):
        return {"type": "function", "function": {"name": choice["name"]}}
    raise InvalidRequest(
        'tool_choice must be auto, none, required or {"type": "function", "name": ...}', param="tool_choice"
    )


def _response_format(text: Any) -> dict[str, Any] | None:
    fmt = text.get("format") if isinstance(text, dict) else None
    if fmt is None:
        return None
    kind = fmt.get("type") if isinstance(fmt, dict) else None
    if kind == "text":
        return None
    if kind == "json_object":
        return {"type": "json_object"}
    if kind == "json_schema" and isinstance(fmt, dict):
        spec = {key: fmt[key] for key in ("name", "schema", "strict", "description") if key in fmt}
        return {"type": "json_schema", "json_schema": spec}
    raise InvalidRequest("text.format.type must be text, json_object or json_schema", param="text.format")


def chat_request(body: Mapping[str, Any]) -> dict[str, Any]:
    """A Responses request as the panel's chat request; a clear 400 for what cannot be served."""
    if body.get("previous_response_id") or body.get("conversation"):
        raise _refuse(
            "previous_response_id and conversation are not served: the bench keeps no conversation. "
            "Send the whole conversation in input.",
            "previous_response_id",
        )
    chat: dict[str, Any] = {key: body[key] for key in _PASSED if key in body}
    chat["messages"] = _messages(body)
    if body.get("tools"):
        chat["tools"] = _tools(body["tools"])
    if "tool_choice" in body and body.get("tools"):
        chat["tool_choice"] = _tool_choice(body["tool_choice"])
    if (fmt := _response_format(body.get("text"))) is not None:
        chat["response_format"] = fmt
    if isinstance(body.get("max_output_tokens"), int):
        chat["max_completion_tokens"] = body["max_output_tokens"]
    return chat


def echoed(body: Mapping[str, Any]) -> dict[str, Any]:
    """What a Response repeats from its request (kept by the route for the reply, replays too)."""
    kept = {key: body.get(key) for key in ECHOED}
    text = body.get("text")
    kept["text"] = text if isinstance(text, dict) else {"format": {"type": "text"}}
    kept["parallel_tool_calls"] = body.get("parallel_tool_calls", True)
    return kept


def _usage(reply: ChatCompletion) -> dict[str, Any]:
    usage = reply["usage"]
    return {
        "input_tokens": usage["prompt_tokens"],
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": usage["completion_tokens"],
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": usage["total_tokens"],
    }


def output_items(reply: ChatCompletion) -> list[dict[str, Any]]:
    """The reply's message (text) and tool calls as Response output items."""
    panel = reply["bench"]["panel"]
    message = reply["choices"][0]["message"]
    items: list[dict[str, Any]] = []
    text = message.get("content")
    calls = message.get("tool_calls") or []
    if text or not calls:
        part = {"type": "output_text", "text": text or "", "annotations": [], "logprobs": []}
        items.append(
            {"type": "message", "id": f"msg_{panel}", "status": "completed", "role": "assistant", "content": [part]}
        )
    for index, call in enumerate(calls):
        items.append(
            {
                "type": "function_call",
                "id": f"fc_{panel}_{index}",
                "call_id": call["id"],
                "name": call["function"]["name"],
                "arguments": call["function"]["arguments"],
                "status": "completed",
            }
        )
    return items


def response_object(reply: ChatCompletion, echo: Mapping[str, Any]) -> dict[str, Any]:
    """The panel's reply as a Response, with `bench` beside the output as in a chat completion."""
    cut = reply["choices"][0]["finish_reason"] == "length"
    return {
        "id": f"resp_{reply['bench']['panel']}",
        "object": "response",
        "created_at": reply["created"],
        "status": "incomplete" if cut else "completed",
        "model": reply["model"],
        "output": output_items(reply),
        "usage": _usage(reply),
        "error": None,
        "incomplete_details": {"reason": "max_output_tokens"} if cut else None,
        "previous_response_id": None,
        "reasoning": None,
        "store": False,
        "truncation": "disabled",
        **echo,
        "metadata": echo.get("metadata") or {},
        "tools": echo.get("tools") or [],
        "tool_choice": echo.get("tool_choice") or "auto",
        "bench": reply["bench"],
    }


def response_events(reply: ChatCompletion, echo: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The Responses event sequence for a finished panel: created, in_progress, each output item
    (text deltas or function-call arguments), completed; numbered by `sequence_number`."""
    final = response_object(reply, echo)
    opening = {**final, "status": "in_progress", "output": [], "usage": None, "incomplete_details": None}
    events: list[dict[str, Any]] = [
        {"type": "response.created", "response": opening},
        {"type": "response.in_progress", "response": opening},
    ]
    for index, item in enumerate(final["output"]):
        if item["type"] == "message":
            part = item["content"][0]
            events.append(
                {
                    "type": "response.output_item.added",
                    "output_index": index,
                    "item": {**item, "status": "in_progress", "content": []},
                }
            )
            where = {"item_id": item["id"], "output_index": index, "content_index": 0}
            events.append({"type": "response.content_part.added", **where, "part": {**part, "text": ""}})
            events.append({"type": "response.output_text.delta", **where, "delta": part["text"], "logprobs": []})
            events.append({"type": "response.output_text.done", **where, "text": part["text"], "logprobs": []})
            events.append({"type": "response.content_part.done", **where, "part": part})
        else:
            events.append(
                {
                    "type": "response.output_item.added",
                    "output_index": index,
                    "item": {**item, "status": "in_progress", "arguments": ""},
                }
            )
            where = {"item_id": item["id"], "output_index": index}
            events.append({"type": "response.function_call_arguments.delta", **where, "delta": item["arguments"]})
            events.append({"type": "response.function_call_arguments.done", **where, "arguments": item["arguments"]})
        events.append({"type": "response.output_item.done", "output_index": index, "item": item})
    events.append(
        {"type": "response.incomplete" if final["status"] == "incomplete" else "response.completed", "response": final}
    )
    return [{**event, "sequence_number": number} for number, event in enumerate(events)]
