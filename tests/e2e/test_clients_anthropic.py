"""The client matrix, Anthropic: the `anthropic` Python SDK (pinned in the `clients` extra), unmodified,
against `POST /v1/messages` and `/v1/messages/count_tokens` served over the same panel as chat
completions: a plain message, a streamed one (events in order), a tool-use round trip, images,
count_tokens, errors in Anthropic's shape, and gateway keys in `x-api-key` as well as bearer.
(The TypeScript SDK: tests/e2e/test_clients_node.py.)"""

from __future__ import annotations

import json
from collections.abc import Iterator

import anthropic
import httpx2
import pytest
from anthropic import Anthropic

from benchwarmers.bench.core import estimate as est
from tests.support.agents_fixtures import CITY, CITY_SCHEMA, agents_bench  # noqa: F401
from tests.support.benchserver import BenchServer, add_fake_endpoint, listed

TEXT = "It is sunny in Paris."
PNG_DATA = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
WEATHER = {
    "name": "get_weather",
    "description": "The weather in a city",
    "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
}
WEATHER_FUNCTION = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The weather in a city",
        "parameters": WEATHER["input_schema"],
    },
}


@pytest.fixture(scope="module")
def both(agents_bench):  # noqa: F811
    return agents_bench


@pytest.fixture(scope="module")
def client(both) -> Iterator[Anthropic]:
    # The base URL without /v1, as Claude Code's ANTHROPIC_BASE_URL is given.
    sdk = Anthropic(base_url=both[1].url, api_key="not-needed-on-loopback", max_retries=0, timeout=30)
    yield sdk
    sdk.close()


def sent_to(fake, model: str) -> dict:
    [request] = [r for r in fake.chat_requests if r.json["model"] == model]
    return request.json


def test_a_plain_message_is_the_picked_seats_with_bench_beside_it(both, client):
    fake, bench = both
    fake.clear()
    raw = client.messages.with_raw_response.create(
        model="bench/chatty",
        max_tokens=256,
        system=[{"type": "text", "text": "Be brief."}, {"type": "text", "text": "Answer in English."}],
        messages=[{"role": "user", "content": "Weather in Paris?"}],
        stop_sequences=["\n\n\n"],
        metadata={"user_id": "user-7"},
        extra_body={"temperature": 0.2},  # not a parameter of this SDK any more; older clients send it
    )
    message = raw.parse()
    body = raw.http_response.json()
    extra = body["bench"]
    assert {key: value for key, value in body.items() if key != "bench"} == {
        "id": f"msg_{extra['panel']}",
        "type": "message",
        "role": "assistant",
        "model": "bench/chatty",
        "content": [{"type": "text", "text": TEXT}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {
            "input_tokens": sum(u["prompt_tokens"] for u in extra["usage"].values()),
            "output_tokens": sum(u["completion_tokens"] for u in extra["usage"].values()),
        },
    }
    assert raw.http_response.headers["x-request-id"] == extra["panel"]
    # pick by default on this API: every seat ran, one seat's message is the reply.
    assert (extra["reply"], extra["picked"]["alias"]) == ("pick", "fake/talker")
    assert [s["alias"] for s in extra["seats"]] == ["fake/talker", "fake/jsoner"]
    assert message.content[0].text == TEXT
    assert message.model_extra["bench"]["panel"] == extra["panel"]
    # The seats were asked as chat completions: the system blocks as the system message, the options mapped.
    sent = sent_to(fake, "talker")
    assert {key: sent[key] for key in ("messages", "max_tokens", "stop", "temperature")} == {
        "messages": [
            {"role": "system", "content": "Be brief.\n\nAnswer in English."},
            {"role": "user", "content": "Weather in Paris?"},
        ],
        "max_tokens": 256,
        "stop": ["\n\n\n"],
        "temperature": 0.2,
    }
    assert not {"bench", "metadata", "user", "system"} & set(sent)  # user_id is Anthropic's, not the seats'
    assert "user-7" not in json.dumps(sent)
    # Recorded like any panel.
    assert httpx2.get(f"{bench.url}/bench/panels/{extra['panel']}").json()["reply"] == "pick"


def test_all_and_merged_when_asked(both, client):
    by_suffix = client.messages.create(
        model="bench/chatty:all", max_tokens=64, messages=[{"role": "user", "content": "Weather?"}]
    )
    by_option = client.messages.create(
        model="bench/chatty",
        max_tokens=64,
        messages=[{"role": "user", "content": "Weather?"}],
        extra_body={"bench": {"reply": "all"}},
    )
    for message in (by_suffix, by_option):
        extra = message.model_extra["bench"]
        assert extra["reply"] == "all"
        assert message.content[0].text.startswith(f"# bench/chatty · panel {extra['panel']}")
        assert "picked" not in extra


def test_a_streamed_message_sends_anthropics_events_in_order_after_pings(both, client):
    _, bench = both
    with client.messages.stream(
        model="bench/chatty", max_tokens=64, messages=[{"role": "user", "content": "Weather?"}]
    ) as stream:
        types = [event.type for event in stream]
        final = stream.get_final_message()
    assert types == [
        "message_start",
        "content_block_start",
        "content_block_delta",
        "text",  # the SDK's own event, from the delta
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]
    assert (final.content[0].text, final.stop_reason) == (TEXT, "end_turn")
    assert final.usage.output_tokens > 0
    # The wire itself: ping events first, then each event named as its type.
    body = {"model": "bench/chatty", "max_tokens": 64, "stream": True, "messages": [{"role": "user", "content": "Hi"}]}
    with httpx2.stream("POST", f"{bench.url}/v1/messages", json=body, timeout=30) as response:
        assert response.headers["content-type"].startswith("text/event-stream")
        text = response.read().decode()
    assert text.startswith('event: ping\ndata: {"type":"ping"}\n\n')
    blocks = [block for block in text.split("\n\n") if block and not block.startswith("event: ping")]
    events = []
    for block in blocks:
        name, data = block.split("\n", 1)
        event = json.loads(data.removeprefix("data: "))
        assert name == f"event: {event['type']}"
        events.append(event)
    panel = events[-2]["bench"]["panel"]
    assert events[0]["message"]["bench"] == events[-2]["bench"]
    assert events[0]["message"] | {"bench": None} == {
        "id": f"msg_{panel}",
        "type": "message",
        "role": "assistant",
        "model": "bench/chatty",
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": events[-2]["usage"]["input_tokens"], "output_tokens": 0},
        "bench": None,
    }
    assert events[1:-2] == [
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": TEXT}},
        {"type": "content_block_stop", "index": 0},
    ]
    assert events[-2]["delta"] == {"stop_reason": "end_turn", "stop_sequence": None}
    assert events[-1] == {"type": "message_stop"}


def test_a_tool_use_round_trip(both, client):
    fake, _ = both
    first = client.messages.create(
        model="bench/tools",
        max_tokens=256,
        tools=[WEATHER],
        tool_choice={"type": "any"},
        messages=[{"role": "user", "content": "Weather in Paris?"}],
    )
    [call] = first.content
    assert (call.type, call.name, call.input, first.stop_reason) == ("tool_use", "get_weather", CITY, "tool_use")
    assert first.model_extra["bench"]["picked"]["alias"] == "fake/tooler"  # wrongtool named a tool not offered
    sent = sent_to(fake, "tooler")
    assert (sent["tools"], sent["tool_choice"]) == ([WEATHER_FUNCTION], "required")
    # The assistant's turn goes back as the SDK gives it, the tool's result as a tool_result block.
    fake.clear()
    follow = client.messages.create(
        model="bench/chatty",
        max_tokens=256,
        tools=[WEATHER],
        messages=[
            {"role": "user", "content": "Weather in Paris?"},
            first.to_param(),
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": call.id, "content": [{"type": "text", "text": "sunny"}]},
                    {"type": "text", "text": "And so?"},
                ],
            },
        ],
    )
    assert follow.content[0].text == TEXT
    assert sent_to(fake, "talker")["messages"] == [
        {"role": "user", "content": "Weather in Paris?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": json.dumps(CITY, separators=(",", ":"))},
                }
            ],
        },
        {"role": "tool", "tool_call_id": call.id, "content": "sunny"},
        {"role": "user", "content": "And so?"},
    ]


def test_a_streamed_tool_use_sends_its_input_as_json_deltas(client):
    with client.messages.stream(
        model="bench/tools", max_tokens=64, tools=[WEATHER], messages=[{"role": "user", "content": "Weather?"}]
    ) as stream:
        deltas = [event.delta.type for event in stream if event.type == "content_block_delta"]
        final = stream.get_final_message()
    assert deltas == ["input_json_delta"]
    assert (final.content[0].name, final.content[0].input, final.stop_reason) == ("get_weather", CITY, "tool_use")


def test_images_reach_the_seats_as_image_parts_and_are_not_stored(both, client):
    fake, bench = both
    fake.clear()
    message = client.messages.create(
        model="bench/chatty",
        max_tokens=64,
        messages=[
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "What are these?"},
                    {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG_DATA}},
                    {"type": "image", "source": {"type": "url", "url": "https://images.example/cat.png"}},
                ],
            }
        ],
    )
    extra = message.model_extra["bench"]
    assert extra["shape"] == "vision"
    assert sent_to(fake, "talker")["messages"] == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "What are these?"},
                {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG_DATA}"}},
                {"type": "image_url", "image_url": {"url": "https://images.example/cat.png"}},
            ],
        }
    ]
    stored = httpx2.get(f"{bench.url}/bench/panels/{extra['panel']}").text
    assert PNG_DATA not in stored


def test_structured_output_gives_the_seat_whose_answer_validates(client):
    message = client.messages.create(
        model="bench/json",
        max_tokens=64,
        messages=[{"role": "user", "content": "Which city?"}],
        output_config={"format": {"type": "json_schema", "schema": CITY_SCHEMA}},
    )
    assert json.loads(message.content[0].text) == CITY
    assert message.model_extra["bench"]["picked"]["alias"] == "fake/jsoner"  # badjson's answer does not parse


def test_an_sdk_retry_gets_the_recorded_panel(both):
    _, bench = both
    body = {"model": "bench/chatty", "max_tokens": 8, "messages": [{"role": "user", "content": "Retried?"}]}
    first = httpx2.post(f"{bench.url}/v1/messages", json=body, timeout=30).json()
    again = httpx2.post(
        f"{bench.url}/v1/messages", json=body, headers={"x-stainless-retry-count": "1"}, timeout=30
    ).json()
    assert again == first


def test_count_tokens_is_the_benchs_estimate(client):
    system, prompt = "Be brief.", "How many tokens is this? " * 10
    counted = client.messages.count_tokens(
        model="bench/chatty", system=system, messages=[{"role": "user", "content": prompt}]
    )
    chars = len(system) + len(prompt)
    assert counted.input_tokens == est.estimate(chars, 0, est.PROSE).tokens
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG_DATA}}
    with_image = client.messages.count_tokens(
        model="bench/chatty", messages=[{"role": "user", "content": [{"type": "text", "text": prompt}, image]}]
    )
    assert with_image.input_tokens == est.estimate(len(prompt), 1, est.PROSE).tokens
    # Tools' definitions count as text (as sent to the seats): more than the messages alone.
    with_tools = client.messages.count_tokens(
        model="bench/chatty", system=system, messages=[{"role": "user", "content": prompt}], tools=[WEATHER]
    )
    assert with_tools.input_tokens > counted.input_tokens


def test_errors_come_in_anthropics_shape(both, client):
    _, bench = both
    with pytest.raises(anthropic.NotFoundError) as missing:
        client.messages.create(model="bench/nope", max_tokens=8, messages=[{"role": "user", "content": "Hi"}])
    assert missing.value.status_code == 404
    assert missing.value.body["type"] == "error"
    assert missing.value.body["error"]["type"] == "not_found_error"
    assert missing.value.body["error"]["message"].startswith("collection bench/nope does not exist.")
    with pytest.raises(anthropic.BadRequestError) as bad:
        client.messages.create(
            model="bench/chatty",
            max_tokens=8,
            messages=[{"role": "user", "content": [{"type": "document", "source": {"type": "text", "data": "x"}}]}],
        )
    assert bad.value.body == {
        "type": "error",
        "error": {
            "type": "invalid_request_error",
            "message": "messages[0].content[0]: user content blocks may be text, image, tool_result, not 'document'",
        },
    }
    # The route's own 404 and a body that is not JSON, in the same shape.
    response = httpx2.post(f"{bench.url}/v1/messages", content=b"{not json", timeout=10)
    assert (response.status_code, response.json()["type"], response.json()["error"]["type"]) == (
        400,
        "error",
        "invalid_request_error",
    )
    nothing = httpx2.post(f"{bench.url}/v1/messages/batches", json={}, timeout=10)
    assert nothing.json() == {
        "type": "error",
        "error": {
            "type": "not_found_error",
            "message": "no route POST /v1/messages/batches; see /v1/models, /v1/chat/completions",
        },
    }
    # The other routes keep OpenAI's shape.
    chat = httpx2.post(f"{bench.v1}/chat/completions", json={"model": "bench/nope", "messages": []}, timeout=10)
    assert set(chat.json()) == {"error"}


def test_models_list_in_anthropics_page_shape(both, client):
    page = client.models.list()
    ids = [model.id for model in page.data]
    assert "bench/chatty" in ids and "bench/chatty:pick" in ids
    assert (page.has_more, page.first_id, page.last_id) == (False, ids[0], ids[-1])
    model = client.models.retrieve("bench/chatty")
    assert (model.type, model.display_name) == ("model", "bench/chatty")
    assert model.created_at.tzinfo is not None
    # Without Anthropic's header, the OpenAI list as before.
    plain = httpx2.get(f"{both[1].v1}/models").json()
    assert set(plain) == {"object", "data"} and "display_name" not in plain["data"][0]


@pytest.fixture(scope="module")
def keyed(both, tmp_path_factory) -> Iterator[tuple[BenchServer, str, str]]:
    fake, _ = both
    server = BenchServer(tmp_path_factory.mktemp("keyed"), require_keys=True).start()
    try:
        add_fake_endpoint(server, fake, models=[listed("talker")])
        for name in ("open", "closed"):
            data = {"name": name, "members": ["fake/talker"], "description": name, "tags": [], "max_explorers": 0}
            server.admin(lambda bench, data=data: bench.collections.add_collection(data))
        key, _ = server.admin(lambda bench: bench.keys.create("agent", collections=["open"]))
        yield server, key, "bwk_" + "x" * 43
    finally:
        server.stop()


def test_gateway_keys_in_x_api_key_or_bearer(keyed):
    server, key, unknown = keyed
    ask = {"model": "bench/open", "max_tokens": 8, "messages": [{"role": "user", "content": "Hi"}]}
    with Anthropic(base_url=server.url, api_key=key, max_retries=0) as by_api_key:
        assert by_api_key.messages.create(**ask).content[0].text == TEXT
        assert by_api_key.messages.count_tokens(model="bench/open", messages=ask["messages"]).input_tokens > 0
        assert [m.id for m in by_api_key.models.list().data] == ["bench/open", "bench/open:merged", "bench/open:pick"]
        with pytest.raises(anthropic.PermissionDeniedError) as refused:
            by_api_key.messages.create(**{**ask, "model": "bench/closed"})
        assert refused.value.body["error"]["type"] == "permission_error"
    with Anthropic(base_url=server.url, auth_token=key, max_retries=0) as by_bearer:
        assert by_bearer.messages.create(**ask).content[0].text == TEXT
    with (
        Anthropic(base_url=server.url, api_key=unknown, max_retries=0) as stranger,
        pytest.raises(anthropic.AuthenticationError) as unknown_key,
    ):
        stranger.messages.create(**ask)
    assert unknown_key.value.body["error"]["type"] == "authentication_error"
    missing = httpx2.post(f"{server.url}/v1/messages", json=ask, timeout=10)
    assert (missing.status_code, missing.headers["www-authenticate"]) == (401, "Bearer")
    assert missing.json() == {
        "type": "error",
        "error": {
            "type": "authentication_error",
            "message": "no gateway key: send Authorization: Bearer bwk_... (or x-api-key: bwk_..., as Anthropic's "
            "clients do)",
        },
    }
