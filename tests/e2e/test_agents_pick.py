"""Tool calls are answers, and the pick reply: one seat's own message for callers that need one
(tools, JSON, `:pick`), every seat still run, recorded and judgeable. The `openai` SDK and raw
HTTP against a real bench and the fake provider."""

from __future__ import annotations

import json

import httpx2
import pytest
from openai import BadRequestError, NotFoundError, OpenAI

from tests.support.agents_fixtures import CITY, CITY_JSON, CITY_SCHEMA, WEATHER_TOOL, agents_bench  # noqa: F401

ASK = [{"role": "user", "content": "Which city, and how many people live there?"}]
JSON_SCHEMA = {"type": "json_schema", "json_schema": {"name": "city", "schema": CITY_SCHEMA, "strict": True}}


@pytest.fixture(scope="module")
def bench(agents_bench):  # noqa: F811
    return agents_bench[1]


@pytest.fixture(scope="module")
def sdk(bench) -> OpenAI:
    return OpenAI(base_url=bench.v1, api_key="not-needed-on-loopback", max_retries=0, timeout=30)


def logged(bench, panel: str) -> dict:
    response = httpx2.get(f"{bench.url}/bench/panels/{panel}")
    assert response.status_code == 200, response.text
    return response.json()


def test_json_schema_picks_the_first_seat_whose_answer_validates(bench, sdk):
    reply = sdk.chat.completions.create(model="bench/json", messages=ASK, response_format=JSON_SCHEMA)
    choice = reply.choices[0]
    assert json.loads(choice.message.content) == CITY
    assert choice.finish_reason == "stop"
    assert choice.message.tool_calls is None
    extra = reply.model_extra["bench"]
    assert extra["reply"] == "pick"
    panel = extra["panel"]
    assert extra["picked"] == {
        "call": f"{panel}.member2",
        "alias": "fake/jsoner",
        "seat": "member",
        "why": "the first member that fits",
    }
    assert "note" not in extra
    # Every seat ran and is listed with its call id; the invalid answer too.
    assert [(s["alias"], s["status"], s["answer"]) for s in extra["seats"]] == [
        ("fake/badjson", "ok", '{"city": "Paris", population: }'),
        ("fake/jsoner", "ok", CITY_JSON),
    ]
    assert reply.system_fingerprint is None
    # usage: the sum over the seats, each seat's own in bench.usage
    assert set(extra["usage"]) == {f"{panel}.member1", f"{panel}.member2"}
    assert reply.usage.total_tokens == sum(u["total_tokens"] for u in extra["usage"].values())


def test_json_object_picks_a_parsable_answer_and_the_sdk_parse_reads_it(bench, sdk):
    reply = sdk.chat.completions.create(model="bench/json", messages=ASK, response_format={"type": "json_object"})
    assert json.loads(reply.choices[0].message.content) == CITY
    from pydantic import BaseModel

    class City(BaseModel):
        city: str
        population: int

    parsed = sdk.chat.completions.parse(model="bench/json", messages=ASK, response_format=City)
    assert parsed.choices[0].message.parsed == City(**CITY)


def test_tools_pick_the_seat_that_called_an_offered_tool(bench, sdk):
    reply = sdk.chat.completions.create(model="bench/tools", messages=ASK, tools=[WEATHER_TOOL])
    choice = reply.choices[0]
    assert choice.finish_reason == "tool_calls"
    assert choice.message.content is None
    [call] = choice.message.tool_calls
    assert (call.type, call.function.name, json.loads(call.function.arguments)) == ("function", "get_weather", CITY)
    extra = reply.model_extra["bench"]
    assert extra["picked"]["alias"] == "fake/tooler"
    wrong, right = extra["seats"]
    assert wrong["tool_calls"][0]["function"] == {"name": "delete_everything", "arguments": '{"path":"/"}'}
    assert right["tool_calls"] == [call.model_dump(exclude_none=True)]
    assert (wrong["status"], right["status"]) == ("ok", "ok")


def test_every_seat_of_a_pick_panel_is_recorded_and_a_verdict_on_the_picked_seat_counts(bench, sdk):
    reply = sdk.chat.completions.create(model="bench/tools", messages=ASK, tools=[WEATHER_TOOL])
    extra = reply.model_extra["bench"]
    panel = logged(bench, extra["panel"])
    assert panel["reply"] == "pick"
    assert [(s["alias"], s["status"], s["tool_calls"][0]["function"]["name"]) for s in panel["seats"]] == [
        ("fake/wrongtool", "ok", "delete_everything"),
        ("fake/tooler", "ok", "get_weather"),
    ]
    assert panel["owed"] == 2
    picked = extra["picked"]["call"]
    verdict = httpx2.post(f"{bench.url}/bench/verdict", json={"call": picked, "useful": True, "note": "right call"})
    assert verdict.status_code == 200, verdict.text
    assert verdict.json() == {"call": picked, "recorded": True, "replaced": False}
    after = logged(bench, extra["panel"])
    assert after["owed"] == 1
    assert after["seats"][1]["verdict"]["useful"] is True


def test_when_no_answer_is_valid_the_first_answer_comes_with_a_note(bench, sdk):
    reply = sdk.chat.completions.create(model="bench/broken", messages=ASK, response_format=JSON_SCHEMA)
    assert reply.choices[0].message.content == '{"city": "Paris", population: }'
    extra = reply.model_extra["bench"]
    assert extra["picked"]["why"] == "the first seat that answered"
    assert extra["note"] == (
        "no seat's answer is valid for this request (fake/badjson: its answer is not JSON); this is the first answer"
    )


def test_the_pick_suffix_and_option_give_one_seats_message_and_all_still_gives_the_panel(bench, sdk):
    for kwargs in (
        {"model": "bench/chatty:pick"},
        {"model": "bench/chatty", "extra_body": {"bench": {"reply": "pick"}}},
    ):
        reply = sdk.chat.completions.create(messages=ASK, **kwargs)
        assert reply.choices[0].message.content == "It is sunny in Paris."
        assert reply.model_extra["bench"]["picked"]["alias"] == "fake/talker"
    # Asking for `all` explicitly keeps the markdown panel, tools or not; the tool calls show in it.
    reply = sdk.chat.completions.create(model="bench/tools:all", messages=ASK, tools=[WEATHER_TOOL])
    content = reply.choices[0].message.content
    assert content.startswith("# bench/tools · panel ")
    assert '→ tool call `get_weather({"city":"Paris","population":2100000})`' in content
    assert '→ tool call `delete_everything({"path":"/"})`' in content
    assert reply.choices[0].finish_reason == "stop"


def test_a_collection_whose_reply_is_pick_answers_with_a_message(bench, sdk):
    reply = sdk.chat.completions.create(model="bench/agents", messages=ASK, response_format={"type": "json_object"})
    assert json.loads(reply.choices[0].message.content) == CITY
    assert reply.model_extra["bench"]["picked"]["alias"] == "fake/jsoner"
    # The tool-calling seat did not answer in JSON: with tools offered, its call is the valid answer.
    reply = sdk.chat.completions.create(model="bench/agents", messages=ASK, tools=[WEATHER_TOOL])
    assert reply.choices[0].message.tool_calls[0].function.name == "get_weather"


def test_a_streamed_pick_sends_content_and_tool_call_deltas_and_the_finish_reason(bench):
    body = {"model": "bench/tools", "messages": ASK, "tools": [WEATHER_TOOL], "stream": True}
    with httpx2.stream("POST", f"{bench.v1}/chat/completions", json=body, timeout=30) as response:
        lines = [line for line in response.iter_lines() if line]
    assert lines[0] == ": ping"
    chunks = [json.loads(line.removeprefix("data: ")) for line in lines[1:-1]]
    assert lines[-1] == "data: [DONE]"
    assert [c["choices"][0]["delta"] for c in chunks] == [
        {"role": "assistant", "content": None},
        {"tool_calls": [{"index": 0, **chunks[0]["bench"]["seats"][1]["tool_calls"][0]}]},
        {},
    ]
    assert [c["choices"][0]["finish_reason"] for c in chunks] == [None, None, "tool_calls"]
    # The SDK's own stream accumulates it into the tool call.
    sdk = OpenAI(base_url=bench.v1, api_key="x", max_retries=0)
    with sdk.chat.completions.stream(model="bench/tools", messages=ASK, tools=[WEATHER_TOOL]) as stream:
        final = stream.get_final_completion()
    assert final.choices[0].message.tool_calls[0].function.name == "get_weather"
    assert final.choices[0].finish_reason == "tool_calls"


def test_n_above_one_is_refused_never_cut(bench, sdk):
    with pytest.raises(BadRequestError) as refused:
        sdk.chat.completions.create(model="bench/chatty", messages=ASK, n=2)
    assert refused.value.status_code == 400
    assert refused.value.body == {
        "message": "n=2 is not served: a panel gives one reply, and every seat's own answer is in bench.seats. "
        "Leave n out (or send 1); for several answers, read bench.seats or use reply 'all'.",
        "type": "invalid_request_error",
        "param": "n",
        "code": "n_not_supported",
    }
    assert sdk.chat.completions.create(model="bench/chatty", messages=ASK, n=1).choices[0].index == 0


def test_a_schema_that_is_not_json_schema_is_refused_before_any_seat(bench, sdk):
    bad = {"type": "json_schema", "json_schema": {"name": "x", "schema": {"type": "no-such-type"}}}
    with pytest.raises(BadRequestError) as refused:
        sdk.chat.completions.create(model="bench/json", messages=ASK, response_format=bad)
    assert refused.value.body["param"] == "response_format"
    assert refused.value.body["message"].startswith("response_format.json_schema.schema is not a valid JSON Schema: ")


def test_models_retrieve_serves_every_listed_id_and_404s_the_rest(bench, sdk):
    listed = [m.id for m in sdk.models.list()]
    assert "bench/json:pick" in listed
    for model_id in listed:
        assert sdk.models.retrieve(model_id).id == model_id
    assert sdk.models.retrieve("bench/agents").model_extra["reply"] == "pick"
    with pytest.raises(NotFoundError) as missing:
        sdk.models.retrieve("bench/nope")
    assert missing.value.body["code"] == "model_not_found"
    assert missing.value.body["param"] == "model"


def test_a_remote_ref_in_the_schema_is_never_fetched(agents_bench, sdk):  # noqa: F811
    fake, _ = agents_bench
    fake.clear()
    schema = {"type": "object", "properties": {"city": {"$ref": f"{fake.root_url}/city.json"}}}
    fmt = {"type": "json_schema", "json_schema": {"name": "city", "schema": schema}}
    reply = sdk.chat.completions.create(model="bench/json", messages=ASK, response_format=fmt)
    assert [r.path for r in fake.requests] == ["/v1/chat/completions", "/v1/chat/completions"]
    assert reply.model_extra["bench"]["note"] == (
        "no seat's answer is valid for this request (fake/badjson: its answer is not JSON; fake/jsoner: its answer "
        "could not be checked: the schema has a $ref that does not resolve within it (none is fetched)); "
        "this is the first answer"
    )


def test_the_pick_follows_the_mergers_order_the_collections_choice_then_the_evidence(bench, sdk):
    reply = sdk.chat.completions.create(model="bench/chosen:pick", messages=ASK)
    assert reply.choices[0].message.content == CITY_JSON
    assert reply.model_extra["bench"]["picked"]["why"] == "the collection's merger"
    # Without a choice, the seat with the best evidence on the shape comes first.
    panel = sdk.chat.completions.create(model="bench/evidenced:pick", messages=ASK).model_extra["bench"]
    assert panel["picked"]["alias"] == "fake/talker"
    judged = {"call": panel["seats"][1]["call"], "useful": True}
    assert httpx2.post(f"{bench.url}/bench/verdict", json=judged).status_code == 200
    again = sdk.chat.completions.create(model="bench/evidenced:pick", messages=ASK).model_extra["bench"]
    assert again["picked"] == {
        "call": f"{again['panel']}.member2",
        "alias": "fake/jsoner",
        "seat": "member",
        "why": "the best evidence on design among the panel's models: 1/1 useful",
    }
