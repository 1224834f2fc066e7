"""Request bodies in memory: 100 concurrent 19 MB bodies at a real `benchwarmers serve` are taken a
budget at a time (the rest wait, then get 503 with Retry-After), its RSS stays within idle + the budget,
/healthz answers meanwhile, and the memory goes back once the burst is over. perf/bodies.py measures the
same at the default budget (docs/BENCHMARKS.md)."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import os
import socket
import threading
import time
from collections import Counter
from pathlib import Path

import httpx2
import orjson

from benchwarmers.errors import Unavailable
from benchwarmers.server.body_memory import BodyBudget
from tests.fakes.upstream import FakeUpstream
from tests.support.benchserver import BenchServer, ServeProcess, add_fake_endpoint, listed
from tests.support.panels import collection

MiB = 1024 * 1024
BUDGET = 128 * MiB  # seven 19 MB bodies at once
WAIT = 1.0  # seconds a body waits for room before its 503
SIZE = 19_000_000
COUNT = 100
# Beyond the budget: the one body being parsed beside its bytes (large bodies are parsed one at a
# time), uvicorn's buffer of each connection waiting for room (its first 64 KiB and one read of up to
# 256 KiB), and the heap's own slack.
MARGIN = SIZE + COUNT * 320 * 1024 + 24 * MiB
SLICE = 256 * 1024
BUSY = {
    "error": {
        "message": "the bench is holding its whole memory budget for request bodies (134.2 MB, "
        "BENCHWARMERS_BODY_MEMORY_BUDGET) for other large requests, and this body of 19.0 MB did not fit within "
        "1 s: retry after 2 s, or send images as https:// URLs",
        "type": "server_error",
        "param": None,
        "code": "body_memory_busy",
    }
}


def image_request(size: int) -> tuple[bytes, bytes, bytes]:
    """A chat request of exactly `size` bytes with one image as a data URL: (head, URL, tail); every
    request shares the one URL, so the test holds 19 MB, not 1.9 GB."""
    head = b'{"model":"bench/eyes","messages":[{"role":"user","content":[{"type":"text","text":"What is this?"},'
    head += b'{"type":"image_url","image_url":{"url":"data:image/jpeg;base64,'
    tail = b'"}}]}]}'
    payload = base64.b64encode(os.urandom((size - len(head) - len(tail)) // 4 * 3))
    return head, payload, tail + b" " * (size - len(head) - len(payload) - len(tail))


def memory(pid: int) -> dict[str, int]:
    found = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("VmRSS", "VmHWM"):
            found[name] = int(value.split()[0]) * 1024
    return found


async def post(port: int, pieces: tuple[bytes, ...]) -> tuple[int, dict[bytes, bytes], bytes]:
    """POST the body in slices while reading: a reply that comes before the body is all sent (a 503)
    stops the sending, as a client that reads while it writes would."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)

    async def send() -> None:
        length = sum(len(piece) for piece in pieces)
        writer.write(
            b"POST /v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n"
            b"content-length: %d\r\n\r\n" % length
        )
        for piece in pieces:
            view = memoryview(piece)
            for start in range(0, len(view), SLICE):
                writer.write(view[start : start + SLICE])
                await writer.drain()

    sending = asyncio.ensure_future(send())
    try:
        head = await reader.readuntil(b"\r\n\r\n")
        status_line, *lines = head[:-4].split(b"\r\n")
        headers = dict(line.lower().split(b": ", 1) for line in lines)
        body = await reader.readexactly(int(headers[b"content-length"]))
    finally:
        sending.cancel()
        with contextlib.suppress(asyncio.CancelledError, ConnectionError):
            await sending
        writer.close()
    return int(status_line.split(b" ")[1]), headers, body


def poll_health(port: int, stop: threading.Event, latencies: list[float]) -> None:
    """/healthz from a thread of its own, one request after another, until `stop`."""
    while not stop.is_set():
        started = time.perf_counter()
        with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
            sock.sendall(b"GET /healthz HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\n\r\n")
            reply = b""
            while chunk := sock.recv(65536):
                reply += chunk
        assert reply.startswith(b"HTTP/1.1 200 OK\r\n"), reply[:200]
        latencies.append(time.perf_counter() - started)
        stop.wait(0.05)


def test_100_concurrent_19_mb_bodies_stay_within_the_body_memory_budget(tmp_path):
    pieces = image_request(SIZE)
    assert sum(map(len, pieces)) == SIZE
    with FakeUpstream(record=False) as fake:
        fake.script("eye", reply="Noise, seen.")
        server = ServeProcess(tmp_path / "home", body_memory_budget=BUDGET, body_memory_wait=WAIT).start()
        try:
            add_fake_endpoint(server, fake, models=[listed("eye", vision=True)])
            collection(server, "eyes", ["eye"], max_explorers=0)
            warm = asyncio.run(post(server.port, (pieces[0], b"iVBORw0KGgo=", pieces[2].rstrip())))
            assert warm[0] == 200, warm[2][:300]
            pid = server.pid
            Path(f"/proc/{pid}/clear_refs").write_text("5")  # VmHWM from what is resident now
            idle = memory(pid)["VmRSS"]

            stop, latencies = threading.Event(), []
            poller = threading.Thread(target=poll_health, args=(server.port, stop, latencies))
            poller.start()
            started = time.monotonic()

            async def burst() -> list[tuple[int, dict[bytes, bytes], bytes]]:
                return await asyncio.gather(*(post(server.port, pieces) for _ in range(COUNT)))

            try:
                replies = asyncio.run(burst())
            finally:
                stop.set()
                poller.join()
            took = time.monotonic() - started
            peak = memory(pid)["VmHWM"]
            after = memory(pid)["VmRSS"]
        finally:
            server.stop()

    statuses = Counter(status for status, _, _ in replies)
    assert set(statuses) <= {200, 503}, statuses
    assert statuses[200] >= BUDGET // SIZE  # a budget's worth at once, and those that waited for room
    for status, headers, body in replies:
        if status == 200:
            assert [seat["answer"] for seat in orjson.loads(body)["bench"]["seats"]] == ["Noise, seen."]
        else:
            assert (headers[b"retry-after"], orjson.loads(body)) == (b"2", BUSY)
    above = peak - idle
    assert above < BUDGET + MARGIN, f"peak {peak / MiB:.0f} MiB, idle {idle / MiB:.0f} MiB ({took:.1f} s, {statuses})"
    assert latencies and max(latencies) < 1.0, f"/healthz: {sorted(latencies)[-5:]} ({took:.1f} s)"
    assert after - idle < 32 * MiB, f"after {after / MiB:.0f} MiB, idle {idle / MiB:.0f} MiB"
    print(
        f"{took:.1f} s, {statuses}, peak {above / MiB:.0f} MiB above idle, after {(after - idle) / MiB:.0f} MiB, "
        f"/healthz max {max(latencies) * 1000:.0f} ms of {len(latencies)}"
    )


# -- every body gives its memory back -------------------------------------------------------------------


def _given_back(budget: BodyBudget) -> int:
    """What the budget still counts once the server is done (polled: the request ends on its thread)."""
    deadline = time.monotonic() + 10
    while budget.used and time.monotonic() < deadline:
        time.sleep(0.01)
    return budget.used


def test_every_body_gives_its_memory_back_when_its_request_ends(tmp_path, fake_upstream):
    fake_upstream.script("eye", reply="Noise, seen.")
    fake_upstream.script("slow-eye", reply="Slowly seen.", latency=3.0)
    server = BenchServer(tmp_path / "home").start()
    try:
        add_fake_endpoint(server, fake_upstream, models=[listed("eye", vision=True), listed("slow-eye", vision=True)])
        collection(server, "eyes", ["eye"], max_explorers=0)
        collection(server, "slow", ["slow-eye"], max_explorers=0)
        budget = server._server.config.app.state.body_budget  # type: ignore[union-attr]
        head, payload, tail = image_request(2_000_000)
        body = head + payload + tail
        chat = f"{server.v1}/chat/completions"
        headers = {"content-type": "application/json"}

        assert httpx2.post(chat, content=body, headers=headers, timeout=30).status_code == 200
        assert _given_back(budget) == 0
        pieces = (body[i : i + 100_000] for i in range(0, len(body), 100_000))
        assert httpx2.post(chat, content=pieces, headers=headers, timeout=30).status_code == 200  # chunked
        assert _given_back(budget) == 0
        assert httpx2.post(chat, content=b"x" * 2_000_000, headers=headers, timeout=30).status_code == 400
        assert _given_back(budget) == 0
        with socket.create_connection(("127.0.0.1", server.port)) as sock:  # an upload abandoned halfway
            sock.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-length: 5000000\r\n\r\n")
            sock.sendall(body[:1_000_000])
        assert _given_back(budget) == 0

        streamed = body.replace(b'"model":"bench/eyes"', b'"model":"bench/slow","stream":true')
        with httpx2.stream("POST", chat, content=streamed, headers=headers, timeout=30) as response:
            first = next(response.iter_raw())
            held = budget.used  # the panel is running: its body is still held
        assert (response.status_code, first.startswith(b":"), held) == (200, True, len(streamed))
        assert _given_back(budget) == 0  # the client left; the panel ended, and gave it back
    finally:
        server.stop()


def test_the_budget_serves_waiters_in_order_and_refuses_after_its_wait():
    async def main() -> list[object]:
        budget = BodyBudget(100, wait=0.5)
        await budget.take(60)
        order: list[object] = []

        async def take(size: int) -> None:
            try:
                await budget.take(size)
            except Unavailable as refused:
                order.append((size, refused.status, refused.headers))
            else:
                order.append(size)

        big, small = asyncio.ensure_future(take(80)), asyncio.ensure_future(take(30))
        await asyncio.sleep(0)  # both wait: the small one would fit, but it came after the big one
        order.append(("waiting", budget.used))
        budget.give_back(60)  # room for the first in line only
        await big
        order.append(("waiting", budget.used))
        budget.give_back(80)
        await small
        await take(90)  # 30 + 90 never fit within the wait
        return [*order, budget.used]

    assert asyncio.run(main()) == [("waiting", 60), 80, ("waiting", 80), 30, (90, 503, {"Retry-After": "2"}), 30]
