"""Faults: hostile providers, two servers on one home, config edits under load, `kill -9` under load.

Each scenario runs the real thing over real sockets: the in-process server or `benchwarmers serve`
subprocesses, the fake provider, and clients that count what they were told. Loads are bounded in
requests and in time, and stop by themselves.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2
import pytest

from benchwarmers.bench.services import Bench
from tests.fakes.upstream import FakeUpstream
from tests.support.benchserver import BenchServer, add_fake_endpoint, listed
from tests.support.serveprocess import ServeProcess, fake_endpoint, problems_in_log, run_admin

PROMPT = [{"role": "user", "content": "Is 7 prime?"}]

# -- (a) hostile providers ------------------------------------------------------------------------

HUGE_HEADER = "h" * 100_000
HOSTILE = {
    "garbage": {"body": '{"choices": [{"message": {"content": "half'},
    "truncated": {"truncated_chunks": True},
    "html": {
        "body": "<html><head><title>Sign in to the hotel Wi-Fi</title></head><body>portal</body></html>",
        "content_type": "text/html; charset=utf-8",
    },
    "endless": {"trickle": 0.05, "trickle_for": 30.0},
    "huge-header": {"headers": {"x-debug": HUGE_HEADER}},
    "redirect": {"status": 307, "headers": {"location": "/v1/chat/completions"}, "body": ""},
}
SEAT_TIMEOUT = 1.5


@pytest.fixture
def hostile_bench(server: BenchServer, fake_upstream: FakeUpstream) -> BenchServer:
    models = [*HOSTILE, "steady"]
    for model, behaviour in HOSTILE.items():
        fake_upstream.script(model, **behaviour)
    fake_upstream.script("steady", reply="7 is prime.")
    add_fake_endpoint(server, fake_upstream, models=[listed(m) for m in models])

    async def setup(bench: Bench) -> None:
        await bench.gateway_settings.set_gateway(seat_timeout=SEAT_TIMEOUT)
        members = [f"fake/{m}" for m in models]
        await bench.collections.add_collection({"name": "hostile", "members": members, "max_explorers": 0})

    server.admin(setup)
    return server


def test_hostile_providers_fail_their_seats_and_the_panel_answers_200(
    hostile_bench: BenchServer, fake_upstream: FakeUpstream
) -> None:
    response = httpx2.post(
        f"{hostile_bench.v1}/chat/completions", json={"model": "bench/hostile", "messages": PROMPT}, timeout=30
    )
    assert response.status_code == 200
    bench = response.json()["bench"]
    seats = {seat["alias"].removeprefix("fake/"): (seat["status"], seat["error"]) for seat in bench["seats"]}
    assert seats == {
        "garbage": ("error", 'upstream error (200): response is not JSON: {"choices": [{"message": {"content": "half'),
        "truncated": ("error", "connection failed: the connection dropped before the whole reply arrived"),
        "html": ("error", "upstream error (200): response is not JSON: Sign in to the hotel Wi-Fi"),
        "endless": ("error", f"timeout after {SEAT_TIMEOUT:g}s"),
        "huge-header": ("error", "connection failed: the reply's head is longer than 16 KB"),
        "redirect": ("error", "upstream error (307): Temporary Redirect"),
        "steady": ("ok", ""),
    }
    assert [seat["answer"] for seat in bench["seats"] if seat["status"] == "ok"] == ["7 is prime."]
    # The endless body was cut at the seat timeout, not read to its end.
    endless = next(seat for seat in bench["seats"] if seat["alias"] == "fake/endless")
    assert SEAT_TIMEOUT <= endless["seconds"] < SEAT_TIMEOUT + 2
    # The redirect was not followed: one call per seat reached the provider.
    called = Counter(request.json["model"] for request in fake_upstream.chat_requests)
    assert called == dict.fromkeys([*HOSTILE, "steady"], 1)

    # Recorded as answered: every seat, with the same status and error.
    recorded = httpx2.get(f"{hostile_bench.url}/bench/panels/{bench['panel']}").json()
    assert [(s["call"], s["status"], s["error"]) for s in recorded["seats"]] == [
        (s["call"], s["status"], s["error"]) for s in bench["seats"]
    ]


# -- load: clients that count what they were told --------------------------------------------------


@dataclass
class Load:
    """What the clients were told: panels and verdicts acknowledged with a 200, and everything else."""

    panels: list[tuple[str, list[str]]] = field(default_factory=list)  # (panel id, its seats' call ids)
    verdicts: list[tuple[str, bool]] = field(default_factory=list)  # (call, useful), each recorded
    statuses: Counter[int] = field(default_factory=Counter)
    server_errors: list[str] = field(default_factory=list)
    transport_errors: int = 0
    in_flight: int = 0

    def saw(self, response: httpx2.Response, what: str) -> None:
        self.statuses[response.status_code] += 1
        if response.status_code >= 500:
            self.server_errors.append(f"{what} -> {response.status_code} {response.text[:300]}")


async def send(client: httpx2.AsyncClient, load: Load, method: str, url: str, **kwargs: Any) -> httpx2.Response | None:
    """One request, counted; None when the connection failed (the server went away)."""
    load.in_flight += 1
    try:
        response = await client.request(method, url, **kwargs)
    except httpx2.TransportError:
        load.transport_errors += 1
        return None
    finally:
        load.in_flight -= 1
    load.saw(response, f"{method} {url}")
    return response


async def panel_worker(
    client: httpx2.AsyncClient,
    url: str,
    load: Load,
    requests: int,
    *,
    worker: int,
    verdicts: bool = False,
    stop: asyncio.Event | None = None,
    reached: tuple[int, asyncio.Event] | None = None,
) -> None:
    """Up to `requests` panels (each followed by a verdict on its first seat, with `verdicts`); stops
    at the first connection failure or when `stop` is set. Sets `reached[1]` once `reached[0]`
    panels are acknowledged."""
    for index in range(requests):
        if stop is not None and stop.is_set():
            return
        body = {"model": "bench/pair", "messages": [{"role": "user", "content": f"worker {worker} panel {index}"}]}
        response = await send(client, load, "POST", f"{url}/v1/chat/completions", json=body)
        if response is None:
            return
        if response.status_code != 200:
            continue
        bench = response.json()["bench"]
        calls = [seat["call"] for seat in bench["seats"]]
        load.panels.append((bench["panel"], calls))
        if reached is not None and len(load.panels) >= reached[0]:
            reached[1].set()
        if verdicts:
            useful = index % 2 == 0
            verdict = {"call": calls[0], "useful": useful, "note": f"worker {worker}", "real": [], "false": []}
            judged = await send(client, load, "POST", f"{url}/bench/verdict", json=verdict)
            if judged is None:
                return
            if judged.status_code == 200 and judged.json()["recorded"]:
                load.verdicts.append((calls[0], useful))


def http_client(connections: int) -> httpx2.AsyncClient:
    return httpx2.AsyncClient(timeout=60, limits=httpx2.Limits(max_connections=connections))


# -- the database, read after the servers ---------------------------------------------------------


@dataclass
class Stored:
    panels: Counter[str]
    seats: dict[str, list[str]]  # panel id -> call ids
    verdicts: set[tuple[str, bool]]
    integrity: str


def stored(home: Path) -> Stored:
    db = sqlite3.connect(home / "bench.db")
    try:
        panels = Counter(row[0] for row in db.execute("SELECT id FROM panels"))
        seats: dict[str, list[str]] = {}
        for panel_id, call in db.execute("SELECT panel_id, call FROM seats ORDER BY panel_id, position"):
            seats.setdefault(panel_id, []).append(call)
        verdicts = {(call, bool(useful)) for call, useful in db.execute("SELECT call, useful FROM verdicts")}
        integrity = db.execute("PRAGMA integrity_check").fetchone()[0]
    finally:
        db.close()
    return Stored(panels=panels, seats=seats, verdicts=verdicts, integrity=integrity)


@pytest.fixture
def load_fake() -> Iterator[FakeUpstream]:
    """A provider every model of which answers after 10-30 ms; it keeps no record of requests."""
    with FakeUpstream(default_latency=0.0, record=False) as fake:
        for model in ("m1", "m2", "m3"):
            fake.script(model, latency=(0.01, 0.03))
        yield fake


def pair_home(home: Path, fake: FakeUpstream) -> None:
    fake_endpoint(home, fake, ["m1", "m2", "m3"])

    async def setup(bench: Bench) -> None:
        members = ["fake/m1", "fake/m2"]
        await bench.collections.add_collection({"name": "pair", "members": members, "max_explorers": 0})

    run_admin(home, setup)


# -- (b) two `serve` processes on one home -----------------------------------------------------------

PANELS_PER_SERVER = 200
CLIENTS_PER_SERVER = 12


def test_two_servers_on_one_home_lose_no_panel_and_share_no_id(tmp_path: Path, load_fake: FakeUpstream) -> None:
    home = tmp_path / "home"
    pair_home(home, load_fake)
    servers = [ServeProcess(home, tmp_path / f"serve-{n}.log").start() for n in (1, 2)]
    load = Load()

    async def main() -> None:
        async with http_client(2 * CLIENTS_PER_SERVER) as client:
            per_client = PANELS_PER_SERVER // CLIENTS_PER_SERVER
            await asyncio.gather(
                *(
                    panel_worker(
                        client, server.url, load, per_client + (n < PANELS_PER_SERVER % CLIENTS_PER_SERVER), worker=n
                    )
                    for server in servers
                    for n in range(CLIENTS_PER_SERVER)
                )
            )

    try:
        asyncio.run(main())
    finally:
        for server in servers:
            server.stop()

    assert load.server_errors == []
    assert load.statuses == {200: 2 * PANELS_PER_SERVER}
    assert load.transport_errors == 0
    acknowledged = Counter(panel for panel, _calls in load.panels)
    assert [panel for panel, times in acknowledged.items() if times > 1] == []  # no id given twice
    db = stored(home)
    assert db.panels == acknowledged  # every acknowledged panel exactly once, nothing else
    assert {panel: calls for panel, calls in load.panels} == db.seats
    assert db.integrity == "ok"
    for server in servers:
        assert problems_in_log(server.log_text()) == []


# -- (c) config edits while panels run ------------------------------------------------------------

EDITS = 60
EDIT_CLIENTS = 8
MAX_PANELS_PER_CLIENT = 200  # the clients stop when the edits are done; this bounds them regardless


def test_config_edits_while_panels_run_never_answer_500(tmp_path: Path, load_fake: FakeUpstream) -> None:
    home = tmp_path / "home"
    pair_home(home, load_fake)
    server = ServeProcess(home, tmp_path / "serve.log").start()
    load, edits = Load(), Load()
    overlapped = 0
    done = asyncio.Event()

    async def editor(client: httpx2.AsyncClient) -> None:
        nonlocal overlapped
        api = f"{server.url}/api"
        for n in range(EDITS):
            members = ["fake/m1", "fake/m2"] if n % 2 else ["fake/m2", "fake/m3"]
            collection = {
                "members": members,
                "description": f"edit {n}",
                "reply": "merged" if n % 3 == 0 else "all",
                "max_explorers": n % 2,
            }
            settings = {
                "endpoint_concurrency": 4 if n % 2 else 64,
                "seat_timeout": 30 + n % 3,
                "epsilon": 0.1 * (n % 3),
            }
            overlapped += load.in_flight > 0
            await send(client, edits, "PUT", f"{api}/collections/pair", json=collection)
            await send(client, edits, "PUT", f"{api}/settings", json=settings)
            await send(client, edits, "PATCH", f"{api}/models/fake/m3", json={"enabled": n % 4 != 0})
        done.set()

    async def main() -> None:
        async with http_client(EDIT_CLIENTS + 1) as client:
            workers = [
                panel_worker(client, server.url, load, MAX_PANELS_PER_CLIENT, worker=n, stop=done)
                for n in range(EDIT_CLIENTS)
            ]
            await asyncio.gather(editor(client), *workers)

    try:
        asyncio.run(main())
    finally:
        server.stop()

    assert load.server_errors == [] and edits.server_errors == []
    assert edits.statuses == {200: 3 * EDITS}
    assert load.statuses == {200: len(load.panels)}
    # The panel clients ran until the last edit (not to their bound); at nearly every edit panels were in flight.
    assert len(load.panels) < EDIT_CLIENTS * MAX_PANELS_PER_CLIENT
    assert overlapped > EDITS // 2, overlapped
    print(f"{3 * EDITS} edits while {len(load.panels)} panels ran; panels in flight at {overlapped} of {EDITS} rounds")
    assert problems_in_log(server.log_text()) == []
    db = stored(home)
    assert set(db.panels) == {panel for panel, _calls in load.panels}


# -- (d) `kill -9` under load -------------------------------------------------------------------------

ROUNDS = 3
KILL_AFTER = 30  # panels acknowledged in a round before the server is killed
KILL_CLIENTS = 8


def test_kill_9_under_load_keeps_every_acknowledged_panel_and_verdict(tmp_path: Path, load_fake: FakeUpstream) -> None:
    home = tmp_path / "home"
    pair_home(home, load_fake)
    load = Load()
    killed_with_in_flight: list[int] = []

    async def round_(server: ServeProcess) -> None:
        stop, reached = asyncio.Event(), asyncio.Event()
        before = len(load.panels)
        async with http_client(KILL_CLIENTS) as client:
            workers = [
                asyncio.ensure_future(
                    panel_worker(
                        client,
                        server.url,
                        load,
                        100,
                        worker=n,
                        verdicts=True,
                        stop=stop,
                        reached=(before + KILL_AFTER, reached),
                    )
                )
                for n in range(KILL_CLIENTS)
            ]
            await asyncio.wait_for(reached.wait(), timeout=60)
            killed_with_in_flight.append(load.in_flight)
            await asyncio.to_thread(server.kill)
            stop.set()
            await asyncio.gather(*workers)

    logs = []
    for number in range(ROUNDS):
        server = ServeProcess(home, tmp_path / f"serve-{number}.log").start()
        try:
            asyncio.run(round_(server))
        finally:
            server.stop()  # already killed: nothing to do, unless the round failed before the kill
        logs.append(server.log_text())

    assert all(in_flight > 0 for in_flight in killed_with_in_flight), killed_with_in_flight
    assert load.server_errors == []
    assert len(load.panels) >= ROUNDS * KILL_AFTER
    # Restarted on the same home: every acknowledged panel, its seats and every acknowledged verdict.
    server = ServeProcess(home, tmp_path / "serve-after.log").start()
    try:
        missing = [
            panel
            for panel, _calls in load.panels
            if httpx2.get(f"{server.url}/bench/panels/{panel}").status_code != 200
        ]
    finally:
        server.stop()
    assert missing == []
    logs.append(server.log_text())
    assert [problems_in_log(log) for log in logs] == [[]] * (ROUNDS + 1)
    db = stored(home)
    assert db.integrity == "ok"
    assert all(db.seats[panel] == calls for panel, calls in load.panels)
    assert set(load.verdicts) <= db.verdicts
    print(
        f"kill -9 x{ROUNDS}: {len(load.panels)} panels and {len(load.verdicts)} verdicts acknowledged, all stored; "
        f"{load.transport_errors} requests cut by the kills (in flight at each kill: {killed_with_in_flight})"
    )
