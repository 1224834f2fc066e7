"""`benchwarmers ask` through a running bench, and `benchwarmers serve` as a real process."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import httpx2
import orjson
from typer.testing import CliRunner

from benchwarmers.cli.app import app
from tests.benchserver import free_port
from tests.test_gateway_panels import collection

BENCHWARMERS = str(Path(sys.executable).with_name("benchwarmers"))


def test_ask_shows_each_seat_and_its_call_id(bench_with_roster, monkeypatch):
    collection(bench_with_roster, "pair", ["llama-3.3-70b", "qwen3-32b"], max_explorers=0)
    monkeypatch.setenv("BENCHWARMERS_URL", bench_with_roster.url)
    monkeypatch.setenv("COLUMNS", "200")
    result = CliRunner().invoke(app, ["ask", "pair", "Is 7 prime?"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].startswith("bench/pair · panel p")
    assert lines[0].endswith("· shape general (default)")
    panel = lines[0].split(" · ")[1].removeprefix("panel ")
    assert "answer from llama-3.3-70b" in result.output
    assert "answer from qwen3-32b" in result.output
    assert f"{panel}.member1 │ fake/llama-3.3-70b │ ok" in result.output
    assert f"{panel}.member2 │ fake/qwen3-32b     │ ok" in result.output
    assert lines[-1] == "judge each: benchwarmers verdict CALL --useful|--not-useful [--note ...]"

    raw = CliRunner().invoke(app, ["ask", "bench/pair", "Is 7 prime?", "--json", "--with", "fake/phi-4"])
    reply = orjson.loads(raw.output)
    assert [s["alias"] for s in reply["bench"]["seats"]] == ["fake/llama-3.3-70b", "fake/qwen3-32b", "fake/phi-4"]


def test_ask_explains_refusals_and_a_missing_bench(bench_with_roster, monkeypatch):
    monkeypatch.setenv("BENCHWARMERS_URL", bench_with_roster.url)
    refused = CliRunner().invoke(app, ["ask", "bench/none", "hi"])
    assert refused.exit_code == 1
    assert refused.output == (
        "error: 404: collection bench/none does not exist. No collections exist yet: create one with "
        "`benchwarmers collection add`.\n"
    )
    monkeypatch.setenv("BENCHWARMERS_URL", f"http://127.0.0.1:{free_port()}")
    down = CliRunner().invoke(app, ["ask", "bench/none", "hi"])
    assert down.exit_code == 1
    assert down.output.startswith("error: no bench is answering at http://127.0.0.1:")


def test_serve_answers_healthz_and_migrates_on_start(tmp_path):
    port = free_port()
    env = {**os.environ, "BENCHWARMERS_HOME": str(tmp_path / "home")}
    process = subprocess.Popen(
        [BENCHWARMERS, "serve", "--bind", f"127.0.0.1:{port}"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                response = httpx2.get(f"http://127.0.0.1:{port}/healthz")
                break
            except httpx2.ConnectError:
                assert time.monotonic() < deadline, "serve did not start"
                assert process.poll() is None, process.stdout.read().decode()
                time.sleep(0.1)
        assert response.status_code == 200
        assert response.json()["status"] == "ok"
        ready = httpx2.get(f"http://127.0.0.1:{port}/readyz")
        assert ready.json() == {"status": "ready", "database": "ok"}
        assert (tmp_path / "home" / "bench.db").exists()
    finally:
        process.terminate()
        process.wait(timeout=10)
