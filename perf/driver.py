"""The load driver: a closed loop of keep-alive HTTP/1.1 connections over raw asyncio streams.

Each of `concurrency` workers owns one connection and sends its next request as soon as the last
reply has fully arrived, until `count` requests have been sent in all. A worker times one request
from the first byte written to the last byte read (for a stream, the `data: [DONE]` frame) and
keeps the bench's own account of its seats (`bench.seats[].seconds`) from the reply.

Raw streams rather than an HTTP library: on a 2-core machine that the gateway and the fake provider
share with the driver, every CPU-millisecond the driver spends is one the gateway does not get.
`python -m perf.run --driver-ceiling` measures what this driver manages with no gateway in between.
"""

from __future__ import annotations

import asyncio
import itertools
import resource
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import orjson

# A body is built per request so that no two panels are the same request (the gateway replays
# identical requests only for retries, but a benchmark should not lean on that either way).
BodyFactory = Callable[[int], bytes]


@dataclass
class Sample:
    """One request as the client saw it."""

    wall: float  # seconds, first byte sent → last byte read
    status: int
    first_byte: float = 0.0  # seconds to the response head (streams: headers come at once)
    seats: list[float] = field(default_factory=list)  # bench.seats[].seconds, as the gateway measured
    seat_errors: int = 0
    error: str | None = None
    started: float = 0.0  # time.monotonic() when the request's first byte went (lines up with the server's probes)


@dataclass
class Load:
    """A finished run: every sample, how long it took, and what the driver itself spent."""

    samples: list[Sample]
    seconds: float
    driver_cpu: float  # seconds of this process's CPU during the run


class _Connection:
    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def open(self) -> None:
        self.reader, self.writer = await asyncio.open_connection(self.host, self.port, limit=1 << 20)

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
        self.reader = self.writer = None


async def _read_head(reader: asyncio.StreamReader) -> tuple[int, dict[str, str]]:
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head[:-4].decode("latin-1").split("\r\n")
    status = int(lines[0].split(" ", 2)[1])
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return status, headers


async def _read_chunked(reader: asyncio.StreamReader) -> bytes:
    parts: list[bytes] = []
    while True:
        size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
        if size == 0:
            await reader.readuntil(b"\r\n")
            return b"".join(parts)
        parts.append(await reader.readexactly(size))
        await reader.readexactly(2)


def seats_of(reply: Any) -> tuple[list[float], int]:
    """The seats' own times and how many failed, from a reply or a stream chunk's `bench`."""
    bench = reply.get("bench") if isinstance(reply, dict) else None
    seats = bench.get("seats") if isinstance(bench, dict) else None
    if not isinstance(seats, list):
        return [], 0
    return [float(s.get("seconds") or 0.0) for s in seats], sum(s.get("status") != "ok" for s in seats)


def _parse(status: int, body: bytes, stream: bool) -> Sample:
    sample = Sample(wall=0.0, status=status)
    if status != 200:
        sample.error = f"HTTP {status}: {body[:200]!r}"
        return sample
    if stream:
        if b"data: [DONE]" not in body:
            sample.error = "stream ended without [DONE]"
            return sample
        for frame in body.split(b"\n\n"):
            if frame.startswith(b"data: {") and b'"bench"' in frame:
                sample.seats, sample.seat_errors = seats_of(orjson.loads(frame[6:]))
                break
        return sample
    try:
        reply = orjson.loads(body)
    except orjson.JSONDecodeError:
        sample.error = "reply is not JSON"
        return sample
    sample.seats, sample.seat_errors = seats_of(reply)
    return sample


def request_bytes(host: str, port: int, path: str, body: bytes, headers: dict[str, str] | None = None) -> bytes:
    lines = [
        f"POST {path} HTTP/1.1",
        f"host: {host}:{port}",
        "content-type: application/json",
        f"content-length: {len(body)}",
        *(f"{name}: {value}" for name, value in (headers or {}).items()),
    ]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


async def _one(connection: _Connection, request: bytes, stream: bool) -> Sample:
    if connection.writer is None:
        await connection.open()
    assert connection.reader is not None and connection.writer is not None
    at = time.monotonic()
    started = time.perf_counter()
    connection.writer.write(request)
    await connection.writer.drain()
    status, headers = await _read_head(connection.reader)
    first_byte = time.perf_counter() - started
    if headers.get("transfer-encoding", "").lower() == "chunked":
        body = await _read_chunked(connection.reader)
    else:
        body = await connection.reader.readexactly(int(headers.get("content-length") or 0))
    wall = time.perf_counter() - started
    if headers.get("connection", "").lower() == "close":
        connection.close()
    sample = _parse(status, body, stream)
    sample.wall, sample.first_byte, sample.started = wall, first_byte, at
    return sample


async def run_load(
    host: str,
    port: int,
    path: str,
    make_body: BodyFactory,
    *,
    count: int,
    concurrency: int,
    stream: bool = False,
    headers: dict[str, str] | None = None,
    timeout: float = 120.0,
    stagger: float = 0.0,
) -> Load:
    """Send `count` requests over `concurrency` connections; a failed request is a sample with `error`.

    `stagger` spreads the workers' first requests evenly over that many seconds. Against a provider
    with a fixed latency, workers that start together stay in step for the whole run and reach
    the gateway in waves; spread over one latency they arrive like independent callers.
    """
    numbers = itertools.count()
    samples: list[Sample] = []
    workers = min(concurrency, count)

    async def worker(index: int) -> None:
        if stagger > 0:
            await asyncio.sleep(stagger * index / workers)
        connection = _Connection(host, port)
        try:
            while (n := next(numbers)) < count:
                request = request_bytes(host, port, path, make_body(n), headers)
                try:
                    async with asyncio.timeout(timeout):
                        samples.append(await _one(connection, request, stream))
                except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, TimeoutError) as exc:
                    connection.close()
                    samples.append(Sample(wall=0.0, status=0, error=f"{type(exc).__name__}: {exc}"))
        finally:
            connection.close()

    cpu_before = _cpu()
    started = time.perf_counter()
    await asyncio.gather(*(worker(index) for index in range(workers)))
    return Load(samples=samples, seconds=time.perf_counter() - started, driver_cpu=_cpu() - cpu_before)


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def chat_body(model: str, *, stream: bool = False, text: str = "Name one prime number.") -> BodyFactory:
    """A small chat request; the number keeps each body distinct."""

    def make(n: int) -> bytes:
        body: dict[str, Any] = {
            "model": model,
            "messages": [{"role": "user", "content": f"{text} (request {n})"}],
            "max_tokens": 64,
        }
        if stream:
            body["stream"] = True
        return orjson.dumps(body)

    return make


def image_body(model: str, data_url: str) -> BodyFactory:
    """A chat request carrying one large image as a data URL (encoded once, spliced per request)."""
    head = orjson.dumps(model)
    url = orjson.dumps(data_url)

    def make(n: int) -> bytes:
        text = orjson.dumps(f"What is in this picture? (request {n})")
        return (
            b'{"model":' + head + b',"max_tokens":64,"messages":[{"role":"user","content":['
            b'{"type":"text","text":' + text + b'},{"type":"image_url","image_url":{"url":' + url + b"}}]}]}"
        )

    return make
