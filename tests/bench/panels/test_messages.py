"""Anthropic's Messages wire read as the panel's chat request, block by block (bench/panels/messages.py):
the mappings the SDK tests (tests/e2e/test_clients_anthropic.py) do not reach, and the refusals."""

from __future__ import annotations

import pytest

from benchwarmers.bench.panels.messages import chat_request, content_blocks
from benchwarmers.errors import InvalidRequest

PNG = {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}


def test_tool_results_come_first_with_their_images_after_and_errors_marked():
    chat = chat_request(
        {
            "model": "bench/x",
            "messages": [
                {"role": "user", "content": "Look."},
                {
                    "role": "assistant",
                    "content": [
                        {"type": "thinking", "thinking": "hmm", "signature": "s"},
                        {"type": "text", "text": "Taking a screenshot."},
                        {"type": "tool_use", "id": "toolu_1", "name": "shot", "input": {"w": 1}},
                        {"type": "tool_use", "id": "toolu_2", "name": "ls", "input": {}},
                    ],
                },
                {
                    "role": "user",
                    "content": [
                        {"type": "text", "text": "Here."},
                        {
                            "type": "tool_result",
                            "tool_use_id": "toolu_1",
                            "content": [{"type": "text", "text": "done"}, {"type": "image", "source": PNG}],
                        },
                        {"type": "tool_result", "tool_use_id": "toolu_2", "content": "no such dir", "is_error": True},
                    ],
                },
            ],
        }
    )
    assert chat["messages"] == [
        {"role": "user", "content": "Look."},
        {
            "role": "assistant",
            "content": "Taking a screenshot.",
            "tool_calls": [
                {"id": "toolu_1", "type": "function", "function": {"name": "shot", "arguments": '{"w":1}'}},
                {"id": "toolu_2", "type": "function", "function": {"name": "ls", "arguments": "{}"}},
            ],
        },
        {"role": "tool", "tool_call_id": "toolu_1", "content": "done"},
        {"role": "tool", "tool_call_id": "toolu_2", "content": "Error: no such dir"},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "Here."},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}},
            ],
        },
    ]
    assert chat["bench"] == {"reply": "pick"}


@pytest.mark.parametrize(
    ("choice", "expected", "parallel"),
    [
        ({"type": "auto"}, "auto", None),
        ({"type": "any", "disable_parallel_tool_use": True}, "required", False),
        ({"type": "none"}, "none", None),
        ({"type": "tool", "name": "shot"}, {"type": "function", "function": {"name": "shot"}}, None),
    ],
)
def test_tool_choice_maps_to_chats(choice, expected, parallel):
    tool = {"name": "shot", "input_schema": {"type": "object"}, "cache_control": {"type": "ephemeral"}}
    chat = chat_request(
        {"model": "bench/x", "messages": [{"role": "user", "content": "Hi"}], "tools": [tool], "tool_choice": choice}
    )
    assert chat["tools"] == [{"type": "function", "function": {"name": "shot", "parameters": {"type": "object"}}}]
    assert chat["tool_choice"] == expected
    assert chat.get("parallel_tool_calls") is parallel


def test_the_callers_reply_mode_and_structured_output_and_dropped_fields():
    body = {
        "model": "bench/x:all",
        "messages": [{"role": "user", "content": "Hi"}],
        "top_k": 5,
        "thinking": {"type": "enabled", "budget_tokens": 1024},
        "output_config": {"format": {"type": "json_schema", "schema": {"type": "object"}}, "effort": "low"},
    }
    chat = chat_request(body)
    assert chat == {
        "model": "bench/x:all",
        "messages": [{"role": "user", "content": "Hi"}],
        "response_format": {
            "type": "json_schema",
            "json_schema": {"name": "output", "schema": {"type": "object"}, "strict": True},
        },
    }
    named = chat_request({**body, "model": "bench/x", "bench": {"reply": "merged", "shape": "review"}})
    assert named["bench"] == {"reply": "merged", "shape": "review"}
    assert chat_request({**body, "model": "bench/x", "bench": {"with": ["a/b"]}})["bench"] == {
        "with": ["a/b"],
        "reply": "pick",
    }


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            {"messages": [{"role": "user", "content": "Hi"}], "tools": [{"type": "web_search_20250305", "name": "w"}]},
            "tools[0]: only custom tools ({name, description, input_schema}) reach the seats, not "
            "'web_search_20250305': the seats are other providers' models, without Anthropic's server tools",
        ),
        (
            {"messages": [{"role": "system", "content": "Hi"}]},
            "messages[0] must be an object whose role is user or assistant",
        ),
        ({"messages": []}, "messages must be a non-empty list of user and assistant messages"),
        (
            {
                "messages": [
                    {"role": "user", "content": [{"type": "image", "source": {"type": "file", "file_id": "f"}}]}
                ]
            },
            "messages[0].content[0].source.type must be base64 or url (file sources are not served)",
        ),
        (
            {"messages": [{"role": "assistant", "content": [{"type": "tool_result", "tool_use_id": "t"}]}]},
            "messages[0].content[0]: assistant content blocks may be text, image, tool_use, not 'tool_result'",
        ),
        (
            {"messages": [{"role": "user", "content": "Hi"}], "system": {"text": "x"}},
            "system must be a string or a list of text blocks",
        ),
        (
            {"messages": [{"role": "user", "content": "Hi"}], "tools": [{"name": "t"}], "tool_choice": "auto"},
            'tool_choice must be {"type": "auto"}, {"type": "any"}, {"type": "none"} or {"type": "tool", "name": ...}',
        ),
    ],
)
def test_what_cannot_be_served_is_refused_by_name(body, message):
    with pytest.raises(InvalidRequest) as refused:
        chat_request({"model": "bench/x", **body})
    assert refused.value.message == message


def _reply(message: dict) -> dict:
    return {"choices": [{"message": message, "finish_reason": "tool_calls"}]}


def test_tool_calls_become_tool_use_blocks_after_the_text():
    call = {"id": "call_1", "type": "function", "function": {"name": "shot", "arguments": '{"w": 1}'}}
    unparsable = {"id": "call_2", "type": "function", "function": {"name": "ls", "arguments": "{w"}}
    blocks = content_blocks(_reply({"role": "assistant", "content": "Sure.", "tool_calls": [call, unparsable]}))
    assert blocks == [
        {"type": "text", "text": "Sure."},
        {"type": "tool_use", "id": "call_1", "name": "shot", "input": {"w": 1}},
        {"type": "tool_use", "id": "call_2", "name": "ls", "input": {}},
    ]
    assert content_blocks(_reply({"role": "assistant", "content": None})) == [{"type": "text", "text": ""}]
