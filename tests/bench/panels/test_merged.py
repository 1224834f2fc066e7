"""Merged replies: the merger's choice rule by rule, shuffled answers, fallbacks with a note."""

from __future__ import annotations

import random

import httpx2

from benchwarmers.bench.evidence.posterior import best_of
from benchwarmers.bench.evidence.primary import Primary
from benchwarmers.bench.evidence.roles import set_role
from benchwarmers.bench.panels.merge import merger_candidates, merger_messages
from tests.support.panels import ask, collection


def merger_requests(fake):
    return [r for r in fake.chat_requests if r.json["messages"][0]["role"] == "system"]


def test_the_collections_merger_merges_and_the_reply_keeps_every_seat(bench_with_roster, client, fake):
    fake.script("kimi-k2", reply="Both agree 7 is prime; llama adds a proof.")
    collection(
        bench_with_roster,
        "pair",
        ["llama-3.3-70b", "qwen3-32b"],
        max_explorers=0,
        reply="merged",
        merger="fake/kimi-k2",
    )
    resp = ask(client, "bench/pair", "Is 7 prime?")
    bench = resp.bench
    assert bench["reply"] == "merged"
    merger = bench["merger"]
    assert merger["call"] == f"{bench['panel']}.merger"
    assert (merger["alias"], merger["status"], merger["chosen_as"]) == ("fake/kimi-k2", "ok", "the collection's merger")
    assert sorted(merger["order"]) == ["fake/llama-3.3-70b", "fake/qwen3-32b"]
    assert [s["alias"] for s in bench["seats"]] == ["fake/llama-3.3-70b", "fake/qwen3-32b"]
    content = resp.choices[0].message.content
    assert content.startswith("Both agree 7 is prime; llama adds a proof.\n\n---\nMerged by fake/kimi-k2")
    [sent] = merger_requests(fake)
    assert sent.json["model"] == "kimi-k2"
    prompt = sent.json["messages"][1]["content"]
    assert prompt.startswith("Request:\nuser: Is 7 prime?\n\nAnswers:")
    # The merger saw the answers in the recorded (shuffled) order.
    positions = [prompt.index(f"--- {alias} ---") for alias in merger["order"]]
    assert positions == sorted(positions)
    assert "not settle a disagreement by majority" in sent.json["messages"][0]["content"]


def test_merged_from_a_model_name_only_client(bench_with_roster, client):
    collection(bench_with_roster, "pair", ["llama-3.3-70b", "qwen3-32b"], max_explorers=0)
    resp = ask(client, "bench/pair:merged")
    assert resp.model == "bench/pair:merged"
    assert resp.bench["reply"] == "merged"
    assert resp.bench["merger"]["chosen_as"] == "the first member that fits"
    assert resp.bench["merger"]["alias"] == "fake/llama-3.3-70b"
    # And bench.reply beats the suffix.
    plain = ask(client, "bench/pair:merged", extra_body={"bench": {"reply": "all"}})
    assert plain.bench["reply"] == "all"
    assert "merger" not in plain.bench


def test_the_best_evidenced_member_merges(bench_with_roster, client):
    collection(bench_with_roster, "trio", ["llama-3.3-70b", "qwen3-32b", "gemma-3-27b"], max_explorers=0)
    seats = ask(client, "bench/trio").bench["seats"]
    judged = {s["alias"]: s["call"] for s in seats}
    for alias, useful in (("fake/gemma-3-27b", True), ("fake/qwen3-32b", False)):
        httpx2.post(f"{bench_with_roster.url}/bench/verdict", json={"call": judged[alias], "useful": useful})
    merged = ask(client, "bench/trio:merged").bench["merger"]
    assert (merged["alias"], merged["chosen_as"]) == (
        "fake/gemma-3-27b",
        # 1/1 against 0/1: ahead by the rule, but the intervals overlap, and the reason says so.
        "the best evidence on general among the panel's models: 1/1 useful; tied with fake/qwen3-32b "
        "(intervals overlap)",
    )


def test_a_merger_verdict_is_stored_under_merger(bench_with_roster, client):
    collection(bench_with_roster, "pair", ["llama-3.3-70b", "qwen3-32b"], max_explorers=0, reply="merged")
    call = ask(client, "bench/pair").bench["merger"]["call"]
    response = httpx2.post(f"{bench_with_roster.url}/bench/verdict", json={"call": call, "useful": True})
    assert response.json() == {"call": call, "recorded": True, "replaced": False}
    panel = httpx2.get(f"{bench_with_roster.url}/bench/panels").json()["data"][0]
    merger_seat = [s for s in panel["seats"] if s["seat"] == "merger"]
    assert [(s["call"], s["verdict"]["useful"]) for s in merger_seat] == [(call, True)]


def test_a_failed_merger_gives_every_answer_and_a_note(bench_with_roster, client, fake):
    fake.script("kimi-k2", status=503, body={"error": {"message": "Service unavailable"}})
    collection(
        bench_with_roster,
        "pair",
        ["llama-3.3-70b", "qwen3-32b"],
        max_explorers=0,
        reply="merged",
        merger="fake/kimi-k2",
    )
    resp = ask(client, "bench/pair")
    assert resp.bench["note"] == (
        "the merger fake/kimi-k2 failed (upstream error (503): Service unavailable), so here is every answer"
    )
    assert resp.bench["merger"]["status"] == "error"
    content = resp.choices[0].message.content
    assert "answer from llama-3.3-70b" in content and "answer from qwen3-32b" in content
    assert f"> {resp.bench['note']}" in content


def test_no_fitting_merger_gives_every_answer_and_a_note(bench_with_roster, client, fake):
    fake.script("llama-3.1-8b", reply="x" * 70_000)
    collection(bench_with_roster, "small", ["llama-3.1-8b", "phi-4"], max_explorers=0, reply="merged")
    resp = ask(client, "bench/small")
    assert resp.bench["merger"] is None
    assert resp.bench["note"].startswith("no merger has a context window for the request plus every answer (about ")
    assert merger_requests(fake) == []


def test_merger_candidates_follow_the_rules_in_order():
    collection_ = {"members": ["a", "b", "c"], "merger": "m"}
    # b has the most useful verdicts, but the explorer x has the better evidence: x comes first.
    # c's 1/1 spans 0.21–1: it could be anything; a's 0/5 is evidence against it, not for it.
    counts = {"a": (0, 5), "b": (30, 80), "c": (1, 1), "x": (21, 26)}
    router = Primary("p", False, best_of({"p": (40, 40), "q": (39, 40)}))
    assert merger_candidates(collection_, "review", counts, router, seated=["x"]) == [
        ("m", "the collection's merger"),
        ("x", "the best evidence on review among the panel's models: 21/26 useful; tied with c (intervals overlap)"),
        (
            "b",
            "the next best evidence on review among the panel's models: 30/80 useful; tied with c, a "
            "(intervals overlap)",
        ),
        ("c", "the next best evidence on review among the panel's models: 1/1 useful; tied with a (intervals overlap)"),
        ("p", "the router's best for review; tied with q (intervals overlap)"),
        ("a", "the first member that fits"),
    ]
    # A pinned primary is the user's choice: before the evidence.
    pinned = Primary("p", True, None)
    assert merger_candidates({"members": ["a", "b"], "merger": None}, "review", {"b": (1, 2)}, pinned)[:2] == [
        ("p", "the primary pinned for review"),
        ("b", "the best evidence on review among the panel's models: 1/2 useful"),
    ]
    assert merger_candidates({"members": ["a"], "merger": None}, "review", {}, None) == [
        ("a", "the first member that fits")
    ]


def test_merger_messages_shuffle_with_the_rng():
    answers = [(f"m{i}", f"answer {i}") for i in range(6)]
    _, order_a = merger_messages("q", answers, random.Random(1))
    _, order_b = merger_messages("q", answers, random.Random(1))
    _, order_c = merger_messages("q", answers, random.Random(2))
    assert order_a == order_b
    assert sorted(order_a) == [a for a, _ in answers]
    assert order_a != order_c


def test_the_routers_pick_merges_when_no_member_has_useful_verdicts(bench_with_roster, client):
    bench_with_roster.admin(lambda b: set_role(b.state, "primary", "general", "fake/deepseek-r1"))
    collection(bench_with_roster, "pair", ["llama-3.3-70b", "qwen3-32b"], max_explorers=0, reply="merged")
    merger = ask(client, "bench/pair").bench["merger"]
    # A pinned primary is the user's choice, so it is said as such.
    assert (merger["alias"], merger["chosen_as"]) == ("fake/deepseek-r1", "the primary pinned for general")
