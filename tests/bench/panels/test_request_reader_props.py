"""Properties of the request reader: whatever JSON a caller sends, it becomes a seated panel or a
BenchError that names what was wrong — never another exception (which the server would answer
with a 500).

The reader is the whole path before any model is called: the body as the server parses it
(`parse_json_object`), `read_request` (collection, options, messages, images, size) and
`seat_panel` (seats, the stored copy, the body every seat is sent). Bodies are drawn as JSON text,
so they are exactly what can arrive on the wire: nested, oddly typed, huge numbers, any unicode,
deep nesting.
"""

from __future__ import annotations

import copy
import json
import random
from typing import Any

import orjson
from hypothesis import HealthCheck, event, given, note, settings
from hypothesis import strategies as st

from benchwarmers.bench.history import SeatHistory
from benchwarmers.bench.panels.prepare import PreparedPanel, read_request, seat_panel
from benchwarmers.bench.snapshot import ModelView, Snapshot
from benchwarmers.errors import BenchError, InvalidRequest
from benchwarmers.nouns.gateway import GatewaySettings
from benchwarmers.server.body import parse_json_object
from benchwarmers.store.gateway_settings import DEFAULT_SHAPES


def model(alias: str, window: int | None, *, vision: bool = False, free: bool = True) -> ModelView:
    facts: dict[str, tuple[Any, str]] = {
        "free": (free, "listing"),
        "input_kinds": (["text", "image"] if vision else ["text"], "listing"),
    }
    if window is not None:
        facts["context_window"] = (window, "listing")
    endpoint, _, model_id = alias.partition("/")
    return ModelView(
        pk=hash(alias) % 10_000,
        alias=alias,
        endpoint=endpoint,
        model_id=model_id,
        enabled=True,
        gone=False,
        cooldown_until=None,
        failure_streak=0,
        facts=facts,
    )


def collection(name: str, members: list[str], **extra: Any) -> dict[str, Any]:
    base = {
        "name": name,
        "description": f"{name} for properties",
        "tags": [],
        "members": members,
        "shape": None,
        "reply": "all",
        "merger": None,
        "max_explorers": None,
        "max_calls": None,
        "created_at": 1_764_460_000.0,
    }
    return {**base, **extra}


MODELS = [
    model("e1/llama-3.3-70b", 128_000),
    model("e1/qwen3-32b", 32_000),
    model("e1/phi-4", 16),  # a tiny window: long prompts are refused as too large
    model("e2/gemma-3-27b", None, vision=True),  # window unknown: never the reason for a refusal
    model("e2/kimi-k2", 128_000),
    model("e3/gpt-4o", 128_000, vision=True, free=False),
]
SNAPSHOT = Snapshot(
    version=1,
    models={m.alias: m for m in MODELS},
    collections={
        "review": collection("review", ["e1/llama-3.3-70b", "e1/qwen3-32b"]),
        "tiny": collection("tiny", ["e1/phi-4"], max_explorers=0),
        "vision": collection("vision", ["e2/gemma-3-27b"], shape="vision", reply="merged"),
        "gone": collection("gone", ["e9/retired"]),
    },
    gateway=GatewaySettings(),
    shapes=dict(DEFAULT_SHAPES),
)
STATUSES = {400, 404, 413}  # what a refusal of a request may be

# -- what a caller may send ----------------------------------------------------------------------

scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**80), max_value=2**80)  # past 64 bits: orjson reads those as floats
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=40)
)
anything = st.recursive(
    scalars,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4),
    max_leaves=20,
)
URL_STARTS = [
    "https://",
    "https://[",
    "https://[::1]:99999/",
    "https://user:pass@",
    "HTTPS://",
    "http://",
    "file:///",
    "//",
    "data:image/png;base64,",
    "data:IMAGE/jpeg;base64,",
    "data:text/plain;base64,",
    "data:",
    "javascript:",
    "",
]
urls = st.builds(lambda start, rest: start + rest, st.sampled_from(URL_STARTS), st.text(max_size=30)) | anything
image_parts = st.fixed_dictionaries(
    {"type": st.just("image_url")},
    optional={"image_url": st.fixed_dictionaries({}, optional={"url": urls, "detail": anything}) | urls},
)
text_parts = st.fixed_dictionaries(
    {"type": st.sampled_from(["text", "input_text", "refusal"]) | anything},
    optional={"text": st.text(max_size=200) | anything},
)
long_text = st.text(alphabet="ab ", min_size=80, max_size=120).map(lambda t: t * 40)  # past e1/phi-4's window
contents = st.text(max_size=200) | long_text | st.lists(image_parts | text_parts | anything, max_size=5) | anything
roles = st.sampled_from(["system", "user", "assistant", "tool", "developer"]) | anything
messages = st.fixed_dictionaries({"role": roles}, optional={"content": contents, "name": anything}) | anything
ODD_MODELS = ["bench/review:odd", "bench/gone", "bench/nope", "bench/", "bench/:merged", "gpt-4o", ""]
GOOD_MODELS = ["bench/review", "bench/review:merged", "bench/review:all", "bench/tiny", "bench/vision"]
model_names = st.sampled_from(GOOD_MODELS) | st.sampled_from(ODD_MODELS) | anything
nominees = st.lists(st.sampled_from([m.alias for m in MODELS] + ["e1/llama", "nobody", ""]) | anything, max_size=3)
bench_options = (
    st.fixed_dictionaries(
        {},
        optional={
            "reply": st.sampled_from(["all", "merged", "both"]) | anything,
            "with": nominees | st.sampled_from(["e1/phi-4", "nobody"]) | anything,
            "shape": st.sampled_from([*DEFAULT_SHAPES, "legal"]) | anything,
            "seats": anything,
        },
    )
    | anything
)
# Anything at all, field by field: most of these are refused early.
bodies = st.fixed_dictionaries(
    {},
    optional={
        "model": model_names,
        "messages": st.lists(messages, max_size=4) | anything,
        "bench": bench_options,
        "stream": anything,
        "stream_options": st.fixed_dictionaries({}, optional={"include_usage": anything}) | anything,
        "temperature": anything,
        "max_tokens": anything,
        "tools": anything,
        "extra": anything,
    },
)
# A request a client means: a real collection and well-formed messages (with odd URLs, long text
# and odd options), so the draw reaches seating, the stored copy and the seats' bodies.
good_parts = st.lists(
    st.fixed_dictionaries({"type": st.just("text"), "text": st.text(max_size=100)})
    | st.fixed_dictionaries({"type": st.just("image_url"), "image_url": st.fixed_dictionaries({"url": urls})}),
    min_size=1,
    max_size=4,
)
good_messages = st.lists(
    st.fixed_dictionaries(
        {
            "role": st.sampled_from(["system", "user", "assistant"]),
            "content": st.text(max_size=200) | long_text | good_parts,
        }
    ),
    min_size=1,
    max_size=3,
)
meant = st.fixed_dictionaries(
    {"model": st.sampled_from(GOOD_MODELS), "messages": good_messages},
    optional={
        "bench": st.fixed_dictionaries(
            {},
            optional={
                "reply": st.sampled_from(["all", "merged"]),
                "with": nominees,
                "shape": st.sampled_from([*DEFAULT_SHAPES, "legal"]),
            },
        ),
        "stream": st.booleans(),
        "stream_options": st.fixed_dictionaries({"include_usage": st.booleans()}),
        "temperature": st.floats(min_value=0, max_value=2) | scalars,
        "max_tokens": st.integers(min_value=-(2**70), max_value=2**70),
        "tools": anything,
    },
)


@st.composite
def nudged(draw: st.DrawFn) -> dict[str, Any]:
    """A meant request with one field, or one message, replaced by anything."""
    body = draw(meant)
    field = draw(st.sampled_from([*body, "messages[0]", "messages[0].content", "bench.with"]))
    if field == "messages[0]":
        body["messages"][0] = draw(anything)
    elif field == "messages[0].content":
        body["messages"][0]["content"] = draw(contents)
    elif field == "bench.with":
        body["bench"] = {**(body.get("bench") or {}), "with": draw(anything)}
    else:
        body[field] = draw(anything)
    return body


def nested(depth: int, leaf: str = '"x"') -> str:
    """`depth` levels of alternating arrays and objects around one leaf, as JSON text."""
    text = leaf
    for level in range(depth):
        text = f"[{text}]" if level % 2 else f'{{"k": {text}}}'
    return text


@st.composite
def wire_bodies(draw: st.DrawFn) -> bytes:
    """JSON text as a client sends it: a drawn body, sometimes with one field nested very deep."""
    body = draw(meant | nudged() | bodies)
    text = json.dumps(body, ensure_ascii=draw(st.booleans()))
    depth = draw(st.sampled_from([0, 0, 0, 8, 64, 250, 260, 600, 1_100]))
    if depth and text != "{}":
        place = draw(st.sampled_from(["extra", "messages", "content"]))
        deep = nested(depth)
        if place == "content":
            deep = f'[{{"role": "user", "content": {deep}}}]'
        text = f'{text[:-1]}, "{place}": {deep}}}'
    return text.encode()


# -- the reader ---------------------------------------------------------------------------------


def read(raw: bytes) -> PreparedPanel | BenchError:
    """What the server does with a panel request before any model is called."""
    try:
        body = parse_json_object(raw)
    except BenchError as refusal:
        return refusal
    sent = copy.deepcopy(body)
    try:
        draft = read_request(SNAPSHOT, body)
        prepared = seat_panel(
            draft,
            shape="general",
            shape_by="default",
            snapshot=SNAPSHOT,
            history=SeatHistory(),
            body_hash="0" * 64,
            caller="local",
            panel_id="p20261129-231501-7f3a",
            now=1_764_460_000.0,
            rng=random.Random(7),
        )
        # What is sent to each seat and what is stored must be writable as JSON.
        for seat in prepared.plan.seats:
            orjson.loads(b"".join(prepared.chat.parts_for(SNAPSHOT.models[seat.alias].model_id)))
        orjson.dumps(prepared.stored)
    except BenchError as refusal:
        assert body == sent, "the reader changed the caller's body"
        return refusal
    assert body == sent, "the reader changed the caller's body"
    return prepared


def check(raw: bytes) -> None:
    note(f"body ({len(raw):,} bytes): {raw[:400]!r}")
    outcome = read(raw)
    # `pytest -p hypothesispytest --hypothesis-show-statistics` shows how far the draws got.
    event("seated" if isinstance(outcome, PreparedPanel) else f"refused {outcome.status} ({outcome.param})")
    if isinstance(outcome, PreparedPanel):
        assert outcome.plan.seats
        assert outcome.collection["name"] in SNAPSHOT.collections
        assert outcome.estimate >= 0
        return
    assert outcome.status in STATUSES, (outcome.status, outcome.message)
    assert isinstance(outcome.message, str) and outcome.message
    # Refusals of the body as a whole (not JSON, not an object, nested too deep) name no field.
    whole_body = ("the body is not valid JSON", "the body must be a JSON object", "the body nests JSON")
    if outcome.message.startswith(whole_body):
        assert isinstance(outcome, InvalidRequest)
    else:
        # Every refusal of a parsed body says which field was wrong.
        assert isinstance(outcome.param, str) and outcome.param, outcome.message


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(raw=wire_bodies())
def test_any_body_becomes_a_panel_or_a_refusal_that_names_its_field(raw: bytes) -> None:
    check(raw)


@settings(max_examples=150, deadline=None)
@given(raw=st.binary(max_size=200) | st.text(max_size=200).map(str.encode))
def test_any_bytes_become_a_panel_or_a_refusal(raw: bytes) -> None:
    check(raw)


@settings(max_examples=60, deadline=None)
@given(depth=st.integers(min_value=1, max_value=1_500), where=st.sampled_from(["extra", "content", "bench"]))
def test_nesting_at_any_depth_is_read_or_refused(depth: int, where: str) -> None:
    deep = nested(depth)
    message = f'{{"role": "user", "content": {deep if where == "content" else json.dumps("hi")}}}'
    extra = f', "extra": {deep}' if where == "extra" else ""
    options = f', "bench": {deep}' if where == "bench" else ""
    check(f'{{"model": "bench/review", "messages": [{message}]{extra}{options}}}'.encode())


def test_a_valid_request_is_seated_with_every_member() -> None:
    raw = orjson.dumps({"model": "bench/review", "messages": [{"role": "user", "content": "Is 7 prime?"}]})
    prepared = read(raw)
    assert isinstance(prepared, PreparedPanel)
    assert [(s.kind, s.alias) for s in prepared.plan.seats][:2] == [
        ("member", "e1/llama-3.3-70b"),
        ("member", "e1/qwen3-32b"),
    ]
