"""Fixtures for end-to-end tests: a fake provider with a realistic roster, a real bench server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from openai import OpenAI

from tests.benchserver import BenchServer, add_fake_endpoint, listed
from tests.fakes.upstream import FakeUpstream

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
    bench_server = BenchServer(tmp_path / "home").start()
    try:
        yield bench_server
    finally:
        bench_server.stop()


@pytest.fixture
def bench_with_roster(server: BenchServer, fake: FakeUpstream) -> BenchServer:
    add_fake_endpoint(server, fake, models=[listed(m, w) for m, w in ROSTER.items()])
    return server


@pytest.fixture
def client(server: BenchServer) -> OpenAI:
    return OpenAI(base_url=server.v1, api_key="not-needed-on-loopback", max_retries=0, timeout=30)
