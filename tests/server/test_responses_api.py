"""The Responses API both ways: `POST /v1/responses` served over the same panel as chat
completions (the `openai` SDK, plain and streamed), and upstreams of kind `responses` seated."""

from __future__ import annotations

import json

import httpx2
import pytest
from openai import BadRequestError, OpenAI

from tests.support.agents_fixtures import CITY, CITY_SCHEMA, agents_bench  # noqa: F401

PNG = (
    "data:image/png;base64,"
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)
FUNCTION = {
    "type": "function",
    "name": "get_weather",
    "description": "The weather in a city",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
}


@pytest.fixture(scope="module")
def both(agents_bench):  # noqa: F811
    return agents_bench


@pytest.fixture(scope="module")
def sdk(both) -> OpenAI:
    return OpenAI(base_url=both[1].v1, api_key="not-needed-on-loopback", max_retries=0, timeout=30)


def test_a_plain_response_carries_the_panel_and_bench(both, sdk):
    fake, bench = both
    fake.clear()
    response = sdk.responses.create(model="bench/chatty", input="Weather in Paris?", instructions="Be brief.")
    assert response.status == "completed"
    assert response.output_text.startswith("# bench/chatty · panel ")
    extra = response.model_extra["bench"]
    assert response.id == f"resp_{extra['panel']}"
    assert [s["alias"] for s in extra["seats"]] == ["fake/talker", "fake/jsoner"]
    assert response.usage.total_tokens == sum(u["total_tokens"] for u in extra["usage"].values())
    # The seats were asked as chat completions: instructions as the system message.
    sent = {r.json["model"]: r.json["messages"] for r in fake.chat_requests}
    assert sent["talker"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Weather in Paris?"},
    ]
    # Recorded like any panel: the call log has it, and a replay with the same key returns it.
    assert httpx2.get(f"{bench.url}/bench/panels/{extra['panel']}").json()["collection"] == "chatty"


def test_text_format_json_schema_gives_the_valid_seats_json(sdk):
    fmt = {"type": "json_schema", "name": "city", "schema": CITY_SCHEMA, "strict": True}
    response = sdk.responses.create(model="bench/json", input="Which city?", text={"format": fmt})
    assert json.loads(response.output_text) == CITY
    assert response.model_extra["bench"]["picked"]["alias"] == "fake/jsoner"
    assert response.text.format.type == "json_schema"


def test_function_tools_come_back_as_function_call_items(sdk):
    response = sdk.responses.create(model="bench/tools", input="Weather in Paris?", tools=[FUNCTION])
    [item] = response.output
    assert (item.type, item.name, json.loads(item.arguments)) == ("function_call", "get_weather", CITY)
    assert item.call_id.startswith("call_")
    # The tool's result goes back as input items, and reaches the seats as chat tool messages.
    follow = sdk.responses.create(
        model="bench/chatty",
        input=[
            {"role": "user", "content": "Weather in Paris?"},
            {"type": "function_call", "call_id": item.call_id, "name": item.name, "arguments": item.arguments},
            {"type": "function_call_output", "call_id": item.call_id, "output": "sunny"},
        ],
        tools=[FUNCTION],
    )
    assert follow.output_text == "It is sunny in Paris."


def test_input_images_reach_the_seats_as_image_parts(both, sdk):
    fake, _ = both
    fake.clear()
    content = [{"type": "input_text", "text": "What is this?"}, {"type": "input_image", "image_url": PNG}]
    sdk.responses.create(model="bench/chatty:all", input=[{"role": "user", "content": content}])
    [talker] = [r for r in fake.chat_requests if r.json["model"] == "talker"]
    assert talker.json["messages"] == [
        {
            "role": "user",
            "content": [{"type": "text", "text": "What is this?"}, {"type": "image_url", "image_url": {"url": PNG}}],
        }
    ]


def test_streaming_sends_the_responses_event_sequence_after_pings(both):
    _, bench = both
    body = {"model": "bench/chatty:pick", "input": "Weather?", "stream": True}
    with httpx2.stream("POST", f"{bench.v1}/responses", json=body, timeout=30) as response:
        assert response.headers["content-type"].startswith("text/event-stream")
        text = response.read().decode()
    assert text.startswith(": ping\n\n")
    events = [json.loads(block.split("\ndata: ", 1)[1]) for block in text.split("\n\n") if block.startswith("event:")]
    assert [e["type"] for e in events] == [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.content_part.added",
        "response.output_text.delta",
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
        "response.completed",
    ]
    assert [e["sequence_number"] for e in events] == list(range(9))
    assert events[4]["delta"] == "It is sunny in Paris."
    assert events[-1]["response"]["bench"]["picked"]["alias"] == "fake/talker"


def test_the_sdk_stream_reads_text_deltas_and_the_completed_response(sdk):
    deltas, final = [], None
    with sdk.responses.stream(model="bench/chatty:pick", input="Weather?") as stream:
        for event in stream:
            if event.type == "response.output_text.delta":
                deltas.append(event.delta)
        final = stream.get_final_response()
    assert "".join(deltas) == "It is sunny in Paris."
    assert final.output_text == "It is sunny in Paris."


def test_what_cannot_be_served_is_a_clear_400(sdk):
    with pytest.raises(BadRequestError) as refused:
        sdk.responses.create(model="bench/chatty", input="again", previous_response_id="resp_123")
    assert refused.value.body["param"] == "previous_response_id"
    assert "Send the whole conversation in input" in refused.value.body["message"]
    with pytest.raises(BadRequestError) as refused:
        sdk.responses.create(model="bench/chatty", input="hi", tools=[{"type": "web_search"}])
    assert refused.value.body["message"] == (
        'tools[0]: only function tools ({"type": "function", "name": ...}) reach the seats, not \'web_search\''
    )


# -- the Responses API, called: a `responses` endpoint seats its models -----------------------------


def test_a_responses_endpoint_seats_a_model_and_its_failures_show_like_chat_ones(both, sdk):
    fake, bench = both
    fake.clear()
    reply = sdk.chat.completions.create(model="bench/relay", messages=[{"role": "user", "content": "Hello?"}])
    talker, down = reply.model_extra["bench"]["seats"]
    assert (talker["alias"], talker["status"], talker["answer"]) == (
        "relay/r-talker",
        "ok",
        "Bonjour from the Responses API.",
    )
    assert (down["alias"], down["status"]) == ("relay/r-down", "error")
    assert down["error"] == "upstream error (503): The server is overloaded or not ready yet."
    sent = [r for r in fake.requests if r.path == "/v1/responses"]
    assert sorted(r.json["model"] for r in sent) == ["r-down", "r-talker"]
    assert sent[0].json["input"] == [{"role": "user", "content": [{"type": "input_text", "text": "Hello?"}]}]
    assert sent[0].headers["authorization"] == "Bearer sk-test-responses-0001"
    assert talker["call"] in reply.model_extra["bench"]["usage"]
    logged = httpx2.get(f"{bench.url}/bench/panels/{reply.model_extra['bench']['panel']}").json()
    assert [s["status"] for s in logged["seats"]] == ["ok", "error"]


def test_tool_calls_over_the_responses_api_are_a_seats_answer(sdk):
    tool = {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}
    reply = sdk.chat.completions.create(
        model="bench/relaytools", messages=[{"role": "user", "content": "Weather?"}], tools=[tool]
    )
    [call] = reply.choices[0].message.tool_calls
    assert (call.function.name, json.loads(call.function.arguments)) == ("get_weather", CITY)
    assert reply.model_extra["bench"]["picked"]["alias"] == "relay/r-tooler"


def test_a_failed_response_is_a_failed_seat(sdk):
    reply = sdk.chat.completions.create(model="bench/relayfail", messages=[{"role": "user", "content": "Hello?"}])
    [seat] = reply.model_extra["bench"]["seats"]
    assert (seat["status"], seat["error"]) == (
        "error",
        "upstream error (502): The model failed to generate a response.",
    )


def test_a_replay_of_a_responses_request_is_the_recorded_panel(both):
    fake, bench = both
    body = {"model": "bench/chatty:pick", "input": "Weather, once?"}
    headers = {"Idempotency-Key": "responses-replay-1"}
    first = httpx2.post(f"{bench.v1}/responses", json=body, headers=headers, timeout=30).json()
    fake.clear()
    again = httpx2.post(f"{bench.v1}/responses", json=body, headers=headers, timeout=30).json()
    assert again == first
    assert fake.chat_requests == []


def test_the_fake_responses_endpoint_streams_like_openai(both):
    """The fake is held to the real wire: the openai SDK reads its Responses stream and its errors."""
    fake, _ = both
    direct = OpenAI(base_url=fake.base_url, api_key="sk-test", max_retries=0)
    with direct.responses.stream(model="r-talker", input="Hi") as stream:
        final = stream.get_final_response()
    assert final.output_text == "Bonjour from the Responses API."
    with direct.responses.stream(model="r-tooler", input="Hi", tools=[FUNCTION]) as stream:
        final = stream.get_final_response()
    assert [(i.type, i.name, json.loads(i.arguments)) for i in final.output] == [("function_call", "get_weather", CITY)]
    from openai import InternalServerError

    with pytest.raises(InternalServerError) as failed:
        direct.responses.create(model="r-down", input="Hi")
    assert failed.value.status_code == 503


def test_a_seats_chat_request_becomes_a_responses_request_images_and_tools_included():
    import orjson

    from benchwarmers.upstream.responses_client import responses_request

    chat = {
        "model": "gpt-5",
        "stream": False,
        "max_tokens": 300,
        "messages": [
            {"role": "system", "content": "Be brief."},
            {
                "role": "user",
                "content": [{"type": "text", "text": "What is it?"}, {"type": "image_url", "image_url": {"url": PNG}}],
            },
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": "call_1", "type": "function", "function": {"name": "look", "arguments": '{"x":1}'}}
                ],
            },
            {"role": "tool", "tool_call_id": "call_1", "content": "a chair"},
        ],
        "tools": [{"type": "function", "function": {"name": "look", "parameters": {"type": "object"}}}],
        "tool_choice": {"type": "function", "function": {"name": "look"}},
        "response_format": {"type": "json_schema", "json_schema": {"name": "city", "schema": CITY_SCHEMA}},
    }
    assert orjson.loads(responses_request(orjson.dumps(chat))) == {
        "model": "gpt-5",
        "stream": False,
        "store": False,
        "instructions": "Be brief.",
        "input": [
            {
                "role": "user",
                "content": [{"type": "input_text", "text": "What is it?"}, {"type": "input_image", "image_url": PNG}],
            },
            {"type": "function_call", "call_id": "call_1", "name": "look", "arguments": '{"x":1}'},
            {"type": "function_call_output", "call_id": "call_1", "output": "a chair"},
        ],
        "max_output_tokens": 300,
        "tools": [{"type": "function", "name": "look", "parameters": {"type": "object"}}],
        "tool_choice": {"type": "function", "name": "look"},
        "text": {"format": {"type": "json_schema", "name": "city", "schema": CITY_SCHEMA}},
    }
