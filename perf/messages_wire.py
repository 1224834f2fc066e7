"""What the Messages API's translation costs per request, beside the panel it wraps: a Claude Code-sized
request (a 15 KB system prompt, 40 tools with schemas, a 60-turn conversation of tool uses and
results, and optionally one ~1 MB base64 image) read as the panel's chat request, and a reply written
back as a Message and as Anthropic's event stream (bench/panels/messages.py, server/routes/messages.py).
Pure functions, timed in-process; prints a markdown table for docs/BENCHMARKS.md "Messages API".

    python -m perf.messages_wire [--runs 200]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from typing import Any

import orjson

from benchwarmers.bench.panels.messages import chat_request, message_object
from benchwarmers.server.routes.messages import MESSAGES_WIRE


def request(image: bool) -> dict[str, Any]:
    schema = {"type": "object", "properties": {f"p{i}": {"type": "string", "description": "x" * 80} for i in range(6)}}
    tools = [{"name": f"tool_{i}", "description": "d" * 400, "input_schema": schema} for i in range(40)]
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Fix the failing test in tests/test_x.py."}]
    for turn in range(30):
        call = {"type": "tool_use", "id": f"toolu_{turn}", "name": f"tool_{turn % 40}", "input": {"p0": "a" * 200}}
        messages.append({"role": "assistant", "content": [{"type": "text", "text": "Looking."}, call]})
        result = {"type": "tool_result", "tool_use_id": f"toolu_{turn}", "content": "line\n" * 400}
        messages.append({"role": "user", "content": [result]})
    if image:
        png = {"type": "base64", "media_type": "image/png", "data": "A" * 1_000_000}
        messages.append({"role": "user", "content": [{"type": "image", "source": png}, {"type": "text", "text": "?"}]})
    return {
        "model": "bench/reviewers",
        "max_tokens": 4096,
        "system": "s" * 15_000,
        "tools": tools,
        "messages": messages,
    }


def reply(calls: int) -> Any:
    tool_calls = [
        {
            "id": f"call_{i}",
            "type": "function",
            "function": {"name": "tool_1", "arguments": '{"p0": "' + "b" * 300 + '"}'},
        }
        for i in range(calls)
    ]
    seats = [{"call": f"p1.member{i}", "alias": f"m{i}", "answer": "a" * 4_000, "status": "ok"} for i in range(4)]
    message = {"role": "assistant", "content": "Done: " + "c" * 2_000, "tool_calls": tool_calls}
    return {
        "model": "bench/reviewers",
        "choices": [{"message": message, "finish_reason": "tool_calls"}],
        "usage": {"prompt_tokens": 40_000, "completion_tokens": 900, "total_tokens": 40_900},
        "bench": {"panel": "p1", "seats": seats},
    }


def median_us(work: Callable[[], object], runs: int) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        work()
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=200)
    runs = parser.parse_args().runs
    print("| step | request | median µs |")
    print("|---|---|---:|")
    for image in (False, True):
        body = request(image)
        size = len(orjson.dumps(body))
        label = f"{size / 1e6:.2f} MB{' with an image' if image else ''}"
        print(f"| Messages request → chat request | {label} | {median_us(lambda b=body: chat_request(b), runs):,.0f} |")
    answer = reply(2)
    body_us = median_us(lambda: orjson.dumps(message_object(answer)), runs)
    print(f"| reply → Message (JSON) | 2 tool uses | {body_us:,.0f} |")
    frames_us = median_us(lambda: MESSAGES_WIRE.frames(answer, False), runs)
    print(f"| reply → event stream | 2 tool uses | {frames_us:,.0f} |")


if __name__ == "__main__":
    main()
