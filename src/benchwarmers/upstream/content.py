"""A chat message's content as text, for the APIs that take a message's text alone (the Responses
API's instructions and tool outputs, Anthropic's system prompt and tool results)."""

from __future__ import annotations

from typing import Any


def content_text(content: Any) -> str:
    """A string as it is; of a list of parts, their texts joined; anything else, nothing."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""
