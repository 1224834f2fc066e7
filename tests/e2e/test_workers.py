"""Past one process: `serve --workers N` on one port, and two hosts (two `serve` processes with
homes of their own) sharing one PostgreSQL and one Redis."""

from __future__ import annotations

import asyncio
import shutil
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest
from prometheus_client.parser import text_string_to_metric_families

from benchwarmers.bench.history import CATCH_UP
from tests.support.benchserver import ServeProcess, add_fake_endpoint, listed
from tests.support.panels import collection
from tests.support.workers import worker_pids, worker_processes

ROSTER = ("phi-4", "qwen3-32b", "kimi-k2")


def ask(url: str, text: str, model: str = "bench/one", **headers: str) -> dict:
    body = {"model": model, "messages": [{"role": "user", "content": text}]}
    reply = httpx2.post(f"{url}/v1/chat/completions", json=body, headers=headers, timeout=60)
    assert reply.status_code == 200, reply.text
    return reply.json()


def panels_counted(url: str) -> float:
    text = httpx2.get(f"{url}/metrics").text
    return sum(
        sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
        if sample.name == "benchwarmers_panels_total"
    )


@pytest.fixture
def two_hosts(pg_cluster, redis_url, tmp_path: Path, fake) -> Iterator[tuple[ServeProcess, ServeProcess]]:
    """Two `serve` processes, each with a home of its own (as on two machines), one PostgreSQL, one Redis."""
    url = pg_cluster.new_database()
    first = ServeProcess(tmp_path / "host-a", database_url=url, redis_url=redis_url).start()
    second: ServeProcess | None = None
    try:
        for model in ROSTER:
            fake.script(model, latency=0.01)
        add_fake_endpoint(first, fake, models=[listed(m) for m in ROSTER])
        # The hosts share the key that seals provider keys in the database (docs/DEPLOY.md).
        second_home = tmp_path / "host-b"
        second_home.mkdir(mode=0o700)
        shutil.copy2(first.settings.home / "secret.key", second_home / "secret.key")
        second = ServeProcess(second_home, database_url=url, redis_url=redis_url).start()
        yield first, second
    finally:
        if second is not None:
            second.stop()
        first.stop()
        pg_cluster.drop(url)


def test_two_hosts_share_config_replays_staleness_and_pacing(two_hosts, fake):
    a, b = two_hosts
    collection(a, "one", ["phi-4"], max_explorers=1)
    a.admin(
        lambda bench: bench.gateway_settings.set_gateway(epsilon=0, explorer_floor=1)
    )  # the stalest explores, always

    # A config change made on host A is seen by host B's next request (the version is in Redis).
    a.admin(lambda bench: bench.collections.edit_collection("one", {"description": "edited on host a"}))
    listed_b = {m["id"]: m for m in httpx2.get(f"{b.url}/v1/models").json()["data"]}
    assert listed_b["bench/one"]["description"] == "edited on host a", listed_b["bench/one"]

    # Staleness: the explorer host A seated is not the stalest for host B (it catches up with A's seats).
    first = ask(a.url, "first")["bench"]["seats"][1]["alias"]
    time.sleep(CATCH_UP)  # B looks at other processes' seats at most this often
    second = ask(b.url, "second")["bench"]["seats"][1]["alias"]
    assert {first, second} == {"fake/qwen3-32b", "fake/kimi-k2"}

    # An SDK retry sent to the other host while the first attempt runs gets the same panel.
    fake.script("phi-4", latency=1.5)
    fake.clear()
    replies: list[dict] = []
    original = threading.Thread(target=lambda: replies.append(ask(a.url, "slow question")))
    original.start()
    deadline = time.monotonic() + 30
    while not any(r.json["model"] == "phi-4" for r in fake.chat_requests):  # A has reserved and called
        assert time.monotonic() < deadline
        time.sleep(0.02)
    retried = ask(b.url, "slow question", **{"x-stainless-retry-count": "1"})
    original.join()
    assert retried["bench"]["panel"] == replies[0]["bench"]["panel"]
    assert retried == replies[0]
    assert [r.json["model"] for r in fake.chat_requests].count("phi-4") == 1

    # Pacing: one call a minute to phi-4, spent on host A, is spent for host B too.
    fake.script("phi-4", latency=0.01)
    a.admin(lambda bench: bench.models.set_model("fake/phi-4", limits={"requests-minute": 1}))
    a.admin(lambda bench: bench.collections.edit_collection("one", {"max_explorers": 0}))
    # A seat waits for a slot that frees up within its timeout; this one frees up in a minute.
    a.admin(lambda bench: bench.gateway_settings.set_gateway(seat_timeout=10))
    assert [s["status"] for s in ask(a.url, "paced 1")["bench"]["seats"]] == ["ok"]
    assert [s["status"] for s in ask(b.url, "paced 2")["bench"]["seats"]] == ["paced"]


@pytest.mark.sqlite_only
def test_two_workers_on_sqlite_answer_every_panel_and_count_them_together(tmp_path, fake):
    server = ServeProcess(tmp_path / "home")
    server.workers = 2
    server.start()
    try:
        for model in ROSTER:
            fake.script(model, latency=0.01)
        add_fake_endpoint(server, fake, models=[listed(m) for m in ROSTER])
        collection(server, "one", ["phi-4", "qwen3-32b"], max_explorers=1)
        # Both workers up and counted (a worker reports itself once it has answered a request; each
        # request here is a new connection, which either worker may accept).
        deadline = time.monotonic() + 60
        while len(worker_pids(server.url)) < 2:
            assert time.monotonic() < deadline, "the second worker never answered"
            httpx2.get(f"{server.url}/healthz")
        sent = 60

        async def main() -> set[str]:
            async with httpx2.AsyncClient(timeout=60) as http:

                async def one(i: int) -> str:
                    body = {"model": "bench/one", "messages": [{"role": "user", "content": f"q{i}"}]}
                    reply = await http.post(f"{server.v1}/chat/completions", json=body)
                    assert reply.status_code == 200, reply.text
                    return str(reply.json()["bench"]["panel"])

                return set(await asyncio.gather(*(one(i) for i in range(sent))))

        answered = asyncio.run(main())
        assert len(answered) == sent
        # Whichever worker answers the scrape, it adds up every worker's figures.
        assert [panels_counted(server.url) for _ in range(4)] == [sent] * 4
        stored = server.admin(lambda bench: bench.log.head(limit=sent + 10))
        assert set(stored["ids"]) == answered
        # Each worker's loop accepts one waiting connection per wake-up (libuv), so a burst of new
        # connections is shared between the workers rather than taken by the first awake.
        workers = worker_processes(server.pid)
        assert len(workers) == 2
        for pid in workers:
            assert b"UV_TCP_SINGLE_ACCEPT=1" in Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    finally:
        server.stop()
    log = (server.settings.home / f"serve-{server.port}.log").read_text()
    assert "locked" not in log and "Traceback" not in log, log
