"""The reply: markdown content with one section per seat and the `bench` object (the server frames
it as server-sent events: `server/sse.py`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, NotRequired, TypedDict

import orjson

from benchwarmers.store.records import SkippedSeat

if TYPE_CHECKING:
    from benchwarmers.bench.core.outcomes import SeatOutcome


class PublicSeat(TypedDict):
    """A seat as the reply names it: who sat, how it went, and the call id to judge it by."""

    call: str
    seat: str  # member | nominee | explorer | standin | merger
    alias: str
    status: str  # ok | empty | error | paced | cooling | retired (the last three: not called)
    seconds: float
    answer: str
    tool_calls: list[dict[str, Any]]  # the function calls it answered with: {id, type, function: {name, arguments}}
    error: str
    frees_at: float | None  # paced or cooling: when the model may be called again (epoch seconds)
    truncated_at: int | None  # the answer cap cut `answer` to its first this many bytes (UTF-8)
    truncated: str | None  # `length`: the answer stopped at its token limit (finish_reason: length)
    stands_in_for: NotRequired[str]  # a stand-in seat only: the member whose place it took


class PublicMerger(PublicSeat):
    """The merger's call in a merged reply: a seat, plus the order it saw the answers in and why it was chosen."""

    order: list[str]
    chosen_as: str


class ReplyBench(TypedDict):
    """The reply's `bench` object: the panel, every seat, who was skipped, how to judge."""

    panel: str
    collection: str  # bench/<name>
    shape: str
    shape_by: str
    reply: str  # all | merged | pick
    seats: list[PublicSeat]
    skipped: list[SkippedSeat]
    verdict: str  # how to post a verdict
    usage: dict[str, Any]  # each call's own usage by call id (the reply's `usage` is their sum)
    merger: NotRequired[PublicMerger | None]  # merged mode only; None when no merger was called
    picked: NotRequired[PublicPick | None]  # pick mode only; None when no seat answered
    note: NotRequired[str]  # when the reply is not what was asked for, why


class PublicPick(TypedDict):
    """Whose message a pick reply is, and why that seat."""

    call: str
    alias: str
    seat: str
    why: str


class Message(TypedDict):
    role: str
    content: str | None
    tool_calls: NotRequired[list[dict[str, Any]]]


class Choice(TypedDict):
    index: int
    message: Message
    finish_reason: str
    logprobs: None


class Usage(TypedDict):
    prompt_tokens: int
    completion_tokens: int
    total_tokens: int


class ChatCompletion(TypedDict):
    """The reply: an OpenAI chat completion with the `bench` object beside the choices."""

    id: str
    object: str
    created: int
    model: str
    system_fingerprint: None  # a panel is many models: no one fingerprint
    choices: list[Choice]
    usage: Usage
    bench: ReplyBench


def truncated(outcome: SeatOutcome) -> str | None:
    """`length` when the answer stopped at its token limit (`max_tokens`, or the answer cap), else None."""
    return "length" if outcome.status in ("ok", "empty") and outcome.finish_reason == "length" else None


LENGTH_NOTE = "cut by max_tokens (finish_reason: length): the model had more to write"


def seat_public(outcome: SeatOutcome) -> PublicSeat:
    seat: PublicSeat = {
        "call": outcome.call,
        "seat": outcome.seat,
        "alias": outcome.alias,
        "status": outcome.status,
        "seconds": outcome.seconds,
        "answer": outcome.answer,
        "tool_calls": outcome.tool_calls,
        "error": outcome.error,
        "frees_at": outcome.frees_at,
        "truncated_at": outcome.truncated_at,
        "truncated": truncated(outcome),
    }
    if outcome.stands_in_for is not None:
        seat["stands_in_for"] = outcome.stands_in_for
    return seat


def seat_label(seat: PublicSeat) -> str:
    """What a seat is called in the markdown: its kind, or whose place a stand-in took."""
    stood_for = seat.get("stands_in_for")
    return f"stand-in for {stood_for}" if stood_for else seat["seat"]


def cut_note(truncated_at: int) -> str:
    """What a reader is told of an answer the cap cut (the same words everywhere it is shown)."""
    return f"answer cut at {truncated_at:,} bytes by the bench's answer cap (answer_cap_kb): the model wrote more"


def verdict_hint(base_url: str, first_call: str | None) -> str:
    example = {"call": first_call or "<call id>", "useful": True, "note": "", "real": [], "false": []}
    return f"POST {base_url.rstrip('/')}/bench/verdict {orjson.dumps(example).decode()}"


def render_markdown(
    panel_id: str,
    collection: str,
    seats: Sequence[PublicSeat],
    skipped: Sequence[SkippedSeat],
    note: str | None = None,
) -> str:
    """One section per seat: who, how it went, how long, and the call id to judge it by."""
    lines = [f"# bench/{collection} · panel {panel_id}", ""]
    if note:
        lines += [f"> {note}", ""]
    for seat in seats:
        lines.append(f"## {seat_label(seat)} · {seat['alias']} · {seat['status']} · {seat['seconds']:.1f}s")
        lines.append(f"call `{seat['call']}`")
        lines.append("")
        if seat["status"] == "ok":
            if seat["answer"].strip():
                lines.append(seat["answer"].strip())
            lines += [tool_call_line(call) for call in seat.get("tool_calls") or ()]
        elif seat["status"] == "empty":
            lines.append("_(empty answer)_")
        elif seat["status"] == "retired":
            lines.append(f"_{seat['error']}_")
        elif seat["status"] in ("paced", "cooling"):
            lines.append(f"_not called: {seat['error']}_")
        else:
            lines.append(f"_error: {seat['error']}_")
        if seat["truncated_at"] is not None:  # ok or empty (a reply cut before its answer began)
            lines += ["", f"_({cut_note(seat['truncated_at'])})_"]
        elif seat.get("truncated") == "length":
            lines += ["", f"_({LENGTH_NOTE})_"]
        lines.append("")
    for skip in skipped:
        lines.append(f"_skipped {skip['seat']} {skip['alias']}: {skip['why']}_")
    if skipped:
        lines.append("")
    lines.append("Judge each answer you read: POST /bench/verdict with its call id.")
    return "\n".join(lines)


def tool_call_line(call: Mapping[str, Any]) -> str:
    """A tool call as the markdown reply shows it: `→ tool name({...arguments})`."""
    function = call.get("function") or {}
    return f"→ tool call `{function.get('name', '?')}({function.get('arguments', '')})`"


def picked_message(outcome: SeatOutcome) -> tuple[Message, str]:
    """A seat's own message and finish reason, as the model gave them."""
    message: Message = {
        "role": "assistant",
        "content": outcome.answer if outcome.answer or not outcome.tool_calls else None,
    }
    if outcome.tool_calls:
        message["tool_calls"] = outcome.tool_calls
    finish = outcome.finish_reason or ("tool_calls" if outcome.tool_calls else "stop")
    return message, finish


def render_merged(answer: str, merger: PublicSeat, seats: Sequence[PublicSeat]) -> str:
    """The merger's answer, then who it merged, with the call ids to judge each (the merge too)."""
    lines = [answer.strip(), ""]
    if merger["truncated_at"] is not None:
        lines += [f"_({cut_note(merger['truncated_at'])})_", ""]
    lines += ["---", f"Merged by {merger['alias']} (call `{merger['call']}`) from:"]
    lines += [f"- {s['alias']}{_stood_for(s)} · {s['status']}{_cut(s)} · call `{s['call']}`" for s in seats]
    lines += ["", "Judge each answer you read, and the merge: POST /bench/verdict with its call id."]
    return "\n".join(lines)


def _stood_for(seat: PublicSeat) -> str:
    stood_for = seat.get("stands_in_for")
    return f" (stand-in for {stood_for})" if stood_for else ""


def _cut(seat: PublicSeat) -> str:
    if seat["truncated_at"] is not None:
        return f" · cut at {seat['truncated_at']:,} bytes"
    return " · cut by max_tokens" if seat.get("truncated") == "length" else ""


def sum_usage(usages: Sequence[Mapping[str, Any] | None]) -> Usage:
    def total(key: str) -> int:
        return sum(value for usage in usages if usage and isinstance(value := usage.get(key), int))

    return {
        "prompt_tokens": total("prompt_tokens"),
        "completion_tokens": total("completion_tokens"),
        "total_tokens": total("total_tokens"),
    }


def completion(
    panel_id: str,
    model: str,
    created: float,
    content: str | Message,
    usage: Usage,
    bench: ReplyBench,
    finish_reason: str = "stop",
) -> ChatCompletion:
    """The reply; `content` is the markdown (or merged) text, or a picked seat's own message."""
    message: Message = {"role": "assistant", "content": content} if isinstance(content, str) else content
    return {
        "id": f"chatcmpl-{panel_id}",
        "object": "chat.completion",
        "created": int(created),
        "model": model,
        "system_fingerprint": None,
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason, "logprobs": None}],
        "usage": usage,
        "bench": bench,
    }
