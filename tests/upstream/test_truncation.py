"""The salvage of a cut reply (upstream/truncation.py), pure: a body's first bytes made whole JSON
again, cut at a safe point, never inside an escape or a UTF-8 sequence; and an answer cut to the cap."""

from __future__ import annotations

import json

import orjson
import pytest

from benchwarmers.upstream.client import ChatResult, bounded
from benchwarmers.upstream.truncation import cap_text, close_json, read_limit, salvage

HEAD = b'{"id":"c1","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"'


def cut_in(body: bytes, marker: bytes, after: int = 0) -> bytes:
    """`body` cut `after` bytes past the start of `marker`."""
    return body[: body.index(marker) + after]


def message(content: str | None = None, **more: object) -> dict:
    found: dict = {"role": "assistant"}
    if content is not None:
        found["content"] = content
    return {"id": "c1", "object": "chat.completion", "choices": [{"index": 0, "message": {**found, **more}}]}


def test_cut_in_a_plain_run_keeps_every_byte_before_the_cut():
    assert salvage(HEAD + b"The answer is forty") == message("The answer is forty")
    assert close_json(HEAD + b"ab") == HEAD + b'ab"}}]}'


def test_cut_in_an_escape_drops_the_escape_begun():
    body = HEAD + b'line one\\nline \\"two\\" and a \\\\ backslash'
    assert salvage(cut_in(body, b"\\n", 1)) == message("line one")  # after the backslash
    assert salvage(cut_in(body, b"\\n", 2)) == message("line one\n")
    assert salvage(cut_in(body, b'\\"two', 1)) == message("line one\nline ")
    assert salvage(cut_in(body, b'two\\"', 4)) == message('line one\nline "two')
    assert salvage(cut_in(body, b"\\\\", 1)) == message('line one\nline "two" and a ')
    assert salvage(cut_in(body, b"\\\\", 2)) == message('line one\nline "two" and a \\')


def test_cut_in_a_unicode_escape_drops_it_and_a_lone_high_surrogate():
    body = HEAD + b"caf\\u00e9 \\ud83d\\ude00!"
    assert [salvage(cut_in(body, b"\\u00e9", n))["choices"][0]["message"]["content"] for n in range(7)] == [
        "caf", "caf", "caf", "caf", "caf", "caf", "café",
    ]  # fmt: skip
    # The smiley's low half was cut off: its high half alone is not a character.
    assert [salvage(cut_in(body, b"\\ude00", n))["choices"][0]["message"]["content"] for n in range(7)] == [
        "café ", "café ", "café ", "café ", "café ", "café ", "café 😀",
    ]  # fmt: skip
    # An escaped backslash before `ud83d` is text, not an escape: nothing is dropped.
    assert salvage(HEAD + b"\\\\ud83d") == message("\\ud83d")


def test_cut_inside_a_multi_byte_character_drops_the_part_sent():
    body = HEAD + "né 😀!".encode()
    assert [salvage(body[: len(HEAD) + n])["choices"][0]["message"]["content"] for n in range(9)] == [
        "", "n", "n", "né", "né ", "né ", "né ", "né ", "né 😀",
    ]  # fmt: skip


def test_cut_before_the_content_key_leaves_no_content():
    body = orjson.dumps(message("the answer", refusal=None))
    assert salvage(cut_in(body, b'"content"', 4)) == message()  # inside the key
    assert salvage(cut_in(body, b'"content"', 9)) == message()  # after the key
    assert salvage(cut_in(body, b'"content"', 10)) == message()  # after its colon
    assert salvage(cut_in(body, b'"content"', 11)) == message("")  # the string just opened
    assert salvage(cut_in(body, b"null", 2)) == message("the answer")  # a scalar the cut may have shortened
    assert salvage(b'{"id":"c1","choices":[{"ind') == {"id": "c1", "choices": [{}]}


def test_cut_in_a_tool_call_keeps_what_came_before_it():
    call = {"id": "call_1", "type": "function", "function": {"name": "lookup", "arguments": '{"city": "Paris"}'}}
    body = orjson.dumps(message("Let me look.", tool_calls=[call]))
    assert salvage(cut_in(body, b"Paris", 3)) == message(
        "Let me look.",
        tool_calls=[{"id": "call_1", "type": "function", "function": {"name": "lookup", "arguments": '{"city": "Par'}}],
    )
    assert salvage(cut_in(body, b'"type"', 3)) == message("Let me look.", tool_calls=[{"id": "call_1"}])


def test_every_prefix_is_cut_content_or_nothing():
    """Each prefix of a real body gives valid JSON whose content begins the real content, or None."""
    content = 'Tabs\t, quotes ", backslashes \\, é, 日本, 😀 and \\u escapes: \u2028 end'
    for body in (
        orjson.dumps(message(content)),
        json.dumps(message(content)).encode(),  # ASCII with \uXXXX escapes and surrogate pairs
        json.dumps(message(content), indent=2).encode(),
    ):
        got = []
        for n in range(len(body) + 1):
            data = salvage(body[:n])
            assert data is None or isinstance(data, dict), body[:n]
            text = ((data or {}).get("choices") or [{}])[0].get("message", {}).get("content")
            assert text is None or content.startswith(text), body[:n]
            got.append(text)
        assert got[-1] == content
        assert salvage(body) == message(content)


def test_not_json_salvages_nothing():
    assert [salvage(b""), salvage(b"<html>"), salvage(b"}")] == [None, None, None]


def test_cap_text_cuts_at_a_character_boundary():
    assert [cap_text("né😀!", cap) for cap in range(9)] == [
        ("", 0), ("n", 1), ("n", 1), ("né", 3), ("né", 3), ("né", 3), ("né", 3), ("né😀", 7), ("né😀!", None),
    ]  # fmt: skip
    assert cap_text("a" * 100, 100) == ("a" * 100, None)
    assert cap_text("a" * 101, 100) == ("a" * 100, 100)


def test_read_limit_leaves_room_for_escapes_and_the_envelope():
    assert read_limit(1024 * 1024) == 2 * 1024 * 1024 + 64 * 1024


@pytest.mark.parametrize("cut", [False, True])
def test_bounded_marks_the_cut_and_drops_what_a_cut_reply_lost(cut):
    usage = {"prompt_tokens": 1, "completion_tokens": 2, "total_tokens": 3}
    calls = [{"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}]
    result = bounded(ChatResult("é" * 10, usage, 200, {}, 0.1, "m", list(calls), "stop"), 15, cut)
    assert (result.answer, result.truncated_at, result.finish_reason) == ("é" * 7, 14, "length")
    assert (result.tool_calls, result.usage) == (([], None) if cut else (calls, usage))
    whole = bounded(ChatResult("short", usage, 200, {}, 0.1, "m", [], "stop"), 15)
    assert (whole.answer, whole.truncated_at, whole.finish_reason, whole.usage) == ("short", None, "stop", usage)
    # A cut reply is marked even when what it kept fits the cap (escapes took the room).
    short = bounded(ChatResult("short", usage, 200, {}, 0.1, "m", [], "stop"), 15, True)
    assert (short.answer, short.truncated_at, short.finish_reason, short.usage) == ("short", 5, "length", None)
