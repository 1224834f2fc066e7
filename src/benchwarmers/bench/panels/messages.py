"""Anthropic's Messages API, served: a `POST /v1/messages` request read as the panel's chat request,
and the panel's reply (a chat completion, as recorded) written back as a Message or as Anthropic's
event stream. Pure functions: the panel itself runs exactly as for chat completions.

What maps where: `system` (a string or text blocks) becomes the system message; text and image
blocks become chat content parts (an image as a data URL or an https URL, the form chat images
already take, so the same redaction applies); an assistant's `tool_use` blocks become its
`tool_calls` and a user's `tool_result` blocks become `tool` messages; `tools` become function
tools and `tool_choice` auto/any/tool/none becomes auto/required/a function/none. A collection
answers in `pick` semantics unless the model name or `bench.reply` asks for another mode.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

import orjson

from benchwarmers.bench.core.estimate import PromptSize, Ratios
from benchwarmers.bench.panels import parse as req
from benchwarmers.bench.panels.parse import SUFFIXES, parse_model_name
from benchwarmers.bench.panels.prepare import resolve_collection
from benchwarmers.bench.panels.reply import ChatCompletion
from benchwarmers.bench.snapshot import Snapshot
from benchwarmers.errors import Forbidden, InvalidRequest

_PASSED = ("model", "stream", "temperature", "top_p", "max_tokens")
# Read and dropped: no chat-completions field carries them to the seats. `metadata.user_id` is
# Anthropic's end-user id (Claude Code sends its account and session in it): not for other providers.
_IGNORED = (
    "top_k",
    "thinking",
    "service_tier",
    "container",
    "context_management",
    "cache_control",
    "speed",
    "metadata",
)
STOP_REASONS = {"stop": "end_turn", "length": "max_tokens", "tool_calls": "tool_use", "content_filter": "refusal"}
CUSTOM_TOOL = (None, "custom")


def _refuse(message: str, param: str) -> InvalidRequest:
    return InvalidRequest(message, param=param, code="unsupported_messages_field")


def _text_of(blocks: Any, where: str) -> str:
    """A string, or text blocks joined by blank lines (what `system` and a tool result may be)."""
    if isinstance(blocks, str):
        return blocks
    if not isinstance(blocks, list):
        raise InvalidRequest(f"{where} must be a string or a list of text blocks", param=where)
    texts = []
    for index, block in enumerate(blocks):
        if not isinstance(block, dict) or block.get("type") != "text" or not isinstance(block.get("text"), str):
            raise InvalidRequest(f"{where}[{index}] must be a text block ({{type: text, text}})", param=where)
        texts.append(block["text"])
    return "\n\n".join(texts)


def _image(block: Mapping[str, Any], where: str) -> dict[str, Any]:
    source = block.get("source")
    kind = source.get("type") if isinstance(source, dict) else None
    if kind == "base64" and isinstance(source, dict):
        media, data = source.get("media_type"), source.get("data")
        if not isinstance(media, str) or not media.startswith("image/") or not isinstance(data, str) or not data:
            raise InvalidRequest(
                f"{where}.source: a base64 image needs media_type (image/png, image/jpeg, ...) and data", param=where
            )
        return {"type": "image_url", "image_url": {"url": f"data:{media};base64,{data}"}}
    if kind == "url" and isinstance(source, dict) and isinstance(source.get("url"), str):
        return {"type": "image_url", "image_url": {"url": source["url"]}}
    raise _refuse(f"{where}.source.type must be base64 or url (file sources are not served)", where)


def _tool_result(block: Mapping[str, Any], where: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A `tool_result` block as a chat `tool` message, and the images it held (they follow as user content:
    a chat tool message carries text only)."""
    tool_use_id = block.get("tool_use_id")
    if not isinstance(tool_use_id, str) or not tool_use_id:
        raise InvalidRequest(f"{where}.tool_use_id must name the tool_use block it answers", param=where)
    content = block.get("content")
    texts: list[str] = []
    images: list[dict[str, Any]] = []
    if isinstance(content, str):
        texts.append(content)
    elif isinstance(content, list):
        for index, part in enumerate(content):
            kind = part.get("type") if isinstance(part, dict) else None
            if kind == "text" and isinstance(part, dict) and isinstance(part.get("text"), str):
                texts.append(part["text"])
            elif kind == "image" and isinstance(part, dict):
                images.append(_image(part, f"{where}.content[{index}]"))
            else:
                at = f"{where}.content[{index}]"
                raise _refuse(f"{at}: a tool result holds text and image blocks, not {kind!r}", where)
    elif content is not None:
        raise InvalidRequest(f"{where}.content must be a string or a list of blocks", param=where)
    text = "\n\n".join(texts)
    if block.get("is_error") is True:
        text = f"Error: {text}" if text else "Error"
    return {"role": "tool", "tool_call_id": tool_use_id, "content": text}, images


def _tool_call(block: Mapping[str, Any], where: str) -> dict[str, Any]:
    if not isinstance(block.get("id"), str) or not isinstance(block.get("name"), str):
        raise InvalidRequest(f"{where}: a tool_use block needs id and name", param=where)
    given = block.get("input")
    arguments = orjson.dumps(given if given is not None else {}).decode()
    return {"id": block["id"], "type": "function", "function": {"name": block["name"], "arguments": arguments}}


def _joined(parts: list[dict[str, Any]]) -> Any:
    """Text parts as one string (what every provider takes); with an image, the parts as they are."""
    if all(p["type"] == "text" for p in parts):
        return "\n\n".join(p["text"] for p in parts)
    return parts


def _message(message: Any, index: int) -> list[dict[str, Any]]:
    """One Anthropic message as chat messages: tool results first (each its own `tool` message), then the rest."""
    where = f"messages[{index}]"
    if not isinstance(message, dict) or message.get("role") not in ("user", "assistant"):
        raise InvalidRequest(f"{where} must be an object whose role is user or assistant", param="messages")
    role, content = message["role"], message.get("content")
    if isinstance(content, str):
        return [{"role": role, "content": content}]
    if not isinstance(content, list):
        raise InvalidRequest(f"{where}.content must be a string or a list of content blocks", param="messages")
    parts: list[dict[str, Any]] = []
    tools: list[dict[str, Any]] = []
    calls: list[dict[str, Any]] = []
    for number, block in enumerate(content):
        at = f"{where}.content[{number}]"
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "text" and isinstance(block, dict) and isinstance(block.get("text"), str):
            parts.append({"type": "text", "text": block["text"]})
        elif kind == "image" and isinstance(block, dict):
            parts.append(_image(block, at))
        elif kind == "tool_use" and role == "assistant" and isinstance(block, dict):
            calls.append(_tool_call(block, at))
        elif kind == "tool_result" and role == "user" and isinstance(block, dict):
            tool, images = _tool_result(block, at)
            tools.append(tool)
            parts += images
        elif kind in ("thinking", "redacted_thinking") and role == "assistant":
            continue  # a model's own reasoning, replayed by the client: the seats did not write it
        else:
            raise _refuse(
                f"{at}: {role} content blocks may be text, image"
                f"{', tool_use' if role == 'assistant' else ', tool_result'}, not {kind!r}",
                "messages",
            )
    if role == "assistant":
        text = "\n\n".join(p["text"] for p in parts if p["type"] == "text")
        assistant: dict[str, Any] = {"role": "assistant", "content": text if text or not calls else None}
        if calls:
            assistant["tool_calls"] = calls
        return [assistant]
    return [*tools, *([{"role": "user", "content": _joined(parts)}] if parts or not tools else [])]


def _tools(tools: Any) -> list[dict[str, Any]]:
    if not isinstance(tools, list):
        raise InvalidRequest("tools must be a list of tools ({name, description, input_schema})", param="tools")
    found = []
    for index, tool in enumerate(tools):
        kind = tool.get("type") if isinstance(tool, dict) else None
        if not isinstance(tool, dict) or kind not in CUSTOM_TOOL or not isinstance(tool.get("name"), str):
            raise _refuse(
                f"tools[{index}]: only custom tools ({{name, description, input_schema}}) reach the seats, "
                f"not {kind!r}: the seats are other providers' models, without Anthropic's server tools",
                "tools",
            )
        function: dict[str, Any] = {"name": tool["name"]}
        if isinstance(tool.get("description"), str):
            function["description"] = tool["description"]
        function["parameters"] = tool.get("input_schema") or {"type": "object"}
        found.append({"type": "function", "function": function})
    return found


def _tool_choice(choice: Any) -> tuple[Any, bool]:
    """The chat tool_choice, and whether parallel tool calls stay allowed."""
    kind = choice.get("type") if isinstance(choice, dict) else None
    parallel = not (isinstance(choice, dict) and choice.get("disable_parallel_tool_use") is True)
    if kind in ("auto", "none"):
        return kind, parallel
    if kind == "any":
        return "required", parallel
    if kind == "tool" and isinstance(choice, dict) and isinstance(choice.get("name"), str):
        return {"type": "function", "function": {"name": choice["name"]}}, parallel
    raise InvalidRequest(
        'tool_choice must be {"type": "auto"}, {"type": "any"}, {"type": "none"} or {"type": "tool", "name": ...}',
        param="tool_choice",
    )


def _picked_by_default(body: Mapping[str, Any]) -> Any:
    """The `bench` options with reply `pick` unless the caller chose a mode (an agent reads one message)."""
    options = body.get("bench")
    name = parse_model_name(body.get("model"))
    if name is not None and name.suffix in SUFFIXES:
        return options
    if options is None:
        return {"reply": "pick"}
    if isinstance(options, dict) and options.get("reply") is None:
        return {**options, "reply": "pick"}
    return options  # the caller's own (parse.parse_options refuses what is not an object)


def chat_request(body: Mapping[str, Any]) -> dict[str, Any]:
    """A Messages request (or a count_tokens one) as the panel's chat request; a clear 400 for what
    cannot be served."""
    chat: dict[str, Any] = {key: body[key] for key in _PASSED if key in body}
    if (options := _picked_by_default(body)) is not None:
        chat["bench"] = options
    messages: list[dict[str, Any]] = []
    system = body.get("system")
    if system is not None and (text := _text_of(system, "system")):
        messages.append({"role": "system", "content": text})
    given = body.get("messages")
    if not isinstance(given, list) or not given:
        raise InvalidRequest("messages must be a non-empty list of user and assistant messages", param="messages")
    for index, message in enumerate(given):
        messages += _message(message, index)
    chat["messages"] = messages
    if body.get("tools"):
        chat["tools"] = _tools(body["tools"])
        if body.get("tool_choice") is not None:
            chat["tool_choice"], parallel = _tool_choice(body["tool_choice"])
            if not parallel:
                chat["parallel_tool_calls"] = False
    stops = body.get("stop_sequences")
    if stops is not None:
        if not isinstance(stops, list) or not all(isinstance(s, str) for s in stops):
            raise InvalidRequest("stop_sequences must be a list of strings", param="stop_sequences")
        if stops:
            chat["stop"] = stops
    if (fmt := _response_format(body)) is not None:
        chat["response_format"] = fmt
    return chat


def _response_format(body: Mapping[str, Any]) -> dict[str, Any] | None:
    """Structured output (`output_config.format`, or the older top-level `output_format`) as a chat
    `json_schema` response_format: the pick then gives a seat whose answer validates."""
    config = body.get("output_config")
    fmt = config.get("format") if isinstance(config, dict) else body.get("output_format")
    if fmt is None:
        return None
    if not isinstance(fmt, dict) or fmt.get("type") != "json_schema" or not isinstance(fmt.get("schema"), dict):
        raise InvalidRequest(
            'output_config.format must be {"type": "json_schema", "schema": {...}}', param="output_config.format"
        )
    return {"type": "json_schema", "json_schema": {"name": "output", "schema": fmt["schema"], "strict": True}}


def prompt_tokens(
    snapshot: Snapshot, chat: dict[str, Any], ratios: Ratios | None, allowed: Collection[str] | None
) -> int:
    """`count_tokens`: the bench's estimate of the request (tools' definitions counted as text), the
    largest of its members' own (what their context windows are held to); nothing is called. A key
    may count only for the collections it may call (`allowed`; None: every one)."""
    collection, _ = resolve_collection(snapshot, chat.get("model"))
    if allowed is not None and collection["name"] not in allowed:
        raise Forbidden(
            f"this gateway key may not call bench/{collection['name']}", param="model", code="collection_not_allowed"
        )
    content = req.read_content(req.check_messages(chat))
    if chat.get("tools"):
        content.add_text(orjson.dumps(chat["tools"]).decode())
    default = req.estimate_tokens(content.text_chars, content.images, content.kind)
    size = PromptSize.of(content.text_chars, content.images, content.kind, default, ratios)
    return max((size.tokens_for(alias) for alias in collection["members"]), default=default)


# -- the reply ----------------------------------------------------------------------------------------


def _input_of(arguments: str) -> dict[str, Any]:
    try:
        parsed = orjson.loads(arguments or "{}")
    except orjson.JSONDecodeError:
        return {}  # the pick chose a seat whose arguments do not parse only when none did (bench.note says so)
    return parsed if isinstance(parsed, dict) else {}


def content_blocks(reply: ChatCompletion) -> list[dict[str, Any]]:
    """The reply's text (when there is any, or when there is nothing else) and tool calls as blocks."""
    message = reply["choices"][0]["message"]
    text = message.get("content")
    calls = message.get("tool_calls") or []
    blocks: list[dict[str, Any]] = []
    if text or not calls:
        blocks.append({"type": "text", "text": text or ""})
    for call in calls:
        function = call["function"]
        blocks.append(
            {"type": "tool_use", "id": call["id"], "name": function["name"], "input": _input_of(function["arguments"])}
        )
    return blocks


def _usage(reply: ChatCompletion) -> dict[str, int]:
    usage = reply["usage"]
    return {"input_tokens": usage["prompt_tokens"], "output_tokens": usage["completion_tokens"]}


def message_object(reply: ChatCompletion) -> dict[str, Any]:
    """The panel's reply as a Message, with `bench` beside the content as in a chat completion."""
    finish = reply["choices"][0]["finish_reason"]
    return {
        "id": f"msg_{reply['bench']['panel']}",
        "type": "message",
        "role": "assistant",
        "model": reply["model"],
        "content": content_blocks(reply),
        "stop_reason": STOP_REASONS.get(finish, "end_turn"),
        "stop_sequence": None,
        "usage": _usage(reply),
        "bench": reply["bench"],
    }


def message_events(reply: ChatCompletion) -> list[dict[str, Any]]:
    """Anthropic's event sequence for a finished panel: message_start, then each block's start, delta
    (text_delta or input_json_delta) and stop, then message_delta (stop_reason, usage) and message_stop.
    `bench` rides on message_start and message_delta."""
    final = message_object(reply)
    opening = {**final, "content": [], "stop_reason": None, "usage": {**final["usage"], "output_tokens": 0}}
    events: list[dict[str, Any]] = [{"type": "message_start", "message": opening}]
    for index, block in enumerate(final["content"]):
        if block["type"] == "text":
            empty = {"type": "text", "text": ""}
            events.append({"type": "content_block_start", "index": index, "content_block": empty})
            if block["text"]:
                delta = {"type": "text_delta", "text": block["text"]}
                events.append({"type": "content_block_delta", "index": index, "delta": delta})
        else:
            events.append({"type": "content_block_start", "index": index, "content_block": {**block, "input": {}}})
            delta = {"type": "input_json_delta", "partial_json": orjson.dumps(block["input"]).decode()}
            events.append({"type": "content_block_delta", "index": index, "delta": delta})
        events.append({"type": "content_block_stop", "index": index})
    events.append(
        {
            "type": "message_delta",
            "delta": {"stop_reason": final["stop_reason"], "stop_sequence": None},
            "usage": final["usage"],
            "bench": final["bench"],
        }
    )
    events.append({"type": "message_stop"})
    return events
