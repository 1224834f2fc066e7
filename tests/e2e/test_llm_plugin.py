"""Collections as `llm` models, with the real `llm` CLI: the plugin in llm-benchwarmers/ is installed the
way pip installs it (its wheel, built from its pyproject.toml, into a folder of this test's own) and
loaded by llm's own LLM_LOAD_PLUGINS, alone; llm's files live in a fresh LLM_USER_PATH. Against a
running bench, `llm models` lists its collections, `llm -m bench/NAME` runs a panel and prints its
reply, and `llm logs` keeps the panel id and every seat's call id. A bench that loads llm's plugins
itself (BENCH_CLIENT=llm) blocks this one: it never asks a bench for models to seat."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest

from benchwarmers.upstream.llm_client import OWN_PLUGIN, LlmClient
from tests.fakes.upstream import FakeUpstream
from tests.support.benchserver import BenchServer, add_fake_endpoint, free_port, listed

PLUGIN = Path(__file__).resolve().parents[2] / "llm-benchwarmers"
DISTRIBUTION = "llm-benchwarmers"


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The plugin installed by pip into a folder of its own (never the shared environment)."""
    target = tmp_path_factory.mktemp("llm-plugin")
    command = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(target), str(PLUGIN)]
    subprocess.run(command, check=True, capture_output=True, timeout=300)
    return target


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[FakeUpstream, BenchServer, str]]:
    """A bench that requires gateway keys (so the plugin's key is used), and one key for it."""
    fake = FakeUpstream().__enter__()
    fake.script("careful", reply="Looks fine.")
    fake.script("picky", reply="Off by one on line 2.")
    server = BenchServer(tmp_path_factory.mktemp("llm-bench") / "home", require_keys=True).start()
    add_fake_endpoint(server, fake, models=[listed("careful"), listed("picky")])
    data = {"members": ["fake/careful", "fake/picky"], "tags": ["code"], "max_explorers": 0}
    server.admin(lambda b: b.collections.add_collection({"name": "reviewers", "description": "Code review", **data}))
    key, _ = server.admin(lambda b: b.keys.create("llm"))
    try:
        yield fake, server, key
    finally:
        server.stop()
        fake.stop()


@pytest.fixture
def llm_cli(installed: Path, tmp_path: Path) -> Any:
    """The real `llm` CLI in a process of its own, this plugin its only one, its files in `tmp_path`."""

    def run(url: str, *args: str, key: str | None = None) -> subprocess.CompletedProcess[str]:
        env = {name: value for name, value in os.environ.items() if not name.startswith(("OPENAI_", "LLM_"))}
        env |= {
            "PYTHONPATH": str(installed),
            "LLM_LOAD_PLUGINS": DISTRIBUTION,  # this plugin only, through its entry point
            "LLM_USER_PATH": str(tmp_path / "llm"),
            "BENCHWARMERS_URL": url,
        }
        env.pop("BENCHWARMERS_KEY", None)
        if key is not None:
            env["BENCHWARMERS_KEY"] = key
        command = [sys.executable, "-m", "llm", *args]
        return subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)

    return run


def test_llm_models_lists_the_collections_of_a_running_bench(bench, llm_cli):
    _, server, key = bench
    shown = llm_cli(server.url, "models", key=key)
    assert (shown.returncode, shown.stderr) == (0, "")
    assert [line for line in shown.stdout.splitlines() if line.startswith("Benchwarmers")] == [
        "Benchwarmers: bench/reviewers (all) Code review [fake/careful, fake/picky]",
        "Benchwarmers: bench/reviewers:merged (merged) Code review [fake/careful, fake/picky]",
        "Benchwarmers: bench/reviewers:pick (pick) Code review [fake/careful, fake/picky]",
    ]


def test_a_prompt_runs_a_panel_and_llm_logs_keep_its_call_ids(bench, llm_cli):
    _, server, key = bench
    asked = llm_cli(server.url, "-m", "bench/reviewers", "Review: def mean(xs): return sum(xs) / len(xs)", key=key)
    assert (asked.returncode, asked.stderr) == (0, "")
    [entry] = json.loads(llm_cli(server.url, "logs", "-n", "1", "--json").stdout)
    logged = entry["response_json"]
    panel = logged["panel"]
    headers = {"authorization": f"Bearer {key}"}
    recorded = httpx2.get(f"{server.url}/bench/panels/{panel}", headers=headers).json()
    assert recorded["collection"] == "reviewers"
    assert logged["calls"] == [
        {"call": f"{panel}.member1", "alias": "fake/careful", "status": "ok"},
        {"call": f"{panel}.member2", "alias": "fake/picky", "status": "ok"},
    ]
    assert [s["call"] for s in recorded["seats"]] == [c["call"] for c in logged["calls"]]
    # What llm printed and logged is the panel's reply: every seat's answer under its call id.
    assert asked.stdout == entry["response"] + "\n"
    assert entry["response"].startswith(f"# bench/reviewers · panel {panel}")
    assert "Looks fine." in entry["response"] and "Off by one on line 2." in entry["response"]
    assert (entry["model"], entry["prompt"]) == ("bench/reviewers", "Review: def mean(xs): return sum(xs) / len(xs)")
    used = logged["bench"]["usage"].values()  # each call's usage; the reply's is their sum
    assert (entry["input_tokens"], entry["output_tokens"]) == (
        sum(u["prompt_tokens"] for u in used),
        sum(u["completion_tokens"] for u in used),
    )


def test_pick_gives_one_answer_and_a_conversation_goes_whole(bench, llm_cli):
    fake, server, key = bench
    # The key as llm keeps it (`llm keys set`), not from the environment this time.
    assert llm_cli(server.url, "keys", "set", "benchwarmers", "--value", key).returncode == 0
    picked = llm_cli(server.url, "-m", "bench/reviewers:pick", "-s", "Be brief.", "Is it right?")
    assert (picked.returncode, picked.stdout, picked.stderr) == (0, "Looks fine.\n", "")
    fake.clear()
    again = llm_cli(server.url, "-c", "And now?", "-o", "temperature", "0.2", "-o", "shape", "review")
    assert (again.returncode, again.stdout) == (0, "Looks fine.\n")
    sent = [r.json for r in fake.chat_requests]
    assert [r["messages"] for r in sent] == [
        [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Is it right?"},
            {"role": "assistant", "content": "Looks fine."},
            {"role": "user", "content": "And now?"},
        ]
    ] * 2
    assert {r["temperature"] for r in sent} == {0.2}
    [newest] = httpx2.get(f"{server.url}/bench/panels?limit=1", headers={"authorization": f"Bearer {key}"}).json()[
        "data"
    ]
    assert (newest["collection"], newest["shape"]) == ("reviewers", "review")


def test_a_bench_that_refuses_is_named_and_no_bench_is_silence(bench, llm_cli):
    _, server, _ = bench
    refused = llm_cli(server.url, "models")  # no key
    assert refused.returncode == 0
    said = httpx2.get(f"{server.v1}/models").json()["error"]["message"]  # the bench's own words
    assert refused.stderr == (
        f"llm-benchwarmers: the bench at {server.url} refused (401): {said} "
        "(set BENCHWARMERS_KEY, or `llm keys set benchwarmers`, to a gateway key)\n"
    )
    nobody = f"http://127.0.0.1:{free_port()}"
    shown = llm_cli(nobody, "models")
    assert (shown.returncode, shown.stderr) == (0, "")
    assert not [line for line in shown.stdout.splitlines() if line.startswith("Benchwarmers")]


async def test_a_bench_running_llms_plugins_blocks_its_own(installed, llm_plugin, monkeypatch):
    """Loaded in the bench's process (BENCH_CLIENT=llm), the plugin would ask a bench for collections
    to seat as models: the bench blocks it by its entry point's name, and nothing is asked."""
    import importlib

    import llm

    entry_points = tomllib.loads((PLUGIN / "pyproject.toml").read_text())["project"]["entry-points"]["llm"]
    assert entry_points == {OWN_PLUGIN: "llm_benchwarmers"}
    with FakeUpstream() as watcher:
        monkeypatch.setenv("BENCHWARMERS_URL", watcher.root_url)
        monkeypatch.syspath_prepend(str(installed))
        module = importlib.import_module("llm_benchwarmers")
        llm.plugins.pm.register(module, name=OWN_PLUGIN)
        client = LlmClient()
        try:
            listed = [m.model_id for m in await client.listing()]
        finally:
            await client.aclose()
            llm.plugins.pm.unblock(OWN_PLUGIN)
        assert listed == ["bench-echo", "bench-sync", "bench-script", "bench-local"]
        assert watcher.requests == []


async def test_llms_async_api_runs_a_panel_too(bench, installed, llm_plugin, monkeypatch):
    """`llm.get_async_model("bench/...")`, as async programs built on llm call a model."""
    import importlib

    import llm

    _, server, key = bench
    monkeypatch.setenv("BENCHWARMERS_URL", server.url)
    monkeypatch.setenv("BENCHWARMERS_KEY", key)
    monkeypatch.syspath_prepend(str(installed))
    llm.plugins.pm.register(importlib.import_module("llm_benchwarmers"), name=OWN_PLUGIN)
    try:
        response = llm.get_async_model("bench/reviewers:pick").prompt("Is it right?", system="Be brief.")
        assert await response.text() == "Looks fine."
        logged = await response.json()
    finally:
        llm.plugins.pm.unregister(name=OWN_PLUGIN)
    panel = logged["panel"]
    assert logged["calls"] == [
        {"call": f"{panel}.member1", "alias": "fake/careful", "status": "ok"},
        {"call": f"{panel}.member2", "alias": "fake/picky", "status": "ok"},
    ]
    assert logged["bench"]["picked"]["alias"] == "fake/careful"
