"""Requests a minute per key (per process, or shared through Redis), the 20 MB body cap, and the
refusal to listen beyond loopback without an admin token."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx2
import openai
import pytest
from openai import OpenAI
from typer.testing import CliRunner

from benchwarmers.bench.pacing import async_storage_uri
from benchwarmers.cli.app import app
from benchwarmers.errors import RateLimited
from benchwarmers.server.body import BODY_CAP, TOO_LARGE
from benchwarmers.server.ratelimit import RateLimits
from tests.support.benchserver import BenchServer, add_fake_endpoint, free_port, listed
from tests.support.panels import collection

MB = 1024 * 1024


@pytest.fixture
def keyed_server(tmp_path: Path, fake) -> Iterator[BenchServer]:
    server = BenchServer(tmp_path / "keyed", require_keys=True).start()
    try:
        add_fake_endpoint(server, fake, models=[listed("phi-4"), listed("qwen3-32b")])
        collection(server, "solo", ["phi-4"], max_explorers=0)
        yield server
    finally:
        server.stop()


def _ask(server: BenchServer, key: str, text: str = "hi") -> httpx2.Response:
    body = {"model": "bench/solo", "messages": [{"role": "user", "content": text}]}
    return httpx2.post(f"{server.v1}/chat/completions", json=body, headers={"authorization": f"Bearer {key}"})


def test_a_key_past_its_requests_a_minute_gets_429_with_retry_after(keyed_server, fake):
    key, _ = keyed_server.admin(lambda bench: bench.keys.create("ci", rpm=3))
    free, _ = keyed_server.admin(lambda bench: bench.keys.create("free"))
    assert [_ask(keyed_server, key, f"q{i}").status_code for i in range(3)] == [200, 200, 200]
    seats_before = len(fake.chat_requests)
    refused = _ask(keyed_server, key, "q4")
    assert refused.status_code == 429
    assert refused.json() == {
        "error": {
            "message": f"gateway key 'ci' may make 3 requests a minute; retry in {refused.headers['retry-after']} s",
            "type": "rate_limit_error",
            "param": None,
            "code": "rate_limit_exceeded",
        }
    }
    assert 1 <= int(refused.headers["retry-after"]) <= 60
    assert refused.headers["x-should-retry"] == "false"
    assert len(fake.chat_requests) == seats_before  # refused before any model was called
    # Panels count, reads do not; and the limit is the key's own: another key is not affected.
    assert httpx2.get(f"{keyed_server.v1}/models", headers={"authorization": f"Bearer {key}"}).status_code == 200
    assert _ask(keyed_server, free).status_code == 200


def test_only_panels_count_not_refusals_or_reads(keyed_server, fake):
    collection(keyed_server, "other", ["qwen3-32b"], max_explorers=0)
    key, _ = keyed_server.admin(lambda bench: bench.keys.create("scoped", collections=["solo"], rpm=2))
    headers = {"authorization": f"Bearer {key}"}
    other = {"model": "bench/other", "messages": [{"role": "user", "content": "hi"}]}
    for _ in range(3):
        refused = httpx2.post(f"{keyed_server.v1}/chat/completions", json=other, headers=headers)
        assert (refused.status_code, refused.json()["error"]["code"]) == (403, "collection_not_allowed")
        assert httpx2.get(f"{keyed_server.v1}/models", headers=headers).status_code == 200
    # Three refusals and three reads later, both of its panels a minute are still there.
    assert [_ask(keyed_server, key, f"q{i}").status_code for i in range(3)] == [200, 200, 429]


def test_the_openai_sdk_does_not_retry_into_the_limit(keyed_server):
    key, _ = keyed_server.admin(lambda bench: bench.keys.create("sdk", rpm=1))
    client = OpenAI(base_url=keyed_server.v1, api_key=key, max_retries=3, timeout=30)
    messages = [{"role": "user", "content": "hi"}]
    client.chat.completions.create(model="bench/solo", messages=messages)
    started = time.monotonic()
    with pytest.raises(openai.RateLimitError) as refused:
        client.chat.completions.create(model="bench/solo", messages=[{"role": "user", "content": "again"}])
    # x-should-retry: false stops the SDK at once instead of sleeping Retry-After three times.
    assert time.monotonic() - started < 5
    assert refused.value.response.headers["x-should-retry"] == "false"


async def test_rate_limits_count_per_key_and_say_how_long_to_wait():
    limits = RateLimits()
    await limits.hit_key("unlimited", None)
    for _ in range(2):
        await limits.hit_key("a", 2)
    with pytest.raises(RateLimited) as refused:
        await limits.hit_key("a", 2)
    assert refused.value.headers["x-should-retry"] == "false"
    assert 59 <= int(refused.value.headers["Retry-After"]) <= 60
    await limits.hit_key("b", 2)


def test_redis_urls_name_the_asyncio_storage():
    assert async_storage_uri("redis://localhost:6379/0") == "async+redis://localhost:6379/0"
    assert async_storage_uri("rediss://h:6380") == "async+rediss://h:6380"
    assert async_storage_uri("unix:///run/redis.sock") == "async+redis+unix:///run/redis.sock"
    assert async_storage_uri("async+redis://h") == "async+redis://h"


# -- shared counting through Redis ---------------------------------------------------------------


def test_redis_shares_the_count_between_processes(redis_url, tmp_path, fake):
    first = BenchServer(tmp_path / "home", require_keys=True, redis_url=redis_url).start()
    second = BenchServer(tmp_path / "home", require_keys=True, redis_url=redis_url).start()
    try:
        key, _ = first.admin(lambda bench: bench.keys.create("shared", rpm=2))
        add_fake_endpoint(first, fake, models=[listed("phi-4")])
        collection(first, "solo", ["phi-4"], max_explorers=0)
        assert [_ask(server, key, f"q{i}").status_code for i, server in enumerate((first, second, first, second))] == [
            200,
            200,
            429,
            429,
        ]
    finally:
        second.stop()
        first.stop()


def test_without_redis_each_process_counts_alone(tmp_path, fake):
    first = BenchServer(tmp_path / "home", require_keys=True).start()
    second = BenchServer(tmp_path / "home", require_keys=True).start()
    try:
        key, _ = first.admin(lambda bench: bench.keys.create("apart", rpm=1))
        add_fake_endpoint(first, fake, models=[listed("phi-4")])
        collection(first, "solo", ["phi-4"], max_explorers=0)
        assert [_ask(server, key, f"q{i}").status_code for i, server in enumerate((first, second, first))] == [
            200,
            200,
            429,
        ]
    finally:
        second.stop()
        first.stop()


# -- the body cap ----------------------------------------------------------------------------------

TOO_LARGE_BODY = {
    "error": {"message": TOO_LARGE, "type": "invalid_request_error", "param": None, "code": "request_too_large"}
}


def _big_body(size: int) -> bytes:
    head = b'{"model": "bench/solo", "messages": [{"role": "user", "content": "'
    tail = b'"}]}'
    return head + b"x" * (size - len(head) - len(tail)) + tail


@pytest.mark.sqlite_only  # two servers with two homes: on one PostgreSQL database they would share one bench
@pytest.mark.parametrize("keyed", [False, True], ids=["local", "with-key"])
def test_a_21_mb_body_is_413_before_any_model_is_called(bench_with_roster, keyed_server, fake, keyed):
    server = keyed_server if keyed else bench_with_roster
    headers = {"content-type": "application/json"}
    if keyed:
        key, _ = server.admin(lambda bench: bench.keys.create("big"))
        headers["authorization"] = f"Bearer {key}"
    else:
        collection(server, "solo", ["phi-4"], max_explorers=0)
    fake.clear()
    response = httpx2.post(f"{server.v1}/chat/completions", content=_big_body(21 * MB), headers=headers, timeout=60)
    assert response.status_code == 413
    assert response.json() == TOO_LARGE_BODY
    assert fake.chat_requests == []


def test_a_chunked_body_over_20_mb_is_413_while_it_is_read(bench_with_roster, fake):
    collection(bench_with_roster, "solo", ["phi-4"], max_explorers=0)
    fake.clear()
    body = _big_body(21 * MB)

    def chunks() -> Iterator[bytes]:
        for start in range(0, len(body), MB):
            yield body[start : start + MB]

    response = httpx2.post(
        f"{bench_with_roster.v1}/chat/completions",
        content=chunks(),
        headers={"content-type": "application/json"},
        timeout=60,
    )
    assert response.request.headers.get("transfer-encoding") == "chunked"
    assert "content-length" not in response.request.headers
    assert response.status_code == 413
    assert response.json() == TOO_LARGE_BODY
    assert fake.chat_requests == []


def test_a_body_at_the_cap_is_read(bench_with_roster, fake):
    collection(bench_with_roster, "solo", ["phi-4"], max_explorers=0)
    response = httpx2.post(
        f"{bench_with_roster.v1}/chat/completions",
        content=_big_body(BODY_CAP),
        headers={"content-type": "application/json"},
        timeout=60,
    )
    # Read, parsed and refused for its size against phi-4's window, not for the body cap.
    assert response.status_code == 413
    assert response.json()["error"]["code"] != "request_too_large"


# -- listening beyond loopback ------------------------------------------------------------------


def _refusal(host: str) -> str:
    return (
        f"error: refusing to listen on {host}: it is not a loopback address, so anyone who can reach it could "
        "call your models. Set BENCHWARMERS_ADMIN_TOKEN (e.g. `export BENCHWARMERS_ADMIN_TOKEN=$(python -c "
        "'import secrets; print(secrets.token_urlsafe(32))')`) and create gateway keys, or bind to 127.0.0.1.\n"
    )


def test_serve_refuses_a_non_loopback_bind_without_an_admin_token(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("BENCHWARMERS_", "BENCH_"))}
    env["BENCHWARMERS_HOME"] = str(tmp_path / "home")
    result = subprocess.run(
        [str(Path(sys.executable).with_name("benchwarmers")), "serve", "--bind", f"0.0.0.0:{free_port()}"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (result.returncode, result.stdout, result.stderr) == (1, "", _refusal("0.0.0.0"))
    assert not (tmp_path / "home").exists()


@pytest.mark.parametrize(
    ("bind", "host"), [("[::]:8123", "::"), ("192.0.2.7", "192.0.2.7"), ("bench.lan:80", "bench.lan")]
)
def test_every_non_loopback_host_is_refused(tmp_path, monkeypatch, bind, host):
    monkeypatch.setenv("BENCHWARMERS_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("BENCHWARMERS_ADMIN_TOKEN", raising=False)
    result = CliRunner().invoke(app, ["serve", "--bind", bind])
    assert (result.exit_code, result.stderr) == (1, _refusal(host))
