"""The reply: markdown content with one section per seat and the `bench` object (the server frames
it as server-sent events: `server/sse.py`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import orjson

SEAT_FIELDS = ("call", "seat", "alias", "status", "seconds", "answer", "error")


def seat_public(outcome: Any) -> dict[str, Any]:
    return {name: getattr(outcome, name) for name in SEAT_FIELDS}


def verdict_hint(base_url: str, first_call: str | None) -> str:
    example = {"call": first_call or "<call id>", "useful": True, "note": "", "real": [], "false": []}
    return f"POST {base_url.rstrip('/')}/bench/verdict {orjson.dumps(example).decode()}"


def render_markdown(
    panel_id: str,
    collection: str,
    seats: Sequence[dict[str, Any]],
    skipped: Sequence[dict[str, Any]],
    note: str | None = None,
) -> str:
    """One section per seat: who, how it went, how long, and the call id to judge it by."""
    lines = [f"# bench/{collection} · panel {panel_id}", ""]
    if note:
        lines += [f"> {note}", ""]
    for seat in seats:
        lines.append(f"## {seat['seat']} · {seat['alias']} · {seat['status']} · {seat['seconds']:.1f}s")
        lines.append(f"call `{seat['call']}`")
        lines.append("")
        if seat["status"] == "ok":
            lines.append(seat["answer"].strip())
        elif seat["status"] == "empty":
            lines.append("_(empty answer)_")
        else:
            lines.append(f"_error: {seat['error']}_")
        lines.append("")
    for skip in skipped:
        lines.append(f"_skipped {skip['seat']} {skip['alias']}: {skip['why']}_")
    if skipped:
        lines.append("")
    lines.append("Judge each answer you read: POST /bench/verdict with its call id.")
    return "\n".join(lines)


def render_merged(answer: str, merger: dict[str, Any], seats: Sequence[dict[str, Any]]) -> str:
    """The merger's answer, then who it merged, with the call ids to judge each (the merge too)."""
    lines = [answer.strip(), "", "---", f"Merged by {merger['alias']} (call `{merger['call']}`) from:"]
    lines += [f"- {s['alias']} · {s['status']} · call `{s['call']}`" for s in seats]
    lines += ["", "Judge each answer you read, and the merge: POST /bench/verdict with its call id."]
    return "\n".join(lines)


def sum_usage(usages: Sequence[dict[str, Any] | None]) -> dict[str, int]:
    total = {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}
    for usage in usages:
        if not usage:
            continue
        for key in total:
            value = usage.get(key)
            if isinstance(value, int):
                total[key] += value
    return total


def completion(
    panel_id: str, model: str, created: float, content: str, usage: dict[str, int], bench: dict[str, Any]
) -> dict[str, Any]:
    return {
        "id": f"chatcmpl-{panel_id}",
        "object": "chat.completion",
        "created": int(created),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
                "logprobs": None,
            }
        ],
        "usage": usage,
        "bench": bench,
    }
