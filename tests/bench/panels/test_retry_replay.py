"""A retried request gets the answers its first attempt's client left before: openai-python's own
retry after a client-side timeout (docs/GATEWAY.md, "Replays"), and a reservation left behind by a
database failure that a retry must not trip over."""

from __future__ import annotations

import sqlite3
import threading
import time

import httpx2
import orjson
import pytest
from openai import DefaultHttpxClient, OpenAI
from sqlalchemy import select
from sqlalchemy.exc import OperationalError

from benchwarmers.bench.caller import Caller
from benchwarmers.bench.panels import reservations
from benchwarmers.bench.panels.prepare import request_hash
from benchwarmers.bench.services import Bench
from benchwarmers.store import calls
from benchwarmers.store.schema import panels, seats
from tests.support.benchserver import BenchServer
from tests.support.logrecords import recording
from tests.support.panels import collection

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


def test_a_retry_on_another_server_of_the_same_home_gets_the_lingering_panel(slow, fake):
    # Two `serve` on one home (or workers): the retry lands where the first attempt is not running.
    other = BenchServer(slow.settings.home).start()
    try:
        url, retry_url = f"{slow.v1}/chat/completions", f"{other.v1}/chat/completions"
        with pytest.raises(httpx2.ReadTimeout):
            httpx2.post(url, json=BODY, headers={"x-stainless-retry-count": "0"}, timeout=1.0)
        retry = httpx2.post(retry_url, json=BODY, headers={"x-stainless-retry-count": "1"}, timeout=10)
    finally:
        other.stop()
    assert retry.status_code == 200
    rows = panel_rows(slow)
    assert [r["id"] for r in rows] == [retry.json()["bench"]["panel"]]
    assert seat_rows(rows[0]) == answered(rows[0]["id"])
    assert retry.json() == rows[0]["response"]
    assert sorted(r.json["model"] for r in fake.chat_requests) == ["kimi-k2", "phi-4"]


# -- a reservation the database failure left behind ---------------------------------------------------

PAIR = {"model": "bench/pair", "messages": PROMPT}


def disk_io_error(statement: str) -> OperationalError:
    """What SQLite raises when its file cannot be written: the database is unreachable (a 503)."""
    return OperationalError(statement, None, sqlite3.OperationalError("disk I/O error"))


@pytest.fixture
def outage(bench_with_roster, monkeypatch) -> dict[str, bool]:
    """The store's seam fails as a database failure would: `calls.finish_panels` (recording a panel)
    while `recording` is set, and `calls.drop_reservations` (the failed panel's reservation dropped)
    while `dropping` is set, which then comes back: one failed drop, and the database takes writes again."""
    down = {"recording": True, "dropping": True}
    finish, drop = calls.finish_panels, calls.drop_reservations

    async def failing_finish(conn, panel_rows, seat_rows):
        if down["recording"] and panel_rows:  # a batch of reservations only writes no finished panel
            raise disk_io_error("UPDATE panels")
        await finish(conn, panel_rows, seat_rows)

    async def failing_drop(conn, panel_ids):
        if down["dropping"]:
            down.update(recording=False, dropping=False)
            raise disk_io_error("DELETE FROM panels")
        await drop(conn, panel_ids)

    monkeypatch.setattr(calls, "finish_panels", failing_finish)
    monkeypatch.setattr(calls, "drop_reservations", failing_drop)
    collection(bench_with_roster, "pair", ["kimi-k2", "glm-4.5-air"], max_explorers=0)
    return down


def pair_rows(panel_id: str) -> list[tuple]:
    return [
        (f"{panel_id}.member1", "fake/kimi-k2", "ok", "", "answer from kimi-k2"),
        (f"{panel_id}.member2", "fake/glm-4.5-air", "ok", "", "answer from glm-4.5-air"),
    ]


def test_a_reservation_the_failed_drop_left_behind_never_fails_the_sdks_retry(bench_with_roster, fake, outage):
    attempts: list[tuple[str, int]] = []

    def count(response: httpx2.Response) -> None:
        attempts.append((response.request.headers["x-stainless-retry-count"], response.status_code))

    http = DefaultHttpxClient(event_hooks={"response": [count]})
    client = OpenAI(base_url=bench_with_roster.v1, api_key="not-needed-on-loopback", timeout=10, http_client=http)
    with recording() as logs:
        reply = client.chat.completions.create(model="bench/pair", messages=PROMPT)

    # The first attempt got the outage's 503 (Retry-After: 1); its reservation could not be dropped.
    assert attempts == [("0", 503), ("1", 200)]
    assert outage == {"recording": False, "dropping": False}
    assert any("could not drop the reservation of failed panel" in line for _, line in logs.lines)
    panel_id = reply.bench["panel"]
    assert [(s["alias"], s["status"]) for s in reply.bench["seats"]] == [
        ("fake/kimi-k2", "ok"),
        ("fake/glm-4.5-air", "ok"),
    ]
    # The retry ran afresh; the first attempt's reservation is gone, no row waits for a panel no one runs.
    rows = panel_rows(bench_with_roster)
    assert [r["id"] for r in rows] == [panel_id]
    assert seat_rows(rows[0]) == pair_rows(panel_id)
    assert sorted(r.json["model"] for r in fake.chat_requests) == ["glm-4.5-air", "glm-4.5-air", "kimi-k2", "kimi-k2"]


def test_a_retry_that_joined_a_first_attempt_which_then_failed_runs_afresh(bench_with_roster, fake, outage):
    fake.script("kimi-k2", latency=0.8)
    url = f"{bench_with_roster.v1}/chat/completions"
    first: list[httpx2.Response] = []
    thread = threading.Thread(target=lambda: first.append(httpx2.post(url, json=PAIR, timeout=10)))
    thread.start()
    deadline = time.monotonic() + 5
    while len(fake.chat_requests) < 2 and time.monotonic() < deadline:
        time.sleep(0.02)
    retry = httpx2.post(url, json=PAIR, headers={"x-stainless-retry-count": "1"}, timeout=10)  # joins the first
    thread.join()

    assert first[0].status_code == 503
    assert first[0].json()["error"]["code"] == "database_unavailable"
    assert retry.status_code == 200  # not the first attempt's failure again
    panel_id = retry.json()["bench"]["panel"]
    rows = panel_rows(bench_with_roster)  # the first attempt's reservation was dropped once the database was back
    assert [r["id"] for r in rows] == [panel_id]
    assert seat_rows(rows[0]) == pair_rows(panel_id)
    assert len(fake.chat_requests) == 4  # each model asked by both attempts


def test_a_reservation_no_process_remembers_is_waited_out_for_its_bound_only(bench_with_roster, fake):
    # A reservation left by a process that has gone (it could not drop it, then stopped): no process
    # remembers it, so a retry waits for it only until the panel's bound from its reservation has passed.
    collection(bench_with_roster, "pair", ["kimi-k2", "glm-4.5-air"], max_explorers=0)
    bench_with_roster.admin(lambda b: b.gateway_settings.set_gateway(seat_timeout=1))
    raw = orjson.dumps(PAIR)
    bound = 5 + 2 * 1 + 30  # panel_bound: decision_timeout (5 s), seat_timeout twice, recording

    async def left_behind(bench: Bench) -> None:
        row = {
            "id": "p20261202-000000-0000dead",
            "created_at": time.time() - bound + 2,  # its bound ends two seconds from now
            "collection": "pair",
            "reply": "all",
            "shape": "",
            "shape_by": "",
            "caller": "local",
            "request": {},
            "request_hash": request_hash(raw),
            "skipped": [],
        }
        async with bench.state.write() as conn:
            await calls.reserve_panels(conn, [row])

    bench_with_roster.admin(left_behind)
    with recording() as logs:
        retry = httpx2.post(
            f"{bench_with_roster.v1}/chat/completions",
            content=raw,
            headers={"content-type": "application/json", "x-stainless-retry-count": "1"},
            timeout=30,
        )
    assert retry.status_code == 200
    panel_id = retry.json()["bench"]["panel"]
    assert any("panel p20261202-000000-0000dead was never recorded within its bound" in line for _, line in logs.lines)
    rows = panel_rows(bench_with_roster)
    assert [(r["id"], r["response"] is None) for r in rows] == [
        ("p20261202-000000-0000dead", True),  # aged out of every retry's look
        (panel_id, False),
    ]
    assert seat_rows(rows[1]) == pair_rows(panel_id)


def test_a_reservation_this_process_could_not_drop_is_dropped_by_the_retry_at_once(server, monkeypatch):
    # The background drop waits an hour here, so it is the retry's look that finds and drops it.
    monkeypatch.setattr(reservations, "FIRST_DELAY", 3600.0)
    drop, down = calls.drop_reservations, {"dropping": True}

    async def failing_drop(conn, panel_ids):
        if down["dropping"]:
            raise disk_io_error("DELETE FROM panels")
        await drop(conn, panel_ids)

    monkeypatch.setattr(calls, "drop_reservations", failing_drop)

    async def scenario(bench: Bench) -> tuple[bool, object, bool, list[str]]:
        row = {
            "id": "p20261202-000000-0000beef",
            "created_at": time.time(),
            "collection": "pair",
            "reply": "all",
            "shape": "",
            "shape_by": "",
            "caller": "local",
            "request": {},
            "request_hash": "f" * 64,
            "skipped": [],
        }
        await bench.panels.recorder.reserve(row)
        await bench.panels.reservations.drop(row["id"])  # the panel failed, and so did the drop
        remembered = bench.panels.reservations.orphaned(row["id"])
        down["dropping"] = False  # the database takes writes again
        replayed = await bench.panels.replay(Caller(), "f" * 64, None)
        async with bench.state.read() as conn:
            left = [r.id for r in await conn.execute(select(panels.c.id))]
        return remembered, replayed, bench.panels.reservations.orphaned(row["id"]), left

    remembered, replayed, still, left = server.admin(scenario)
    assert (remembered, replayed, still, left) == (True, None, False, [])
