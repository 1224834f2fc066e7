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
from tests.support.benchserver import BenchServer, add_fake_endpoint, free_port, listed
from tests.support.panels import ask, collection

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


def test_every_command_suggests_close_names_for_a_typo_and_exits_1(bench_with_roster, client, monkeypatch):
    collection(bench_with_roster, "pair", ["llama-3.3-70b", "qwen3-32b"], max_explorers=0)
    ask(client, "bench/pair")
    monkeypatch.setenv("BENCHWARMERS_URL", bench_with_roster.url)
    monkeypatch.setenv("BENCHWARMERS_HOME", str(bench_with_roster.settings.home))
    shapes = "Shapes are: general, review, design, enumeration, code, writing, math, vision"
    on_roster = "is not on the roster. Did you mean fake/deepseek-r1?"
    for args, message in (
        (["ask", "bench/piar", "hi"], "404: collection bench/piar does not exist. Did you mean bench/pair? "),
        (["ask", "pair", "hi", "--shape", "reviw"], "400: bench.shape 'reviw' is not known. Did you mean review? "),
        (["ask", "pair", "hi", "--with", "deepsek-r1"], f"400: bench.with names 'deepsek-r1', which {on_roster}"),
        (["log", "--model", "deepsek-r1"],
         "no model 'deepsek-r1' on the roster or in the log. Did you mean fake/deepseek-r1?\n"),
        (["log", "--collection", "bench/piar"], "no collection bench/piar. Did you mean bench/pair?\n"),
        (["suite", "run", "--model", "deepsek-r1"], f"'deepsek-r1' {on_roster} `benchwarmers model"),
        (["suite", "run", "--dry-run", "--model", "deepsek-r1"], f"'deepsek-r1' {on_roster} "),
        (["suite", "run", "--collection", "piar"], "collection bench/piar does not exist. Did you mean bench/pair? "),
        (["leaderboard", "--shape", "reviw"], f"shape 'reviw' is not known. Did you mean review? {shapes}\n"),
    ):  # fmt: skip
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 1, (args, result.output)
        assert result.output.startswith(f"error: {message}"), (args, result.output)
        assert result.output.count("\n") == 1, (args, result.output)
    # A filter that matches nothing on a name the bench knows is an empty log, not an error.
    assert CliRunner().invoke(app, ["log", "--model", "fake/phi-4"]).exit_code == 0


def test_ask_on_a_keyed_bench_says_to_set_benchwarmers_key(fake, tmp_path, monkeypatch):
    server = BenchServer(tmp_path / "home", require_keys=True).start()
    try:
        add_fake_endpoint(server, fake, models=[listed("phi-4")])
        collection(server, "solo", ["phi-4"], max_explorers=0)
        key, _ = server.admin(lambda bench: bench.keys.create("ci"))
        monkeypatch.setenv("BENCHWARMERS_URL", server.url)
        missing = CliRunner().invoke(app, ["ask", "solo", "hi"])
        assert (missing.exit_code, missing.output) == (
            1,
            "error: this bench requires a gateway key: set BENCHWARMERS_KEY to yours "
            "(an admin makes one with `benchwarmers key create NAME`)\n",
        )
        server.admin(lambda bench: bench.keys.revoke("ci"))
        monkeypatch.setenv("BENCHWARMERS_KEY", key)
        revoked = CliRunner().invoke(app, ["ask", "solo", "hi"])
        assert revoked.exit_code == 1
        assert revoked.output.startswith("error: the bench refused BENCHWARMERS_KEY: ")
    finally:
        server.stop()
