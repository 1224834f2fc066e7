"""Shapes: the collection's wins, then the caller's, then images, then a decision model, else general."""

from __future__ import annotations

import time

import pytest
from typer.testing import CliRunner

from benchwarmers.bench.panels.shapes import chat_body, choice_body, parse_chat_answer, parse_choice_answer
from benchwarmers.cli.app import app
from benchwarmers.settings import Settings
from tests.support.panels import ask, collection

SHAPES = {"general": "anything", "review": "finding defects"}


def decision_requests(fake):
    """Requests that asked for a label (not seats: kimi-k2 may also sit an explorer seat)."""
    return [r for r in fake.chat_requests if r.json["messages"][0]["content"].startswith("You label requests")]


def add_decision(server, alias="fake/kimi-k2", kind="chat"):
    return server.admin(lambda b: b.shapes.add_decision_model(alias, kind))


def test_a_chat_decision_model_picks_review(bench_with_roster, client, fake):
    fake.script("kimi-k2", reply='Sure: {"shape": "review", "confidence": 0.9}')
    add_decision(bench_with_roster)
    fake.clear()
    collection(bench_with_roster, "auto", ["llama-3.3-70b"])
    bench = ask(client, "bench/auto", "Find the bug in this loop.").bench
    assert (bench["shape"], bench["shape_by"]) == ("review", "decision model fake/kimi-k2 at 0.90")
    [asked] = decision_requests(fake)
    options = asked.json["messages"][1]["content"]
    assert "- review: Finding defects in code or text someone wrote" in options
    assert "Find the bug in this loop." in options
    # The decision is logged like a seat but is not one.
    panel = bench_with_roster.admin(lambda b: _panel(b, bench["panel"]))
    assert panel["decision"]["call"] == f"{bench['panel']}.decision"
    assert panel["decision"]["status"] == "ok"
    assert all(s["seat"] != "decision" for s in panel["seats"])
    assert "kimi-k2" not in [s["alias"].removeprefix("fake/") for s in bench["seats"] if s["seat"] == "member"]


async def _decision_calls(bench, panel_id):
    from sqlalchemy import select

    from benchwarmers.store.schema import seats

    query = select(seats.c.call, seats.c.alias, seats.c.status).where(
        seats.c.panel_id == panel_id, seats.c.seat == "decision"
    )
    async with bench.state.read() as conn:
        return [tuple(row) for row in await conn.execute(query.order_by(seats.c.position))]


async def _panel(bench, panel_id):
    from benchwarmers.store import calls

    async with bench.state.read() as conn:
        return (await calls.list_panels(conn, panel_id=panel_id))[0]


def test_low_confidence_means_general(bench_with_roster, client, fake):
    fake.script("kimi-k2", reply='{"shape": "review", "confidence": 0.9}')
    add_decision(bench_with_roster)
    fake.script("kimi-k2", reply='{"shape": "review", "confidence": 0.5}')
    collection(bench_with_roster, "auto", ["llama-3.3-70b"])
    bench = ask(client, "bench/auto").bench
    assert (bench["shape"], bench["shape_by"]) == (
        "general",
        "default (decision model fake/kimi-k2 said review at 0.50)",
    )


def test_a_decision_timeout_falls_back_to_general_quickly(bench_with_roster, client, fake):
    fake.script("kimi-k2", reply='{"shape": "review", "confidence": 0.9}')
    add_decision(bench_with_roster)
    fake.script("kimi-k2", hang=True)
    bench_with_roster.admin(lambda b: b.gateway_settings.set_gateway(decision_timeout=0.3))
    # Disabled: it may not sit an explorer seat (where it would hang), but it still decides shapes.
    bench_with_roster.admin(lambda b: b.models.set_model("fake/kimi-k2", enabled=False))
    collection(bench_with_roster, "auto", ["llama-3.3-70b"])
    started = time.monotonic()
    bench = ask(client, "bench/auto").bench
    elapsed = time.monotonic() - started
    assert (bench["shape"], bench["shape_by"]) == (
        "general",
        "default (decision model fake/kimi-k2 failed: timeout after 0.3s)",
    )
    assert elapsed < 0.3 + 1.5  # held up by the decision timeout, not by the hanging model


def test_a_failed_decision_model_hands_over_to_the_next_then_general(bench_with_roster, client, fake):
    for model in ("kimi-k2", "deepseek-r1"):
        fake.script(model, reply='{"shape": "review", "confidence": 0.9}')
        add_decision(bench_with_roster, f"fake/{model}")
        # Disabled: they decide shapes but sit no explorer seat, so each is asked only to label.
        bench_with_roster.admin(lambda b, m=model: b.models.set_model(f"fake/{m}", enabled=False))
    fake.script("kimi-k2", status=500)
    fake.clear()
    collection(bench_with_roster, "auto", ["llama-3.3-70b"])
    bench = ask(client, "bench/auto").bench
    assert (bench["shape"], bench["shape_by"]) == ("review", "decision model fake/deepseek-r1 at 0.90")
    assert [r.json["model"] for r in decision_requests(fake)] == ["kimi-k2", "deepseek-r1"]  # in their order
    panel = bench_with_roster.admin(lambda b: _panel(b, bench["panel"]))
    assert (panel["decision"]["call"], panel["decision"]["alias"], panel["decision"]["status"]) == (
        f"{bench['panel']}.decision2",
        "fake/deepseek-r1",
        "ok",
    )
    # Both calls are logged, in the order asked; neither is a seat.
    assert bench_with_roster.admin(lambda b: _decision_calls(b, bench["panel"])) == [
        (f"{bench['panel']}.decision", "fake/kimi-k2", "error"),
        (f"{bench['panel']}.decision2", "fake/deepseek-r1", "ok"),
    ]
    assert all(s["seat"] != "decision" for s in panel["seats"])
    # Every one failing: general, saying why each did.
    fake.script("deepseek-r1", reply="no idea")
    fake.clear()
    bench = ask(client, "bench/auto").bench
    assert bench["shape"] == "general"
    assert bench["shape_by"].startswith("default (decision models: fake/kimi-k2 failed: upstream error (500)")
    assert bench["shape_by"].endswith(
        "; fake/deepseek-r1 failed: no JSON object with shape and confidence in the answer)"
    )
    assert [r.json["model"] for r in decision_requests(fake)] == ["kimi-k2", "deepseek-r1"]


def test_the_collections_shape_wins_and_no_explorers_means_no_decision(bench_with_roster, client, fake):
    fake.script("kimi-k2", reply='{"shape": "review", "confidence": 0.9}')
    add_decision(bench_with_roster)
    fake.clear()
    collection(bench_with_roster, "shaped", ["llama-3.3-70b"], shape="design")
    bench = ask(client, "bench/shaped").bench
    assert (bench["shape"], bench["shape_by"]) == ("design", "set on the collection")
    caller = ask(client, "bench/shaped", extra_body={"bench": {"shape": "math"}}).bench
    assert caller["shape"] == "design"
    collection(bench_with_roster, "full", ["llama-3.3-70b", "qwen3-32b", "gemma-3-27b", "mistral-small", "phi-4"])
    full = ask(client, "bench/full").bench
    assert (full["shape"], full["shape_by"]) == ("general", "default (no explorer seats to fill)")
    by_caller = ask(client, "bench/full", extra_body={"bench": {"shape": "math"}}).bench
    assert (by_caller["shape"], by_caller["shape_by"]) == ("math", "set by the caller")
    assert decision_requests(fake) == []


def test_a_choice_decision_model_uses_the_path_that_answered(bench_with_roster, client, fake):
    fake.listing(
        "/v1/systemone",
        {
            "model": "kimi-k2",
            "answers": {
                "shape": {"type": "choice", "choice": "code", "confidence": 0.81, "probabilities": {"code": 0.9}}
            },
        },
    )
    row = add_decision(bench_with_roster, kind="choice")
    assert row == {"alias": "fake/kimi-k2", "kind": "choice", "path": "systemone"}
    collection(bench_with_roster, "auto", ["llama-3.3-70b"])
    fake.clear()
    bench = ask(client, "bench/auto").bench
    assert (bench["shape"], bench["shape_by"]) == ("code", "decision model fake/kimi-k2 at 0.81")
    [asked] = [r for r in fake.requests if r.path == "/v1/systemone"]
    assert asked.json["questions"]["shape"]["type"] == "choice"
    assert asked.json["questions"]["shape"]["criteria"]["review"].startswith("Finding defects")


def test_decision_onboarding_refuses_a_model_that_answers_no_decision_api(bench_with_roster):
    with pytest.raises(Exception, match="answered no decision API"):
        add_decision(bench_with_roster, alias="fake/phi-4", kind="choice")


def test_shape_cli_edits_the_list(tmp_path, monkeypatch):
    monkeypatch.setenv("BENCHWARMERS_HOME", str(tmp_path))
    runner = CliRunner()
    assert runner.invoke(app, ["shape", "set", "legal", "--description", "Contracts and law"]).output == (
        "shape legal: Contracts and law\n"
    )
    listed = runner.invoke(app, ["shape", "list", "--json"]).output
    assert '"legal": "Contracts and law"' in listed
    assert runner.invoke(app, ["shape", "remove", "general"]).output == (
        "error: 'general' is built in: the gateway falls back to it\n"
    )
    assert runner.invoke(app, ["shape", "remove", "legal"]).exit_code == 0
    assert Settings(home=tmp_path).home == tmp_path


def test_parsers_and_bodies():
    assert parse_chat_answer('```json\n{"shape": "review", "confidence": 0.93}\n```', SHAPES) == ("review", 0.93)
    with pytest.raises(ValueError, match="not a shape"):
        parse_chat_answer('{"shape": "poetry", "confidence": 0.9}', SHAPES)
    with pytest.raises(ValueError, match="no JSON object"):
        parse_chat_answer("review, surely", SHAPES)
    assert parse_choice_answer({"answers": {"shape": {"choice": "review", "confidence": 0.7}}}, SHAPES) == (
        "review",
        0.7,
    )
    assert choice_body("m", "state", SHAPES)["questions"]["shape"]["criteria"] == SHAPES
    assert chat_body("m", "state", SHAPES)["temperature"] == 0
