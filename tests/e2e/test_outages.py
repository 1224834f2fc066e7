"""PostgreSQL and Redis going away under load, and coming back: requests get a clear 503 while the
database is gone, every panel and verdict that was acknowledged is stored, and the same server
process serves again without a restart. While Redis is gone panels are refused with a 503 too
(their calls could not be paced against what other processes spend), and served again when it
returns. `/readyz` says why it is not ready meanwhile.

Start-up during an outage: a server, or a worker `serve --workers 2` restarts, while PostgreSQL
is down serves `/healthz` and a 503 `/readyz` and opens the bench once the database answers,
instead of exiting with uvicorn's start-up failure (which stopped the whole manager); a worker
that does fail its start-up after the bench has served is started again."""

from __future__ import annotations

import asyncio
import itertools
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import httpx2
import pytest
from sqlalchemy import select

from benchwarmers.store.db import create_engine
from benchwarmers.store.schema import panels, seats, verdicts
from tests.support.benchserver import BenchServer, ServeProcess, add_fake_endpoint, free_port, listed
from tests.support.gateway_fixtures import RedisServer
from tests.support.panels import collection
from tests.support.postgres import Cluster, remove_cluster, start_cluster
from tests.support.workers import worker_pids, worker_processes

DATABASE_GONE = {
    "error": {
        "message": "the bench's database cannot be reached right now; nothing was recorded, try again shortly",
        "type": "server_error",
        "param": None,
        "code": "database_unavailable",
    }
}
REDIS_GONE = {
    "error": {
        "message": "the shared rate-limit store (BENCHWARMERS_REDIS_URL) is not answering, so the providers' "
        "limits cannot be kept across processes; nothing was called, try again shortly",
        "type": "server_error",
        "param": None,
        "code": "rate_limits_unavailable",
    }
}
AWAY = {
    "status": "not ready",
    "database": "unreachable",
    "reasons": ["database: not reachable; requests that need it get 503 until it answers"],
}
REDIS_AWAY = {
    "status": "not ready",
    "database": "ok",
    "reasons": ["redis: the shared rate-limit store is not answering; panels are refused until it does"],
}


@pytest.fixture
def own_cluster() -> Iterator[Cluster]:
    """A cluster of this test's own: it is stopped and started (the session's stays up)."""
    cluster = start_cluster(free_port())
    try:
        yield cluster
    finally:
        remove_cluster(cluster)


@dataclass
class Load:
    """Threads sending panels, and a verdict on each panel acknowledged, until stopped."""

    server: BenchServer
    headers: dict[str, str]
    panels: list[str] = field(default_factory=list)  # acknowledged (200)
    judged: list[str] = field(default_factory=list)  # calls whose verdict was acknowledged
    refusals: list[tuple[int, dict]] = field(default_factory=list)
    stop: threading.Event = field(default_factory=threading.Event)

    def run(self, threads: int = 4) -> list[threading.Thread]:
        started = [threading.Thread(target=self._loop, args=(i,), daemon=True) for i in range(threads)]
        for thread in started:
            thread.start()
        return started

    def _loop(self, worker: int) -> None:
        sent = 0
        with httpx2.Client(timeout=30, headers=self.headers) as client:
            while not self.stop.is_set():
                sent += 1
                body = {"model": "bench/solo", "messages": [{"role": "user", "content": f"q{worker}-{sent}"}]}
                reply = client.post(f"{self.server.v1}/chat/completions", json=body)
                if reply.status_code != 200:
                    self.refusals.append((reply.status_code, reply.json()))
                    continue
                self.panels.append(reply.json()["bench"]["panel"])
                call = reply.json()["bench"]["seats"][0]["call"]
                verdict = client.post(f"{self.server.url}/bench/verdict", json={"call": call, "useful": True})
                if verdict.status_code == 200:
                    self.judged.append(call)
                else:
                    self.refusals.append((verdict.status_code, verdict.json()))

    def wait_for(self, what: Callable[[], bool], message: str) -> None:
        deadline = time.monotonic() + 60
        while not what():
            assert time.monotonic() < deadline, message
            time.sleep(0.05)


def stored(url: str) -> tuple[set[str], set[str], set[str]]:
    async def main() -> tuple[set[str], set[str], set[str]]:
        engine = create_engine(url)
        async with engine.connect() as conn:
            found = set((await conn.scalars(select(panels.c.id).where(panels.c.response.is_not(None)))).all())
            panel_seats = set((await conn.scalars(select(seats.c.panel_id))).all())
            judged = set((await conn.scalars(select(verdicts.c.call))).all())
        await engine.dispose()
        return found, panel_seats, judged

    return asyncio.run(main())


def test_postgres_and_redis_stopped_under_load_and_started_again(own_cluster, tmp_path, fake):
    redis = RedisServer(tmp_path).start()
    url = own_cluster.new_database()
    server = BenchServer(tmp_path / "home", database_url=url, redis_url=redis.url, require_keys=True).start()
    load: Load | None = None
    try:
        add_fake_endpoint(server, fake, models=[listed("phi-4"), listed("qwen3-32b")])
        collection(server, "solo", ["phi-4"], max_explorers=0)
        key, _ = server.admin(lambda bench: bench.keys.create("loader", rpm=100_000))  # counted in Redis
        load = Load(server, {"authorization": f"Bearer {key}"})
        threads = load.run()
        load.wait_for(lambda: len(load.judged) >= 10, "no panel was acknowledged")

        own_cluster.stop()  # as a crash would: connections in use are cut
        load.wait_for(lambda: len(load.refusals) >= 10, "nothing was refused while PostgreSQL was down")
        database_away = httpx2.get(f"{server.url}/readyz")
        assert (database_away.status_code, database_away.json()) == (503, AWAY)
        before = len(load.judged)
        own_cluster.start()
        load.wait_for(lambda: len(load.judged) >= before + 10, "the server did not recover")
        assert httpx2.get(f"{server.url}/readyz").json() == {"status": "ready", "database": "ok"}

        refused = len(load.refusals)
        redis.stop()
        load.wait_for(lambda: len(load.refusals) >= refused + 10, "nothing was refused while Redis was down")
        redis_away = httpx2.get(f"{server.url}/readyz")
        assert (redis_away.status_code, redis_away.json()) == (503, REDIS_AWAY)
        redis.start()
        before = len(load.judged)
        load.wait_for(lambda: len(load.judged) >= before + 10, "panels stopped after Redis came back")
        assert httpx2.get(f"{server.url}/readyz").json() == {"status": "ready", "database": "ok"}
    finally:
        if load is not None:
            load.stop.set()
            for thread in threads:
                thread.join(timeout=60)
        server.stop()
        redis.stop()

    assert {(status, str(body)) for status, body in load.refusals} == {
        (503, str(DATABASE_GONE)),
        (503, str(REDIS_GONE)),
    }
    found, panel_seats, judged = stored(url)
    assert set(load.panels) <= found
    assert set(load.panels) <= panel_seats
    assert set(load.judged) <= judged


WAITING = {
    "status": "not ready",
    "database": "unreachable",
    "reasons": ["database: not reachable since this process started; it opens by itself when the database answers"],
}


def with_password(url: str, password: str) -> str:
    """The cluster trusts every local connection, so a password in the URL is sent and ignored."""
    return url.replace("postgresql+asyncpg://bench@", f"postgresql+asyncpg://bench:{password}@")


def poll(what: Callable[[], bool], message: str | Callable[[], str], seconds: float = 60) -> None:
    """Wait for `what`; past the deadline fail with the message (a callable: made when it fails)."""
    deadline = time.monotonic() + seconds
    while not what():
        assert time.monotonic() < deadline, message() if callable(message) else message
        time.sleep(0.05)


def test_a_server_started_while_postgres_is_down_answers_and_opens_when_it_returns(own_cluster, tmp_path, fake, caplog):
    url = with_password(own_cluster.new_database(), "pg-secret-not-for-logs")
    own_cluster.stop()
    caplog.set_level("WARNING", logger="benchwarmers.server")
    server = BenchServer(tmp_path / "home", database_url=url).start()  # no exit code 3: it serves
    try:
        assert httpx2.get(f"{server.url}/healthz").status_code == 200
        waiting = httpx2.get(f"{server.url}/readyz")
        assert (waiting.status_code, waiting.json()) == (503, WAITING)
        body = {"model": "bench/solo", "messages": [{"role": "user", "content": "hi"}]}
        refused = httpx2.post(f"{server.v1}/chat/completions", json=body)
        assert (refused.status_code, refused.headers["retry-after"], refused.json()) == (503, "1", DATABASE_GONE)
        poll(lambda: "attempt 2;" in caplog.text, "the second attempt was never logged")

        own_cluster.start()
        poll(lambda: httpx2.get(f"{server.url}/readyz").status_code == 200, "the bench never opened")
        assert httpx2.get(f"{server.url}/readyz").json() == {"status": "ready", "database": "ok"}
        add_fake_endpoint(server, fake, models=[listed("phi-4")])
        collection(server, "solo", ["phi-4"], max_explorers=0)
        reply = httpx2.post(f"{server.v1}/chat/completions", json=body, timeout=30)
        assert reply.status_code == 200, reply.text
        assert [seat["status"] for seat in reply.json()["bench"]["seats"]] == ["ok"]
    finally:
        server.stop()
    waits = [r.getMessage() for r in caplog.records if r.getMessage().startswith("start-up: ")]
    address = url.replace("bench:pg-secret-not-for-logs@", "")
    assert waits[0] == (
        f"start-up: the database {address} could not be opened (ConnectionRefusedError) at attempt 1; "
        "trying again in 0.5 s"
    )
    assert waits[1].endswith("at attempt 2; trying again in 1.0 s")
    assert waits[-1].startswith(f"start-up: the database {address} answered at attempt ")
    assert len(waits) == int(waits[-1].split("attempt ")[1].split(";")[0])  # one line an attempt
    assert "pg-secret-not-for-logs" not in caplog.text


def test_a_worker_restarted_while_postgres_is_down_waits_and_the_bench_recovers(own_cluster, tmp_path, fake):
    url = with_password(own_cluster.new_database(), "pg-secret-not-for-logs")
    server = ServeProcess(tmp_path / "home", database_url=url)
    server.workers = 2
    server.start()
    log = server.settings.home / f"serve-{server.port}.log"
    body = {"model": "bench/solo", "messages": [{"role": "user", "content": "hi"}]}
    try:
        add_fake_endpoint(server, fake, models=[listed("phi-4")])
        collection(server, "solo", ["phi-4"], max_explorers=0)
        assert httpx2.post(f"{server.v1}/chat/completions", json=body, timeout=30).status_code == 200
        first = worker_processes(server.pid)
        assert len(first) == 2

        # A worker whose first attempt found the cluster busy opens a moment later: wait for it, so that
        # both workers have served before the outage.
        def opened_all() -> bool:
            text = log.read_text()
            return text.count("could not be opened") <= text.count("answered at attempt")

        poll(opened_all, "a worker never opened")
        text = log.read_text()
        tried, answered = text.count("could not be opened"), text.count("answered at attempt")

        own_cluster.stop()
        away = httpx2.get(f"{server.url}/readyz")
        assert (away.status_code, away.json()) == (503, AWAY)
        os.kill(first[0], signal.SIGKILL)  # the manager starts another worker while PostgreSQL is down
        poll(
            lambda: log.read_text().count("could not be opened") > tried,
            "the new worker never tried to open the database",
        )

        # The manager may have replaced that worker again by now (one that failed a health check is
        # killed and started anew): wait for exactly one worker that is not of the first pair.
        def replaced() -> list[int]:
            return [pid for pid in worker_processes(server.pid) if pid not in first]

        poll(lambda: len(replaced()) == 1, lambda: f"workers {replaced()}; the log ends:\n{log.read_text()[-3000:]}")
        new_worker = replaced()
        # The new worker answers while it waits: a new connection may reach either worker.
        seen: set[str] = set()

        def both_reasons() -> bool:
            reply = httpx2.get(f"{server.url}/readyz")
            assert reply.status_code == 503
            seen.add(reply.json()["reasons"][0])
            return seen == {WAITING["reasons"][0], AWAY["reasons"][0]}

        poll(both_reasons, f"readyz never gave both reasons (seen: {seen})")
        assert httpx2.get(f"{server.url}/healthz").status_code == 200
        refused = httpx2.post(f"{server.v1}/chat/completions", json=body, timeout=30)
        assert (refused.status_code, refused.json()) == (503, DATABASE_GONE)

        own_cluster.start()
        poll(lambda: log.read_text().count("answered at attempt") > answered, "the new worker never opened the bench")
        # Every answer from now is ready, from either worker, and the same manager serves panels.
        for i in range(20):
            ready = httpx2.get(f"{server.url}/readyz")
            assert (ready.status_code, ready.json()) == (200, {"status": "ready", "database": "ok"})
            ask = {**body, "messages": [{"role": "user", "content": f"back {i}"}]}
            reply = httpx2.post(f"{server.v1}/chat/completions", json=ask, timeout=30)
            assert reply.status_code == 200, reply.text
        assert server._process is not None and server._process.poll() is None
        assert sorted(worker_processes(server.pid)) == sorted([first[1], *new_worker])
    finally:
        server.stop()
    text = log.read_text()
    assert "failed to start" not in text and "Traceback" not in text, text
    assert "pg-secret-not-for-logs" not in text


def test_a_worker_that_fails_its_start_up_after_the_bench_served_is_started_again(pg_cluster, tmp_path, fake):
    url = pg_cluster.new_database()
    name = url.rsplit("/", 1)[1]
    server = ServeProcess(tmp_path / "home", database_url=url)
    server.workers = 2
    server.start()
    log = server.settings.home / f"serve-{server.port}.log"
    body = {"model": "bench/solo", "messages": [{"role": "user", "content": "hi"}]}
    try:
        add_fake_endpoint(server, fake, models=[listed("phi-4")])
        collection(server, "solo", ["phi-4"], max_explorers=0)
        first = worker_processes(server.pid)
        # Maintenance: new connections are refused (SQLSTATE 55000), not an outage a worker waits out,
        # so a worker started now fails its start-up (uvicorn's exit code 3) and is started again.
        pg_cluster.execute(f"ALTER DATABASE {name} ALLOW_CONNECTIONS false")
        os.kill(first[0], signal.SIGKILL)
        poll(lambda: "starting another in 1 s." in log.read_text(), "the failed worker is not started again")
        assert server._process is not None and server._process.poll() is None

        pg_cluster.execute(f"ALTER DATABASE {name} ALLOW_CONNECTIONS true")
        poll(lambda: bool(worker_pids(server.url) - {str(pid) for pid in first}), "no new worker ever served")
        for i in range(10):
            ask = {**body, "messages": [{"role": "user", "content": f"again {i}"}]}
            assert httpx2.post(f"{server.v1}/chat/completions", json=ask, timeout=30).status_code == 200
        # Both slots serve again (one may still be waiting out its pause after a second refused start).
        poll(lambda: len(worker_processes(server.pid)) == 2, "a worker slot was never filled again")
    finally:
        server.stop()
        pg_cluster.drop(url)
    assert "stopping the parent process" not in log.read_text()


def test_the_pauses_between_attempts_double_up_to_their_bound():
    from benchwarmers.server import startup, supervisor

    assert list(itertools.islice(startup.pauses(), 9)) == [0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 30.0, 30.0, 30.0]
    assert list(itertools.islice(supervisor.restart_pauses(), 7)) == [1.0, 2.0, 4.0, 8.0, 16.0, 30.0, 30.0]


def test_readyz_says_so_while_the_data_folder_is_gone(tmp_path):
    database = tmp_path / "elsewhere" / "bench.db"  # the database stays reachable: only the disk check fails
    database.parent.mkdir()
    server = BenchServer(tmp_path / "home", database_url=f"sqlite+aiosqlite:///{database}").start()
    try:
        assert httpx2.get(f"{server.url}/readyz").json() == {"status": "ready", "database": "ok"}
        (tmp_path / "home").rename(tmp_path / "unmounted")  # as a volume that went away
        gone = httpx2.get(f"{server.url}/readyz")
        assert (gone.status_code, gone.json()) == (
            503,
            {
                "status": "not ready",
                "database": "ok",
                "reasons": ["disk: the data folder is missing or cannot be read (FileNotFoundError)"],
            },
        )
        assert httpx2.get(f"{server.url}/healthz").status_code == 200
        (tmp_path / "unmounted").rename(tmp_path / "home")
        back = httpx2.get(f"{server.url}/readyz")
        assert (back.status_code, back.json()) == (200, {"status": "ready", "database": "ok"})
    finally:
        server.stop()
