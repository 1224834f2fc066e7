"""Secrets the bench never passes on or writes down, end to end over real HTTP:

- an endpoint may name as its key only a provider key variable (the rule in bench/key_names.py);
- a provider key, the admin token or a gateway key echoed in a 200 answer is stored and shown redacted;
- an image URL's query string never reaches the database, even when a provider quotes it back;
- image data is a placeholder in every request shape a client can send, while the seats get the real bytes.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from sqlalchemy import select

from benchwarmers.bench.services import Bench
from benchwarmers.store import roster
from benchwarmers.store.changes import record_change
from benchwarmers.store.schema import panels, seats
from tests.fakes.upstream import FakeUpstream, echoed
from tests.support.benchserver import BenchServer, listed

PROVIDER_KEY = "CanaryProviderKey3a4b5c6d7e8f9a0b"
ENV_SECRET = "CanaryEnvSecret0f1e2d3c4b5a6978"
ADMIN_TOKEN = "CanaryAdminToken9z8y7x6w5v4u3t2s"
URL_TOKEN = "CanaryUrlToken1q2w3e4r5t6y7u8i"
PNG = base64.b64encode(b"SHAPEPIXELS!" * 1000).decode()  # 12,000 bytes: "12 KB"
DATA_URL = f"data:image/png;base64,{PNG}"

NOT_READ = (
    "api_key_env {name!r} is not read as a provider key: the bench reads only names ending in _API_KEY or "
    "_API_TOKEN, the presets' key variables (such as GITHUB_TOKEN) and the names listed in "
    "BENCHWARMERS_KEY_ENV_ALLOW. To use {name}, add it to BENCHWARMERS_KEY_ENV_ALLOW (comma-separated) in the "
    "environment the bench runs in, or give the key with --api-key"
)
OWN_SETTING = (
    "api_key_env {name!r} is one of the bench's own settings (BENCHWARMERS_* and BENCH_* are never sent to a "
    "provider); name the variable that holds the provider's key, or give the key with --api-key"
)


def refusal(message: str) -> dict[str, Any]:
    return {
        "error": {
            "message": message,
            "type": "invalid_request_error",
            "param": "api_key_env",
            "code": "api_key_env_not_allowed",
        }
    }


def add(server: BenchServer, name: str, base_url: str, api_key_env: str) -> httpx2.Response:
    body = {"name": name, "base_url": base_url, "api_key_env": api_key_env}
    return httpx2.post(f"{server.url}/api/endpoints", json=body, timeout=30)


def _rows(server: BenchServer) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    async def read(bench: Bench) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        async with bench.state.read() as conn:
            panel_rows = [dict(r._mapping) for r in await conn.execute(select(panels))]
            seat_rows = [dict(r._mapping) for r in await conn.execute(select(seats).order_by(seats.c.position))]
        return panel_rows, seat_rows

    return server.admin(read)


# -- api_key_env --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("variable", "message"),
    [
        ("SESSION_SECRET", NOT_READ),
        ("HOME", NOT_READ),
        ("AWS_SECRET_ACCESS_KEY", NOT_READ),
        ("BENCHWARMERS_ADMIN_TOKEN", OWN_SETTING),
        ("bench_bind", OWN_SETTING),
        ("BENCHWARMERS_SOMETHING_API_KEY", OWN_SETTING),
    ],
)
def test_an_endpoint_may_not_name_a_variable_that_is_not_a_provider_key(server, fake_upstream, variable, message):
    refused = add(server, "sneaky", fake_upstream.base_url, variable)
    assert (refused.status_code, refused.json()) == (400, refusal(message.format(name=variable)))
    assert httpx2.get(f"{server.url}/api/endpoints").json()["data"] == []
    assert fake_upstream.requests == []


@pytest.mark.parametrize(
    "variable", ["OPENAI_API_KEY", "together_api_key", "CLOUDFLARE_API_TOKEN", "GITHUB_TOKEN", "GEMINI_API_KEY"]
)
def test_provider_key_names_and_preset_variables_are_accepted(server, fake_upstream, variable):
    made = add(server, "provider", fake_upstream.base_url, variable)
    assert made.status_code == 201, made.text
    assert made.json()["api_key_env"] == variable


def test_the_allow_list_admits_other_names_but_never_the_benchs_own(tmp_path, fake_upstream, monkeypatch):
    monkeypatch.setenv("HF_TOKEN", ENV_SECRET)
    fake_upstream.listing("/v1/models", {"object": "list", "data": [listed("tiny")]})
    server = BenchServer(tmp_path / "home", key_env_allow=" HF_TOKEN ,BENCHWARMERS_ADMIN_TOKEN").start()
    try:
        assert add(server, "hf", fake_upstream.base_url, "HF_TOKEN").status_code == 201
        refreshed = httpx2.post(f"{server.url}/api/endpoints/hf/refresh", timeout=30)
        assert refreshed.status_code == 200, refreshed.text
        [listing] = fake_upstream.requests
        assert (listing.path, listing.headers["authorization"]) == ("/v1/models", f"Bearer {ENV_SECRET}")
        own = add(server, "own", fake_upstream.base_url, "BENCHWARMERS_ADMIN_TOKEN")
        assert (own.status_code, own.json()) == (400, refusal(OWN_SETTING.format(name="BENCHWARMERS_ADMIN_TOKEN")))
    finally:
        server.stop()


def test_an_endpoint_stored_before_the_rule_never_sends_its_variable(server, fake_upstream, monkeypatch):
    monkeypatch.setenv("FAKE_API_KEY", PROVIDER_KEY)
    monkeypatch.setenv("SESSION_SECRET", ENV_SECRET)
    fake_upstream.script("old-model", latency=0.01)
    fake_upstream.listing("/v1/models", {"object": "list", "data": [listed("old-model")]})
    assert add(server, "old", fake_upstream.base_url, "FAKE_API_KEY").status_code == 201
    assert httpx2.post(f"{server.url}/api/endpoints/old/refresh", timeout=30).status_code == 200

    async def set_up(bench: Bench) -> None:
        await bench.collections.add_collection({"name": "solo", "members": ["old/old-model"], "max_explorers": 0})
        # As a database written before the rule would hold it.
        async with bench.state.write() as conn:
            row = await roster.get_endpoint(conn, "old")
            assert row is not None
            await roster.update_endpoint(conn, row["id"], api_key_env="SESSION_SECRET")
            await record_change(conn, actor="test", subject="endpoint", name="old", action="update")

    server.admin(set_up)
    fake_upstream.clear()
    message = NOT_READ.format(name="SESSION_SECRET")

    refreshed = httpx2.post(f"{server.url}/api/endpoints/old/refresh", timeout=30)
    assert (refreshed.status_code, refreshed.json()) == (400, refusal(message))
    [endpoint] = httpx2.get(f"{server.url}/api/endpoints").json()["data"]
    assert endpoint["refresh_error"] == message

    body = {"model": "bench/solo", "messages": [{"role": "user", "content": "hello"}]}
    reply = httpx2.post(f"{server.v1}/chat/completions", json=body, timeout=30)
    assert reply.status_code == 200
    [seat] = reply.json()["bench"]["seats"]
    assert (seat["alias"], seat["status"], seat["answer"], seat["error"]) == (
        "old/old-model",
        "error",
        "",
        f"auth failed: {message}",
    )
    assert fake_upstream.requests == []


def test_a_base_url_with_a_query_is_refused_and_one_stored_before_is_shown_without_it(server, fake_upstream):
    for url in (f"{fake_upstream.base_url}?key={URL_TOKEN}", f"{fake_upstream.base_url}#{URL_TOKEN}"):
        body = {"name": "q", "base_url": url, "api_key": PROVIDER_KEY}
        refused = httpx2.post(f"{server.url}/api/endpoints", json=body)
        assert (refused.status_code, refused.json()["error"]) == (
            400,
            {
                "message": "base URL must not carry a query string or fragment (?... or #...); a key goes in "
                "--api-key-env or --api-key",
                "type": "invalid_request_error",
                "param": "base_url",
                "code": "invalid_request",
            },
        )
    assert add(server, "old", fake_upstream.base_url, "FAKE_API_KEY").status_code == 201

    async def stored_before(bench: Bench) -> None:
        async with bench.state.write() as conn:
            row = await roster.get_endpoint(conn, "old")
            assert row is not None
            await roster.update_endpoint(conn, row["id"], base_url=f"{fake_upstream.base_url}?key={URL_TOKEN}")

    server.admin(stored_before)
    listed_endpoints = httpx2.get(f"{server.url}/api/endpoints")
    assert [e["base_url"] for e in listed_endpoints.json()["data"]] == [f"{fake_upstream.base_url}?..."]
    assert URL_TOKEN not in listed_endpoints.text


# -- answers, errors and the database ----------------------------------------------------------------

IMAGE_URL = f"https://images.example/cat.png?token={URL_TOKEN}#frag"
GATEWAY_LOOKALIKE = "bwk_" + "Q" * 43
BLABBER = f"the token is {ADMIN_TOKEN}, a key {GATEWAY_LOOKALIKE}, sk-example-0123456789"


@pytest.fixture
def echo_bench(tmp_path: Path) -> Iterator[tuple[BenchServer, FakeUpstream, str]]:
    with FakeUpstream() as fake:
        fake.script("parrot", latency=0.01, echo=True)
        fake.script("complainer", latency=0.01, echo=True, status=400)
        fake.script(
            "blabber",
            latency=0.01,
            reply=f"the token is {ADMIN_TOKEN}, a key {GATEWAY_LOOKALIKE}, sk-example-0123456789",
        )
        fake.listing(
            "/v1/models",
            {"object": "list", "data": [listed(m, 128_000, vision=True) for m in ("parrot", "complainer", "blabber")]},
        )
        server = BenchServer(tmp_path / "home", admin_token=ADMIN_TOKEN).start()
        try:

            async def set_up(bench: Bench) -> str:
                await bench.endpoints.add_endpoint("fake", fake.base_url, "openrouter", api_key=PROVIDER_KEY)
                await bench.endpoints.refresh_endpoint("fake")
                await bench.collections.add_collection(
                    {
                        "name": "echo",
                        "members": ["fake/parrot", "fake/complainer", "fake/blabber"],
                        "max_explorers": 0,
                        "merger": "fake/blabber",
                    }
                )
                key, _ = await bench.keys.create("app")
                return key

            yield server, fake, server.admin(set_up)
        finally:
            server.stop()


def test_known_secrets_echoed_in_answers_and_errors_are_stored_and_shown_redacted(echo_bench, store, request):
    server, fake, key = echo_bench
    messages = [
        {
            "role": "user",
            "content": [{"type": "text", "text": "look"}, {"type": "image_url", "image_url": {"url": IMAGE_URL}}],
        }
    ]
    headers = {"authorization": f"Bearer {key}"}
    reply = httpx2.post(
        f"{server.v1}/chat/completions", json={"model": "bench/echo", "messages": messages}, headers=headers, timeout=30
    )
    assert reply.status_code == 200, reply.text
    # The seats were sent the real URL and the real key.
    assert {r.json["messages"][0]["content"][1]["image_url"]["url"] for r in fake.chat_requests} == {IMAGE_URL}
    assert {r.headers["authorization"] for r in fake.chat_requests} == {f"Bearer {PROVIDER_KEY}"}
    assert echoed(PROVIDER_KEY, {"messages": messages}).count(URL_TOKEN) == 1

    sent = json.dumps(messages, separators=(",", ":"))
    parrot = "key=[redacted] messages=" + sent.replace(f"token={URL_TOKEN}", "[redacted]")
    complainer = "bad request (400): key=[redacted] messages=" + sent.replace(f"?token={URL_TOKEN}#frag", "?...")
    blabber = "the token is [redacted], a key [redacted], sk-example-0123456789"
    shown = [(s["alias"], s["status"], s["answer"], s["error"]) for s in reply.json()["bench"]["seats"]]
    assert shown == [
        ("fake/parrot", "ok", parrot, ""),
        ("fake/complainer", "error", "", complainer),
        ("fake/blabber", "ok", blabber, ""),
    ]
    [panel], seat_rows = _rows(server)
    assert [(s["alias"], s["status"], s["answer"], s["error"]) for s in seat_rows] == shown
    assert panel["request"]["messages"][0]["content"][1] == {
        "type": "text",
        "text": "[image: https://images.example/cat.png?...]",
    }

    # Merged: the merger is sent the answers as stored, never one seat's echo of a key.
    fake.clear()
    merged = httpx2.post(
        f"{server.v1}/chat/completions",
        json={"model": "bench/echo:merged", "messages": messages},
        headers=headers,
        timeout=30,
    )
    assert merged.status_code == 200
    assert merged.json()["bench"]["merger"]["alias"] == "fake/blabber"
    # The merger is called once the seats have answered: the last request.
    called = [r.json["model"] for r in fake.chat_requests]
    assert (sorted(called[:3]), called[3:]) == (["blabber", "complainer", "parrot"], ["blabber"])
    merger_call = fake.chat_requests[-1]
    assert parrot in merger_call.json["messages"][-1]["content"]
    assert PROVIDER_KEY.encode() not in merger_call.body and URL_TOKEN.encode() not in merger_call.body

    server.stop()
    home = server.settings.home
    files = {path.name: path.read_bytes() for path in home.rglob("*") if path.is_file()}
    if store == "sqlite":
        assert "bench.db" in files
    else:
        files["pg_dump"] = request.getfixturevalue("pg_cluster").dump(server.settings.db_url)
    for name, data in files.items():
        for canary in (URL_TOKEN, PROVIDER_KEY, ADMIN_TOKEN, key):
            assert canary.encode() not in data, f"{canary} in {name}"


# -- image data in every request shape --------------------------------------------------------------


def test_image_data_is_a_placeholder_in_every_request_shape_and_the_seat_gets_the_real_bytes(server, fake_upstream):
    fake_upstream.script("catcher", latency=0.01)
    fake_upstream.listing("/v1/models", {"object": "list", "data": [listed("catcher", 128_000, vision=True)]})

    async def set_up(bench: Bench) -> None:
        await bench.endpoints.add_endpoint("fake", fake_upstream.base_url, "openrouter", api_key=PROVIDER_KEY)
        await bench.endpoints.refresh_endpoint("fake")
        await bench.collections.add_collection({"name": "shapes", "members": ["fake/catcher"], "max_explorers": 0})

    server.admin(set_up)
    arguments = json.dumps({"image": DATA_URL, "caption": "a chair"})
    messages = [
        {
            "role": "user",
            "content": [
                {"type": "input_text", "text": "Responses-style"},
                {"type": "input_image", "image_url": DATA_URL, "detail": "low"},
                {"type": "input_image", "image_url": f"https://images.example/a.png?sig={URL_TOKEN}"},
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}},
                {"type": "image", "source": {"type": "url", "url": f"https://images.example/b.png?sig={URL_TOKEN}"}},
                {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "plain words"}},
                {"inline_data": {"mime_type": "image/jpeg", "data": PNG}},
            ],
        },
        {"role": "user", "content": "Ollama-style", "images": [PNG]},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "show", "arguments": arguments}}],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": f"raw {PNG} end"},
    ]
    metadata = {"thumbnail": DATA_URL, "raw": PNG, "note": "kept"}
    body = {"model": "bench/shapes", "messages": messages, "metadata": metadata, "temperature": 0.5}
    reply = httpx2.post(f"{server.v1}/chat/completions", json=body, timeout=30)
    assert reply.status_code == 200, reply.text
    assert reply.json()["bench"]["seats"][0]["status"] == "ok"

    [sent] = fake_upstream.chat_requests
    assert (sent.json["messages"], sent.json["metadata"]) == (messages, metadata)

    [panel], _ = _rows(server)
    assert panel["request"] == {
        "model": "bench/shapes",
        "messages": [
            {
                "role": "user",
                "content": [
                    {"type": "input_text", "text": "Responses-style"},
                    {"type": "text", "text": "[image: data URL, 12 KB]"},
                    {"type": "text", "text": "[image: https://images.example/a.png?...]"},
                    {"type": "text", "text": "[image: image/png, 12 KB]"},
                    {"type": "text", "text": "[image: https://images.example/b.png?...]"},
                    {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "plain words"}},
                    {"inline_data": {"mime_type": "image/jpeg", "data": "[image: image/jpeg, 12 KB]"}},
                ],
            },
            {"role": "user", "content": "Ollama-style", "images": ["[image: base64, 12 KB]"]},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {
                            "name": "show",
                            "arguments": '{"image": "[image: data URL, 12 KB]", "caption": "a chair"}',
                        },
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "call_1", "content": "raw [data: base64, 12 KB] end"},
        ],
        "metadata": {"thumbnail": "[image: data URL, 12 KB]", "raw": "[data: base64, 12 KB]", "note": "kept"},
        "temperature": 0.5,
    }
    server.stop()
    for path in server.settings.home.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            assert PNG[:64].encode() not in data and URL_TOKEN.encode() not in data, path.name
