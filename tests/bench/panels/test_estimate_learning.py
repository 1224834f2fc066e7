"""The estimate learns a model's characters a token from the prompt tokens its provider reported: over
the real app, the fake provider's scripted usage, and a restart that reads the seats back."""

from __future__ import annotations

import sqlite3

import httpx2

from tests.support.benchserver import BenchServer
from tests.support.panels import collection

ALIAS = "fake/llama-3.1-8b"  # an 8,000-token window
WORDS = "the quick brown fox jumps over the lazy dog "  # prose: no code symbols
USAGE = {"prompt_tokens": 2_000, "completion_tokens": 3, "total_tokens": 2_003}


def post(server: BenchServer, chars: int) -> httpx2.Response:
    text = (WORDS * (chars // len(WORDS) + 1))[:chars]
    body = {"model": "bench/small", "messages": [{"role": "user", "content": text}]}
    return httpx2.post(f"{server.v1}/chat/completions", json=body, timeout=30)


def refusal(reply: httpx2.Response) -> str:
    assert reply.status_code == 413, reply.text
    return str(reply.json()["error"]["message"]).split(". Trim")[0]


def test_a_models_reported_usage_replaces_the_default_ratio_and_survives_a_restart(bench_with_roster, fake):
    collection(bench_with_roster, "small", ["llama-3.1-8b"], max_explorers=0)
    fake.script("llama-3.1-8b", usage=USAGE)  # 10,000 characters reported as 2,000 tokens: 5.0 a token
    # Before any usage: prose at 3.6 characters a token + 10%: 30,000 characters are 9,167 tokens.
    assert refusal(post(bench_with_roster, 30_000)) == (
        "the prompt is about 9,167 tokens (prose, default 3.6 characters a token + 10% until the model's "
        "usage is known), larger than the context window of fake/llama-3.1-8b (8,000 tokens)"
    )
    for _ in range(3):
        assert post(bench_with_roster, 10_000).status_code == 200
    # Three answers: 30,000 / 5.0 × 1.05 = 6,300 tokens, inside the window. The fake reports 2,000
    # tokens for it too (15 characters a token): one outlier among four, the median stays 5.0.
    fits = post(bench_with_roster, 30_000)
    assert fits.status_code == 200, fits.text
    learned = (
        "the prompt is about 9,450 tokens (prose, 5.0 characters a token learned from 4 answers of "
        "fake/llama-3.1-8b; margin 5%), larger than the context window of fake/llama-3.1-8b (8,000 tokens)"
    )
    assert refusal(post(bench_with_roster, 45_000)) == learned
    # Short prompts are not stored as teaching (the chat template's tokens would dominate them).
    assert post(bench_with_roster, 100).status_code == 200
    with sqlite3.connect(f"file:{bench_with_roster.settings.home / 'bench.db'}?mode=ro", uri=True) as db:
        stored = db.execute("SELECT prompt_chars, prompt_kind FROM panels ORDER BY created_at").fetchall()
    assert stored == [(10_000, "prose")] * 3 + [(30_000, "prose"), (None, None)]

    bench_with_roster.stop()
    again = BenchServer(bench_with_roster.settings.home).start()
    try:
        assert refusal(post(again, 45_000)) == learned
    finally:
        again.stop()


def test_code_keeps_its_own_default_while_prose_is_learned(bench_with_roster, fake):
    collection(bench_with_roster, "small", ["llama-3.1-8b"], max_explorers=0)
    fake.script("llama-3.1-8b", usage=USAGE)
    for _ in range(3):
        assert post(bench_with_roster, 10_000).status_code == 200
    code = "x = {'a': [1, 2]}; f(x)\n" * 1_000  # 24,000 characters of code at 3.0 + 10%: 8,800 tokens
    body = {"model": "bench/small", "messages": [{"role": "user", "content": code}]}
    refused = httpx2.post(f"{bench_with_roster.v1}/chat/completions", json=body, timeout=30)
    assert refusal(refused) == (
        "the prompt is about 8,800 tokens (code, default 3.0 characters a token + 10% until the model's "
        "usage is known), larger than the context window of fake/llama-3.1-8b (8,000 tokens)"
    )
