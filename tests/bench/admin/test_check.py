"""`benchwarmers check` against fake providers over real HTTP: the broken, rate-limited and blind
models, an unreachable endpoint and a refused key, each with what to do; what a check records."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx2
import orjson
import pytest
from typer.testing import CliRunner

from benchwarmers.bench.admin.checks import TINY_PNG
from benchwarmers.cli.app import app
from benchwarmers.cli.check import window_text
from tests.fakes.upstream import FakeUpstream
from tests.support.benchserver import BenchServer, add_fake_endpoint, listed

NOT_FOUND = "not found (404): The model `gone-7b` does not exist or you do not have access to it."
LIMITED = (
    "rate limited (429): Rate limit reached for busy-7b on requests per min (RPM): Limit 20, Used 20, Requested 1; "
    "retry in 120s"
)
BLIND = "refused an image: bad request (400): blind-vl does not support image input."


def cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.output


@pytest.fixture
def bench(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[BenchServer, FakeUpstream]]:
    """`fake` serves five models on a collection; `locked` refuses its key; `down` is not there."""
    home = tmp_path / "home"
    monkeypatch.setenv("BENCHWARMERS_HOME", str(home))
    monkeypatch.setenv("COLUMNS", "250")
    with FakeUpstream() as fake, FakeUpstream(require_key="sk-the-right-key-0001") as locked:
        fake.script("good-7b")
        fake.script("gone-7b", status=404)
        fake.script("busy-7b", status=429, headers={"retry-after": "120"})
        fake.script("blind-vl", blind=True)
        fake.script("sees-vl")
        server = BenchServer(home).start()
        try:
            models = [listed("good-7b"), listed("gone-7b"), listed("busy-7b"), listed("blind-vl", vision=True),
                      listed("sees-vl", vision=True)]  # fmt: skip

            async def setup(bench):
                await bench.endpoints.add_endpoint("locked", locked.base_url, "openai", api_key="sk-a-wrong-key-9999")
                await bench.endpoints.add_endpoint("down", "http://127.0.0.1:9/v1", "openai")
                members = [f"fake/{m['id']}" for m in models]
                await bench.collections.add_collection({"name": "crew", "members": members, "max_explorers": 0})

            add_fake_endpoint(server, fake, models=models, free_tier=True)
            server.admin(setup)
            yield server, fake
        finally:
            server.stop()


def models_by_alias() -> dict[str, dict]:
    code, out = cli("model", "list", "--json")
    assert code == 0, out
    return {m["alias"]: m for m in orjson.loads(out)}


def test_check_lists_the_broken_rate_limited_and_blind_models_and_what_to_do(bench):
    server, fake = bench
    fake.clear()
    code, out = cli("check", "--json")
    assert code == 1
    found = orjson.loads(out)
    assert found["problems"] == 5
    assert [(e["name"], e["status"], e["reachable"], e["key"]) for e in found["endpoints"]] == [
        ("down", "unreachable", False, "none"),
        ("fake", "ok", True, "ok"),
        ("locked", "auth failed", True, "rejected"),
    ]
    down, _, locked = found["endpoints"]
    assert down["fix"] == "nothing answers at http://127.0.0.1:9/v1: is it running, is the URL right?"
    assert locked["listing"].startswith("auth failed (401): Incorrect API key provided: [redacted")
    assert "sk-a-wrong-key-9999" not in out
    assert locked["fix"] == (
        "store a valid key: `benchwarmers endpoint remove locked`, then add it again with --api-key"
    )
    assert found["endpoints"][1]["listing"] == "5 models"

    models = {m["alias"].removeprefix("fake/"): m for m in found["models"]}
    assert list(models) == ["blind-vl", "busy-7b", "gone-7b", "good-7b", "sees-vl"]
    assert {a: (m["status"], m["kind"], m["vision"]) for a, m in models.items()} == {
        "blind-vl": ("blind", None, BLIND),
        "busy-7b": ("rate-limited", "rate_limited", None),
        "gone-7b": ("broken", "not_found", None),
        "good-7b": ("ok", None, None),
        "sees-vl": ("ok", None, "takes images"),
    }
    assert (models["gone-7b"]["text"], models["busy-7b"]["text"]) == (NOT_FOUND, LIMITED)
    assert models["good-7b"]["text"].startswith("answered in ")
    assert models["gone-7b"]["fix"] == (
        "fake does not serve it: `benchwarmers endpoint refresh fake`, and take it off bench/crew"
    )
    assert models["busy-7b"]["fix"] == (
        "wait 120s and check again; a model that stays limited is better as an explorer"
    )
    assert models["blind-vl"]["fix"] == (
        "it claims vision but refused an image: it no longer sits image panels (`model set --vision` to insist)"
    )
    assert models["blind-vl"]["learned"] == ["input_kinds: text only (refused an image)"]
    assert [(m["window"], m["window_source"], m["window_note"]) for m in models.values()] == [
        (32_000, "listing", "")
    ] * 5
    assert models["good-7b"]["collections"] == ["bench/crew"]

    # One-token calls, and the image only to the two that claim vision (and answered the text call).
    calls = [(r.json["model"], r.json["max_tokens"], isinstance(r.json["messages"][0]["content"], list))
             for r in fake.chat_requests]  # fmt: skip
    assert sorted(calls) == sorted(
        [(m, 1, False) for m in ("good-7b", "gone-7b", "busy-7b", "blind-vl", "sees-vl")]
        + [("blind-vl", 1, True), ("sees-vl", 1, True)]
    )
    image = next(
        r
        for r in fake.chat_requests
        if r.json["model"] == "sees-vl" and isinstance(r.json["messages"][0]["content"], list)
    )
    assert image.json["messages"][0]["content"][1] == {"type": "image_url", "image_url": {"url": TINY_PNG}}

    # What it recorded: the blind model is text-only now; nothing else (no seats, no cooldown).
    roster = models_by_alias()
    assert roster["fake/blind-vl"]["vision"] is False
    assert roster["fake/blind-vl"]["facts"]["input_kinds"] == {"value": ["text"], "source": "learned"}
    assert roster["fake/sees-vl"]["vision"] is True
    assert roster["fake/busy-7b"]["status"] == "ok"
    assert httpx2.get(f"{server.url}/bench/panels").json()["data"] == []
    changes = httpx2.get(f"{server.url}/api/changes?subject=model").json()["data"]
    assert [(c["actor"], c["action"], c["name"], c["after"]) for c in changes] == [
        ("check", "learned", "fake/blind-vl", {"input_kinds": ["text"]})
    ]


def test_the_check_table_and_a_model_that_sees_again(bench):
    _server, fake = bench
    code, out = cli("check", "fake/blind-vl")
    assert code == 1
    lines = out.splitlines()
    assert lines[-2:] == [
        "recorded for fake/blind-vl: input_kinds: text only (refused an image)",
        "1 problem in 1 endpoints and 1 models",
    ]
    row = next(line for line in lines if line.startswith("│ fake/blind-vl"))
    cells = [cell.strip() for cell in row.strip("│ ").split("│")]
    assert (cells[0], cells[1], cells[3], cells[4]) == ("fake/blind-vl", "blind", BLIND, "32,000 (listing)")
    # Table cells are text: the scrubbed key stays visible as scrubbed, not eaten as markup.
    locked = cli("check", "locked")[1]
    assert "Incorrect API key provided: [redacted" in locked and "sk-a-wrong-key-9999" not in locked
    # Checked again with nothing new: nothing is recorded twice.
    assert cli("check", "fake/blind-vl")[1].splitlines()[-1] == "1 problem in 1 endpoints and 1 models"
    # The provider fixed it: the next check sees it take an image and forgets what it learned.
    fake.script("blind-vl")
    code, out = cli("check", "fake/blind-vl")
    assert code == 0
    assert out.splitlines()[-2:] == [
        "recorded for fake/blind-vl: input_kinds: takes images again",
        "all good: 1 endpoints and 1 models",
    ]
    assert models_by_alias()["fake/blind-vl"]["facts"]["input_kinds"] == {
        "value": ["image", "text"],
        "source": "listing",
    }


def test_your_override_decides_whether_a_model_claims_vision(bench):
    _server, fake = bench
    assert cli("model", "set", "fake/blind-vl", "--no-vision")[0] == 0
    assert cli("model", "set", "fake/good-7b", "--vision")[0] == 0
    fake.script("good-7b", blind=True)
    fake.clear()
    found = orjson.loads(cli("check", "fake", "--json")[1])
    vision = {m["alias"]: (m["status"], m["vision"]) for m in found["models"]}
    assert vision["fake/blind-vl"] == ("ok", None)  # you said it cannot see: not asked
    assert vision["fake/good-7b"] == (
        "blind",
        "refused an image: bad request (400): good-7b does not support image input.",
    )
    # A learned fact never outranks your override.
    assert models_by_alias()["fake/good-7b"]["facts"]["input_kinds"] == {
        "value": ["image", "text"],
        "source": "override",
    }
    assert [e["name"] for e in found["endpoints"]] == ["fake"]


def test_an_unknown_target_is_one_error_line(bench):
    assert cli("check", "fake/good-7") == (
        1,
        "error: no endpoint or model named 'fake/good-7'. Did you mean fake/good-7b, fake/gone-7b, fake/busy-7b?\n",
    )


def test_discover_add_probes_the_model_it_adds_and_records_a_blind_one(tmp_path, monkeypatch):
    home = tmp_path / "home"
    home.mkdir()
    eye = {
        "id": "acme/eye-vl",
        "name": "Eye VL",
        "limit": {"context": 65_536, "output": 4096},
        "modalities": {"input": ["text", "image"], "output": ["text"]},
        "cost": {"input": 0, "output": 0},
    }
    catalog = {"openrouter": {"id": "openrouter", "name": "OpenRouter", "models": {"acme/eye-vl": eye}}}
    (home / "models-dev.json").write_bytes(orjson.dumps(catalog))
    monkeypatch.setenv("BENCHWARMERS_HOME", str(home))
    with FakeUpstream() as fake:
        fake.script("acme/eye-vl", blind=True)
        fake.listing("/v1/models", {"object": "list", "data": []})
        assert cli("endpoint", "add", "or", "--base-url", fake.base_url, "--kind", "openrouter")[0] == 0
        code, out = cli("discover", "add", "openrouter/acme/eye-vl")
    assert code == 0, out
    lines = out.splitlines()
    assert lines[0] == "added or/acme/eye-vl (window 65,536, images no, free yes, family ?)"
    assert lines[1].startswith("check: blind: answered in ")
    assert lines[1].endswith("; images: refused an image: bad request (400): acme/eye-vl does not support image input.")
    assert lines[2:] == [
        "recorded: input_kinds: text only (refused an image)",
        "what to do: it claims vision but refused an image: it no longer sits image panels "
        "(`model set --vision` to insist)",
        "next: benchwarmers collection add NAME --member or/acme/eye-vl ...",
    ]
    assert models_by_alias()["or/acme/eye-vl"]["facts"]["input_kinds"] == {"value": ["text"], "source": "learned"}


def test_a_window_lowered_by_a_context_error_is_shown_with_the_listed_one(bench):
    server, fake = bench
    fake.script("good-7b", context_limit=8_000)
    sent = httpx2.post(
        f"{server.v1}/chat/completions",
        json={"model": "bench/crew", "messages": [{"role": "user", "content": "A long prompt."}]},
        timeout=30,
    )
    assert sent.status_code == 200
    fake.script("good-7b")
    found = orjson.loads(cli("check", "fake/good-7b", "--json")[1])
    model = found["models"][0]
    assert (model["status"], model["window"], model["window_source"], model["window_note"]) == (
        "ok",
        8_000,
        "learned",
        "lowered from 32,000 (listing) by a context error",
    )
    assert window_text(model) == "8,000 (learned): lowered from 32,000 (listing) by a context error"


def test_a_model_cooling_after_a_429_is_not_called_and_is_a_problem(bench):
    server, fake = bench
    # A panel's seat meets busy-7b's 429 (retry-after 120): it cools down for two minutes.
    sent = httpx2.post(
        f"{server.v1}/chat/completions",
        json={"model": "bench/crew", "messages": [{"role": "user", "content": "hi"}]},
        timeout=30,
    )
    assert {s["alias"]: s["status"] for s in sent.json()["bench"]["seats"]}["fake/busy-7b"] == "error"
    fake.clear()
    code, out = cli("check", "fake/busy-7b", "--json")
    assert code == 1
    [model] = orjson.loads(out)["models"]
    assert model["status"] == "cooling"
    assert model["text"].startswith("not called: cooling down after a rate limit (429); frees up in ")
    assert model["fix"].startswith("its provider answered a seat 429: it is not called until ")
    assert model["fix"].endswith(" UTC; check again then")
    assert fake.chat_requests == []  # not called: a check proves nothing of a cooling model
    code, out = cli("check", "fake/busy-7b")
    assert (code, out.splitlines()[-1]) == (1, "1 problem in 1 endpoints and 1 models")


def test_a_model_that_answers_empty_fails_the_check(bench):
    _server, fake = bench
    fake.script("good-7b", empty=True)
    code, out = cli("check", "fake/good-7b", "--json")
    assert code == 1
    [model] = orjson.loads(out)["models"]
    assert (model["status"], model["kind"]) == ("empty", None)
    assert model["text"].startswith("answered in ") and model["text"].endswith(" (empty)")
    assert model["fix"] == (
        "it answered with nothing: an empty answer is no answer; replace it on bench/crew if it keeps doing so"
    )


def test_a_priced_member_is_warned_of_when_saved_and_noted_by_the_check(bench):
    server, _fake = bench
    with FakeUpstream() as paid:
        paid.script("pricey-7b")
        add_fake_endpoint(server, paid, name="paid", models=[listed("pricey-7b", free=False)], free_tier=False)
        warning = (
            "warning: paid/pricey-7b is priced (the catalog says it is not free): every panel on bench/spend pays "
            "for its calls\n"
        )
        added = CliRunner().invoke(app, ["collection", "add", "spend", "--member", "paid/pricey-7b"])
        assert (added.exit_code, added.stdout, added.stderr) == (
            0,
            "created bench/spend: 1 member(s) + 2 explorer seat(s)\n",
            warning,
        )
        # `check` says so for that member, and a price is no problem.
        code, out = cli("check", "paid/pricey-7b")
        assert code == 0, out
        assert out.splitlines()[-2:] == [
            "note for paid/pricey-7b: priced: the catalog says it is not free, so every panel on bench/spend pays "
            "for its calls",
            "all good: 1 endpoints and 1 models",
        ]
        found = orjson.loads(cli("check", "fake/good-7b", "--json")[1])
        assert (found["models"][0]["free"], found["models"][0]["note"]) == (True, "")
        edited = CliRunner().invoke(app, ["collection", "edit", "spend", "--member", "paid/pricey-7b"])
        assert (edited.exit_code, edited.stderr) == (0, warning)
        free = CliRunner().invoke(app, ["collection", "edit", "spend", "--member", "fake/good-7b"])
        assert (free.exit_code, free.stderr) == (0, "")
        # The API says so in the response's warnings.
        body = {"name": "api-spend", "members": ["paid/pricey-7b", "fake/good-7b"]}
        made = httpx2.post(f"{server.url}/api/collections", json=body)
        assert made.status_code == 201
        assert made.json()["warnings"] == [
            "paid/pricey-7b is priced (the catalog says it is not free): every panel on bench/api-spend pays for "
            "its calls"
        ]
        replaced = httpx2.put(f"{server.url}/api/collections/api-spend", json={"members": ["fake/good-7b"]})
        assert (replaced.status_code, replaced.json()["warnings"]) == (200, [])
        found = orjson.loads(cli("check", "paid/pricey-7b", "--json")[1])
        assert (found["models"][0]["free"], found["models"][0]["status"]) == (False, "ok")
        assert found["models"][0]["note"] == "priced: the catalog says it is not free: its calls cost money"
