"""Fixtures for end-to-end tests: a fake provider with a realistic roster, a real bench server, a real redis-server."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.fakes.upstream import FakeUpstream

# A plugin of every test module (tests/conftest.py): the server and the SDK are imported by the fixtures that
# use them, so that collecting a test that needs neither does not load them.
if TYPE_CHECKING:
    from openai import OpenAI

    from tests.support.benchserver import BenchServer

# Ten free models in eight families; windows differ so size filters can be seen working.
ROSTER = {
    "llama-3.3-70b": 128_000,
    "llama-3.1-8b": 8_000,
    "qwen3-32b": 32_000,
    "qwen3-coder": 256_000,
    "gemma-3-27b": 96_000,
    "mistral-small": 32_000,
    "deepseek-r1": 64_000,
    "phi-4": 16_000,
    "glm-4.5-air": 128_000,
    "kimi-k2": 128_000,
}


LLAMA, QWEN = "llama-3.3-70b", "qwen3-32b"


@pytest.fixture
def pair(server: BenchServer, fake_upstream: FakeUpstream) -> BenchServer:
    """Two free models of two families on a paid endpoint; `solo` seats llama plus one explorer."""
    from tests.support.benchserver import add_fake_endpoint, listed

    for model in (LLAMA, QWEN):
        fake_upstream.script(model)
    add_fake_endpoint(server, fake_upstream, models=[listed(LLAMA), listed(QWEN)], free_tier=False)
    solo = {"name": "solo", "members": [f"fake/{LLAMA}"], "description": "solo work", "tags": ["test"]}
    server.admin(lambda bench: bench.collections.add_collection({**solo, "max_explorers": 1}))
    return server


@pytest.fixture
def fake() -> Iterator[FakeUpstream]:
    with FakeUpstream() as upstream:
        for model in ROSTER:
            upstream.script(model, latency=0.02)
        yield upstream


@pytest.fixture
def server(tmp_path: Path) -> Iterator[BenchServer]:
    from tests.support.benchserver import BenchServer

    bench_server = BenchServer(tmp_path / "home").start()
    try:
        yield bench_server
    finally:
        bench_server.stop()


@pytest.fixture
def bench_with_roster(server: BenchServer, fake: FakeUpstream) -> BenchServer:
    from tests.support.benchserver import add_fake_endpoint, listed

    add_fake_endpoint(server, fake, models=[listed(m, w) for m, w in ROSTER.items()])
    return server


@pytest.fixture
def client(server: BenchServer) -> OpenAI:
    from openai import OpenAI

    return OpenAI(base_url=server.v1, api_key="not-needed-on-loopback", max_retries=0, timeout=30)


class RedisServer:
    """A redis-server on a free loopback port, that a test may stop and start again (same port)."""

    def __init__(self, folder: Path) -> None:
        from tests.support.benchserver import free_port

        binary = shutil.which("redis-server")
        if binary is None:
            pytest.skip("redis-server is not installed (apt-get install redis-server)")
        pytest.importorskip("redis", reason="the redis extra is not installed (pip install 'benchwarmers[redis]')")
        self.binary, self.folder, self.port = binary, folder, free_port()
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> RedisServer:
        options = ["--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
        self.process = subprocess.Popen(
            [self.binary, *options, "--dir", str(self.folder)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        deadline = time.monotonic() + 10
        while True:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1) as sock:
                    sock.sendall(b"PING\r\n")
                    if sock.recv(16).startswith(b"+PONG"):
                        return self
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("redis-server did not start")
            time.sleep(0.05)

    def stop(self) -> None:
        if self.process is not None:
            self.process.kill()
            self.process.wait(timeout=10)
            self.process = None


@pytest.fixture
def redis_server(tmp_path: Path) -> Iterator[RedisServer]:
    server = RedisServer(tmp_path).start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def redis_url(redis_server: RedisServer) -> str:
    return redis_server.url
