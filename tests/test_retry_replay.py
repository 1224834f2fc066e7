"""A retried request gets the answers its first attempt's client left before: openai-python's own
retry after a client-side timeout (docs/GATEWAY.md, "Replays"), and a reservation left behind by a
database failure that a retry must not trip over."""

from __future__ import annotations

import time

import httpx2
import orjson
import pytest
from openai import DefaultHttpxClient, OpenAI
from sqlalchemy import select

from benchwarmers.bench.services import Bench
from benchwarmers.store.schema import panels, seats
from tests.benchserver import BenchServer
from tests.test_gateway_panels import collection

PROMPT = [{"role": "user", "content": "review this retry loop"}]
BODY = {"model": "bench/slow", "messages": PROMPT}


def panel_rows(server: BenchServer) -> list[dict]:
    """Every panel row (reservations too), oldest first, each with its seats' rows in order."""

    async def read(bench: Bench) -> list[dict]:
        async with bench.state.read() as conn:
            found = [dict(r._mapping) for r in await conn.execute(select(panels).order_by(panels.c.created_at))]
            for panel in found:
                query = select(seats).where(seats.c.panel_id == panel["id"]).order_by(seats.c.position)
                panel["seats"] = [dict(r._mapping) for r in await conn.execute(query)]
            return found

    return server.admin(read)


def recorded_panels(server: BenchServer, count: int = 1) -> list[dict]:
    """The panel rows once `count` panels are recorded (a client that left does not wait for it)."""
    deadline = time.monotonic() + 10
    while True:
        rows = panel_rows(server)
        if sum(r["response"] is not None for r in rows) >= count or time.monotonic() > deadline:
            return rows
        time.sleep(0.05)


def seat_rows(row: dict) -> list[tuple]:
    return [(s["call"], s["alias"], s["status"], s["error"], s["answer"]) for s in row["seats"]]


def answered(panel_id: str) -> list[tuple]:
    """The seat rows of a `slow` panel in which both members answered."""
    return [
        (f"{panel_id}.member1", "fake/phi-4", "ok", "", "answer from phi-4"),
        (f"{panel_id}.member2", "fake/kimi-k2", "ok", "", "answer from kimi-k2"),
    ]


def section(seat: dict) -> str:
    """The markdown section of a seat that answered, in an `all` reply."""
    return (
        f"## {seat['seat']} · {seat['alias']} · ok · {seat['seconds']:.1f}s\ncall `{seat['call']}`\n\n"
        f"answer from {seat['alias'].removeprefix('fake/')}\n"
    )


@pytest.fixture
def slow(bench_with_roster: BenchServer, fake) -> BenchServer:
    """`bench/slow`: phi-4 answers after 1.8 s, kimi-k2 at once; no explorers."""
    fake.script("phi-4", latency=1.8)
    collection(bench_with_roster, "slow", ["phi-4", "kimi-k2"], max_explorers=0)
    return bench_with_roster


def test_an_sdk_retry_after_its_timeout_gets_every_seat_of_the_first_panel(slow, fake):
    # The SDK gives up on each attempt after 1 s and retries (twice: its default), as it is.
    attempts: list[str] = []

    def count(request: httpx2.Request) -> None:
        attempts.append(request.headers["x-stainless-retry-count"])

    http = DefaultHttpxClient(event_hooks={"request": [count]})
    client = OpenAI(base_url=slow.v1, api_key="not-needed-on-loopback", timeout=1.0, http_client=http)
    assert client.max_retries == 2
    reply = client.chat.completions.create(model="bench/slow", messages=PROMPT)

    assert attempts[0] == "0" and len(attempts) >= 2  # the first attempt timed out; a retry got this
    bench = reply.bench
    assert [(s["alias"], s["status"], s["error"]) for s in bench["seats"]] == [
        ("fake/phi-4", "ok", ""),
        ("fake/kimi-k2", "ok", ""),
    ]
    content = reply.choices[0].message.content
    for seat in bench["seats"]:
        assert section(seat) in content
    assert "cancelled" not in content
    # One panel, each model called once: the retries attached to the first attempt's panel.
    assert sorted(r.json["model"] for r in fake.chat_requests) == ["kimi-k2", "phi-4"]
    rows = panel_rows(slow)
    assert [r["id"] for r in rows] == [bench["panel"]]
    assert seat_rows(rows[0]) == answered(bench["panel"])
    assert rows[0]["response"]["bench"] == bench  # what the retry got is the panel as recorded


@pytest.mark.parametrize(
    ("headers", "stream"),
    [
        ({"x-stainless-retry-count": "0"}, False),  # an SDK's first attempt: it may retry
        ({"Idempotency-Key": "review-77"}, False),
        ({"Idempotency-Key": "review-78"}, True),
    ],
)
def test_a_replayable_request_whose_client_left_keeps_its_seats_for_the_retry(slow, fake, headers, stream):
    url, body = f"{slow.v1}/chat/completions", {**BODY, "stream": stream}
    if stream:
        with httpx2.stream("POST", url, json=body, headers=headers, timeout=10) as response:
            assert next(response.iter_text()) == ": ping\n\n"  # the seats run; the client leaves
    else:
        with pytest.raises(httpx2.ReadTimeout):
            httpx2.post(url, json=body, headers=headers, timeout=1.0)

    rows = recorded_panels(slow)
    assert len(rows) == 1
    assert seat_rows(rows[0]) == answered(rows[0]["id"])  # nothing was cancelled
    retry = {"x-stainless-retry-count": "1"} if "x-stainless-retry-count" in headers else headers
    again = httpx2.post(url, json=body, headers=retry, timeout=10)
    assert (again.status_code, again.headers["x-request-id"]) == (200, rows[0]["id"])
    if stream:
        frames = [e.removeprefix("data: ") for e in again.text.split("\n\n") if e.startswith("data: {")]
        assert orjson.loads(frames[0])["bench"] == rows[0]["response"]["bench"]
    else:
        assert again.json() == rows[0]["response"]
    assert sorted(r.json["model"] for r in fake.chat_requests) == ["kimi-k2", "phi-4"]


def test_a_client_that_cannot_retry_still_cancels_every_seat_when_it_leaves(slow, fake):
    # No Idempotency-Key and no retry count: nothing could replay this panel, so nothing is kept running.
    with pytest.raises(httpx2.ReadTimeout):
        httpx2.post(f"{slow.v1}/chat/completions", json=BODY, timeout=1.0)
    rows = recorded_panels(slow)
    panel_id = rows[0]["id"]
    assert seat_rows(rows[0]) == [
        (f"{panel_id}.member1", "fake/phi-4", "error", "cancelled: client disconnected", ""),
        (f"{panel_id}.member2", "fake/kimi-k2", "ok", "", "answer from kimi-k2"),
    ]
