"""End-to-end: the `openai` SDK against a real bench server and a real fake provider."""

from __future__ import annotations

import threading
import time

import httpx2
import pytest

from benchwarmers.bench.services import Bench
from tests.support.gateway_fixtures import ROSTER
from tests.support.panels import ask, collection

FAMILY = {
    "llama-3.3-70b": "llama",
    "llama-3.1-8b": "llama",
    "qwen3-32b": "qwen",
    "qwen3-coder": "qwen",
    "gemma-3-27b": "gemma",
    "mistral-small": "mistral",
    "deepseek-r1": "deepseek",
    "phi-4": "phi",
    "glm-4.5-air": "glm",
    "kimi-k2": "kimi",
}


def test_models_list_shows_each_collection_in_every_reply_mode(bench_with_roster, client):
    collection(bench_with_roster, "reviewers", ["llama-3.3-70b", "qwen3-32b"])
    collection(bench_with_roster, "solo", ["phi-4"], reply="merged", shape="review")
    models = {m.id: m for m in client.models.list()}
    assert list(models) == [
        "bench/reviewers",
        "bench/reviewers:merged",
        "bench/reviewers:pick",
        "bench/solo",
        "bench/solo:all",
        "bench/solo:pick",
    ]
    reviewers = models["bench/reviewers"].model_extra
    assert reviewers["description"] == "reviewers work"
    assert reviewers["tags"] == ["test"]
    assert reviewers["members"] == ["fake/llama-3.3-70b", "fake/qwen3-32b"]
    assert reviewers["explorers"] == 2
    assert reviewers["reply"] == "all"
    assert reviewers["together"] == {"context_window": 32_000, "capabilities": ["text"]}
    assert models["bench/reviewers:merged"].model_extra["reply"] == "merged"
    assert models["bench/solo"].model_extra["shape"] == "review"
    assert models["bench/solo"].model_extra["reply"] == "merged"
    assert models["bench/solo:all"].model_extra["reply"] == "all"
    assert models["bench/solo"].owned_by == "benchwarmers"


@pytest.mark.parametrize(("members", "explorers"), [(1, 2), (2, 2), (3, 2), (4, 1), (5, 0)])
def test_explorer_seats_follow_the_arithmetic(bench_with_roster, client, members, explorers):
    chosen = ["kimi-k2", "llama-3.3-70b", "qwen3-32b", "gemma-3-27b", "mistral-small"][:members]
    collection(bench_with_roster, "panel", chosen)
    bench = ask(client, "bench/panel").bench
    kinds = [seat["seat"] for seat in bench["seats"]]
    assert kinds == ["member"] * members + ["explorer"] * explorers
    assert [s["call"] for s in bench["seats"]] == (
        [f"{bench['panel']}.member{i}" for i in range(1, members + 1)]
        + [f"{bench['panel']}.explorer{i}" for i in range(1, explorers + 1)]
    )


def test_explorers_are_stalest_first_and_never_a_members_family(bench_with_roster, client):
    # Pure staleness: with epsilon > 0 some picks go to a Thompson draw (tests/bench/evidence/test_evidence_gateway.py).
    bench_with_roster.admin(lambda b: b.gateway_settings.set_gateway(epsilon=0.0, explorer_floor=1.0))
    collection(bench_with_roster, "solo", ["llama-3.3-70b"])
    seated_at: dict[str, int] = {}
    for turn in range(8):
        bench = ask(client, "bench/solo").bench
        explorers = [s["alias"].removeprefix("fake/") for s in bench["seats"] if s["seat"] == "explorer"]
        assert len(explorers) == 2
        taken = {"llama"}
        for alias in explorers:
            assert FAMILY[alias] not in taken, f"{alias} shares a family on turn {turn}"
            eligible = [m for m in ROSTER if FAMILY[m] not in taken and m != "llama-3.3-70b"]
            staleness = seated_at.get(alias, -1)
            assert all(staleness <= seated_at.get(other, -1) for other in eligible), (
                f"turn {turn}: {alias} (last seated {staleness}) picked over a staler model"
            )
            taken.add(FAMILY[alias])
        for alias in explorers:
            seated_at[alias] = turn
    # Over eight panels every eligible model sat at least once: the bench keeps gathering evidence.
    assert set(seated_at) == set(ROSTER) - {"llama-3.3-70b", "llama-3.1-8b"}


def test_explorers_skip_rate_limited_and_too_small_models(bench_with_roster, client, fake):
    collection(bench_with_roster, "solo", ["llama-3.3-70b"], max_explorers=5, max_calls=6)
    fake.script("deepseek-r1", status=429, headers={"retry-after": "120"})
    collection(bench_with_roster, "limited", ["deepseek-r1"])
    first = ask(client, "bench/limited").bench
    assert first["seats"][0]["status"] == "error"
    assert first["seats"][0]["error"].startswith("rate limited (429)")
    # ~20,000 tokens: phi-4 (16k) and llama-3.1-8b (8k) are too small, deepseek-r1 is cooling down.
    bench = ask(client, "bench/solo", "x" * 73_000).bench
    explorers = {s["alias"].removeprefix("fake/") for s in bench["seats"] if s["seat"] == "explorer"}
    assert len(explorers) == 5
    assert not explorers & {"phi-4", "llama-3.1-8b", "deepseek-r1"}
    cooling = bench_with_roster.admin(lambda b: b.models.model("fake/deepseek-r1"))
    assert cooling["status"] == "cooldown"


def test_failed_empty_and_slow_seats_are_each_named(bench_with_roster, client, fake):
    fake.script("qwen3-32b", status=500)
    fake.script("gemma-3-27b", empty=True)
    fake.script("mistral-small", hang=True)
    bench_with_roster.admin(lambda b: b.gateway_settings.set_gateway(seat_timeout=1))  # the shortest allowed
    collection(
        bench_with_roster,
        "mixed",
        ["llama-3.3-70b", "qwen3-32b", "gemma-3-27b", "mistral-small"],
        max_explorers=0,
    )
    resp = ask(client, "bench/mixed")
    seats = {s["alias"].removeprefix("fake/"): s for s in resp.bench["seats"]}
    assert seats["llama-3.3-70b"]["status"] == "ok"
    assert seats["llama-3.3-70b"]["answer"] == "answer from llama-3.3-70b"
    assert seats["qwen3-32b"]["status"] == "error"
    assert seats["qwen3-32b"]["error"].startswith("upstream error (500)")
    assert seats["gemma-3-27b"]["status"] == "empty"
    assert seats["mistral-small"]["status"] == "error"
    assert seats["mistral-small"]["error"] == "timeout after 1s"
    content = resp.choices[0].message.content
    for seat in resp.bench["seats"]:
        assert f"call `{seat['call']}`" in content
        assert f"{seat['alias']} · {seat['status']}" in content


def test_every_seat_failing_still_answers_200(bench_with_roster, fake):
    fake.script("phi-4", status=503)
    collection(bench_with_roster, "broken", ["phi-4"], max_explorers=0)
    response = httpx2.post(
        f"{bench_with_roster.v1}/chat/completions",
        json={"model": "bench/broken", "messages": [{"role": "user", "content": "hi"}]},
    )
    assert response.status_code == 200
    assert response.headers["x-request-id"] == response.json()["bench"]["panel"]
    assert response.json()["bench"]["seats"][0]["status"] == "error"


def test_request_fields_reach_every_seat_unchanged(bench_with_roster, client, fake):
    collection(bench_with_roster, "pair", ["llama-3.3-70b", "qwen3-32b"], max_explorers=0)
    ask(client, "bench/pair", temperature=0.3, max_tokens=77, stop=["END"], top_p=0.9, seed=5)
    sent = sorted(fake.chat_requests, key=lambda r: r.json["model"])
    assert [r.json["model"] for r in sent] == ["llama-3.3-70b", "qwen3-32b"]
    for request in sent:
        assert {k: request.json[k] for k in ("temperature", "max_tokens", "stop", "top_p", "seed")} == {
            "temperature": 0.3,
            "max_tokens": 77,
            "stop": ["END"],
            "top_p": 0.9,
            "seed": 5,
        }
        assert request.json["messages"] == [{"role": "user", "content": "Review this function."}]
        assert request.json["stream"] is False
        assert "bench" not in request.json
        assert request.headers["authorization"] == "Bearer sk-test-fake-provider-key-0001"


def test_nominees_are_seated_once_and_unknown_ones_refused(bench_with_roster, client):
    collection(bench_with_roster, "pair", ["llama-3.3-70b", "qwen3-32b"])
    bench = ask(client, "bench/pair", extra_body={"bench": {"with": ["fake/qwen3-32b", "fake/glm-4.5-air"]}}).bench
    assert [(s["seat"], s["alias"]) for s in bench["seats"][:3]] == [
        ("member", "fake/llama-3.3-70b"),
        ("member", "fake/qwen3-32b"),
        ("nominee", "fake/glm-4.5-air"),
    ]
    assert len(bench["seats"]) == 5  # 2 members + 1 nominee + 2 explorers
    response = httpx2.post(
        f"{bench_with_roster.v1}/chat/completions",
        json={
            "model": "bench/pair",
            "messages": [{"role": "user", "content": "hi"}],
            "bench": {"with": ["qwen3-coder"]},
        },
    )
    assert response.status_code == 400
    assert response.json() == {
        "error": {
            "message": "bench.with names 'qwen3-coder', which is not on the roster. Did you mean fake/qwen3-coder?",
            "type": "invalid_request_error",
            "param": "bench.with",
            "code": "unknown_model",
        }
    }


def test_stream_with_usage_parses_in_the_sdk(bench_with_roster, client):
    collection(bench_with_roster, "pair", ["llama-3.3-70b", "qwen3-32b"], max_explorers=0)
    chunks = list(ask(client, "bench/pair", stream=True, stream_options={"include_usage": True}))
    assert len(chunks) == 3
    assert chunks[0].choices[0].delta.content.startswith("# bench/pair · panel p")
    assert [s["alias"] for s in chunks[0].bench["seats"]] == ["fake/llama-3.3-70b", "fake/qwen3-32b"]
    assert chunks[1].choices[0].finish_reason == "stop"
    assert chunks[2].choices == []
    assert chunks[2].usage.total_tokens > 0


def test_stream_sends_pings_then_one_chunk_then_done(bench_with_roster, fake):
    fake.script("phi-4", latency=1.5)
    collection(bench_with_roster, "slow", ["phi-4"], max_explorers=0)
    bench_with_roster.admin(lambda b: b.gateway_settings.set_gateway(ping_interval=1))  # the shortest allowed
    with httpx2.stream(
        "POST",
        f"{bench_with_roster.v1}/chat/completions",
        timeout=10,
        json={"model": "bench/slow", "stream": True, "messages": [{"role": "user", "content": "hi"}]},
    ) as response:
        assert response.headers["content-type"].startswith("text/event-stream")
        text = "".join(response.iter_text())
    events = [e for e in text.split("\n\n") if e]
    assert events[0] == ": ping"
    assert events.count(": ping") >= 2
    data = [e for e in events if e.startswith("data: ")]
    assert len(data) == 3
    assert data[-1] == "data: [DONE]"


def test_replayed_request_does_not_reach_the_models_again(bench_with_roster, fake):
    collection(bench_with_roster, "pair", ["llama-3.3-70b", "qwen3-32b"], max_explorers=0)
    body = {"model": "bench/pair", "messages": [{"role": "user", "content": "same question"}]}
    url = f"{bench_with_roster.v1}/chat/completions"
    first = httpx2.post(url, json=body, headers={"x-stainless-retry-count": "0"})
    assert len(fake.chat_requests) == 2
    replay = httpx2.post(url, json=body, headers={"x-stainless-retry-count": "1"})
    assert len(fake.chat_requests) == 2
    assert replay.json() == first.json()
    assert replay.headers["x-request-id"] == first.json()["bench"]["panel"]
    # Without a retry marker the same prompt is a new panel.
    again = httpx2.post(url, json=body)
    assert len(fake.chat_requests) == 4
    assert again.json()["bench"]["panel"] != first.json()["bench"]["panel"]
    keyed = httpx2.post(url, json=body, headers={"idempotency-key": "job-42"})
    keyed_again = httpx2.post(url, json=body, headers={"idempotency-key": "job-42"})
    assert len(fake.chat_requests) == 6
    assert keyed_again.json()["bench"]["panel"] == keyed.json()["bench"]["panel"]


def test_an_idempotency_key_reused_with_another_body_is_422(bench_with_roster, fake):
    collection(bench_with_roster, "pair", ["llama-3.3-70b", "qwen3-32b"], max_explorers=0)
    url = f"{bench_with_roster.v1}/chat/completions"
    first_body = {"model": "bench/pair", "messages": [{"role": "user", "content": "first question"}]}
    first = httpx2.post(url, json=first_body, headers={"idempotency-key": "job-7"})
    assert first.status_code == 200
    fake.clear()
    other = {"model": "bench/pair", "messages": [{"role": "user", "content": "another question"}]}
    refused = httpx2.post(url, json=other, headers={"idempotency-key": "job-7"})
    assert refused.status_code == 422
    assert refused.json() == {
        "error": {
            "message": f"Idempotency-Key 'job-7' was already used with a different request body "
            f"(panel {first.json()['bench']['panel']}). Send a new key for a new request, or resend the first "
            "body unchanged to get its panel back.",
            "type": "invalid_request_error",
            "param": None,
            "code": "idempotency_key_reused",
        }
    }
    assert fake.chat_requests == []
    # The first body with its key still gets its panel back; a new key is a new panel.
    again = httpx2.post(url, json=first_body, headers={"idempotency-key": "job-7"})
    assert again.json()["bench"]["panel"] == first.json()["bench"]["panel"]
    fresh = httpx2.post(url, json=other, headers={"idempotency-key": "job-8"})
    assert fresh.status_code == 200 and len(fake.chat_requests) == 2


def test_a_429_puts_the_model_in_cooldown(bench_with_roster, client, fake):
    fake.script("gemma-3-27b", status=429, headers={"retry-after": "90"})
    collection(bench_with_roster, "g", ["gemma-3-27b"], max_explorers=0)
    ask(client, "bench/g")

    async def read(bench: Bench):
        return (await bench.state.snapshot()).models["fake/gemma-3-27b"]

    model = bench_with_roster.admin(read)
    panel_at = bench_with_roster.admin(lambda b: b.models.model("fake/gemma-3-27b"))
    assert panel_at["status"] == "cooldown"
    assert model.cooldown_until is not None
    assert 80 < model.cooldown_until - time.time() <= 90


def test_a_context_error_lowers_the_learned_window(bench_with_roster, client, fake):
    fake.script("glm-4.5-air", context_limit=20_000)
    collection(bench_with_roster, "g", ["glm-4.5-air"], max_explorers=0)
    seat = ask(client, "bench/g").bench["seats"][0]
    assert seat["status"] == "error"
    assert "20000" in seat["error"].replace(",", "")
    shown = bench_with_roster.admin(lambda b: b.models.model("fake/glm-4.5-air"))
    assert shown["context_window"] == 20_000
    assert shown["facts"]["context_window"] == {"value": 20_000, "source": "learned"}
    # Now a 30k-token prompt is refused before any model is called.
    fake.clear()
    response = httpx2.post(
        f"{bench_with_roster.v1}/chat/completions",
        json={"model": "bench/g", "messages": [{"role": "user", "content": "y" * 110_000}]},
    )
    assert response.status_code == 413
    assert fake.chat_requests == []
    # As a nominee it is skipped, said why, and never called; the members answer.
    collection(bench_with_roster, "big", ["llama-3.3-70b"], max_explorers=0)
    nominated = httpx2.post(
        f"{bench_with_roster.v1}/chat/completions",
        json={
            "model": "bench/big",
            "messages": [{"role": "user", "content": "y" * 110_000}],
            "bench": {"with": ["fake/glm-4.5-air"]},
        },
    )
    assert nominated.status_code == 200
    bench = nominated.json()["bench"]
    assert bench["skipped"] == [
        {
            "seat": "nominee",
            "alias": "fake/glm-4.5-air",
            "why": "its context window (20,000 tokens) is smaller than the prompt (about 33,612 tokens)",
        }
    ]
    assert [(s["seat"], s["alias"], s["status"]) for s in bench["seats"]] == [("member", "fake/llama-3.3-70b", "ok")]
    assert [r.json["model"] for r in fake.chat_requests] == ["llama-3.3-70b"]


def test_client_disconnect_cancels_running_seats(bench_with_roster, fake):
    fake.script("phi-4", hang=True)
    collection(bench_with_roster, "hang", ["phi-4", "kimi-k2"], max_explorers=0)
    with pytest.raises(httpx2.ReadTimeout):
        httpx2.post(
            f"{bench_with_roster.v1}/chat/completions",
            timeout=1.0,
            json={"model": "bench/hang", "messages": [{"role": "user", "content": "hi"}]},
        )

    async def panels(bench: Bench):
        from benchwarmers.store import calls

        async with bench.state.read() as conn:
            return await calls.list_panels(conn)

    deadline = time.monotonic() + 5
    found = []
    while time.monotonic() < deadline and not found:
        found = bench_with_roster.admin(panels)
        time.sleep(0.1)
    seats = {s["alias"]: s for s in found[0]["seats"]}
    assert seats["fake/phi-4"]["status"] == "error"
    assert seats["fake/phi-4"]["error"] == "cancelled: client disconnected"
    assert seats["fake/kimi-k2"]["status"] == "ok"


def test_a_replay_while_the_first_still_runs_waits_for_it(bench_with_roster, fake):
    fake.script("phi-4", latency=0.8)
    collection(bench_with_roster, "slow", ["phi-4"], max_explorers=0)
    body = {"model": "bench/slow", "messages": [{"role": "user", "content": "take your time"}]}
    url = f"{bench_with_roster.v1}/chat/completions"
    first: dict = {}
    thread = threading.Thread(target=lambda: first.update(httpx2.post(url, json=body, timeout=10).json()))
    thread.start()
    deadline = time.monotonic() + 5
    while not fake.chat_requests and time.monotonic() < deadline:
        time.sleep(0.02)
    replay = httpx2.post(url, json=body, headers={"x-stainless-retry-count": "1"}, timeout=10)
    thread.join()
    assert replay.json()["bench"]["panel"] == first["bench"]["panel"]
    assert len(fake.chat_requests) == 1
