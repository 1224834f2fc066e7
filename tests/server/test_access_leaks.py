"""Nothing private leaks: run panels with canary provider keys (stored and from the environment), a
canary gateway key, a canary admin token and images carrying a canary byte pattern, through success
and every failure class the fake provider has; then search, byte for byte, the database files, the
exports and CLI listings, the server's logs and every page and JSON document the server serves.
"""

from __future__ import annotations

import base64
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from sqlalchemy import select
from typer.testing import CliRunner

from benchwarmers.bench.services import Bench
from benchwarmers.cli.app import app as cli
from benchwarmers.cli.verdicts import ExportKind
from benchwarmers.store.schema import panels, seats
from tests.fakes.upstream import FakeUpstream
from tests.support.benchserver import BenchServer, listed

PROVIDER_STORED = "CanaryStoredProviderKey7f3a9c1e2b4d"
PROVIDER_ENV = "CanaryEnvProviderKey5e6f7a8b9c0d1e"
PROVIDER_ENV_NAME = "BW_CANARY_PROVIDER_KEY"
ADMIN_TOKEN = "CanaryAdminToken0a1b2c3d4e5f6a7b8c9d"
URL_PASSWORD = "CanaryUrlPassword314159"
URL_SIGNATURE = "CanaryUrlSignature271828"
PIXELS = b"CANARYPIXELS"  # 12 bytes: its base64 repeats as one 16-character run
PIXELS_B64 = base64.b64encode(PIXELS).decode()
IMAGE = PIXELS * 20_000
DATA_URL = "data:image/png;base64," + base64.b64encode(IMAGE).decode()
DATA_PLACEHOLDER = "[image: data URL, 234 KB]"

FAILURES: dict[str, dict[str, Any]] = {
    "limited": {"status": 429, "headers": {"retry-after": "7"}},
    "broken": {"status": 500},
    "small": {"context_limit": 4096},
    "keyecho": {"status": 401},  # OpenAI's 401 echoes the key it was sent
    "gemini": {"gemini_error": True},
    "plaintext": {"plain_error": f"upstream exploded with {PROVIDER_STORED} and {PROVIDER_ENV}"},
    "slow": {"hang": True},
    "dropped": {"drop": True},
    "echo": {
        "status": 400,
        "body": {
            "error": {
                "message": f"cannot read {DATA_URL[:4000]} sent with Bearer {PROVIDER_ENV} ({PROVIDER_STORED})",
                "type": "invalid_request_error",
            }
        },
    },
    # Careless providers: the answer, or the error, quotes the key and every message it was sent.
    "parrot": {"echo": True},
    "complainer": {"echo": True, "status": 400},
}
COLLECTIONS = {
    "first": ("stored", ["ok", "limited", "broken", "small", "keyecho"]),
    "second": ("stored", ["gemini", "plaintext", "slow", "dropped", "echo"]),
    "third": ("envkey", ["ok", "keyecho", "plaintext", "echo", "small"]),
    "fourth": ("envkey", ["parrot", "complainer", "ok"]),
}


class Captured(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.setFormatter(logging.Formatter("%(name)s %(levelname)s %(message)s"))
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(self.format(record))


@pytest.fixture
def captured_logs() -> Iterator[Captured]:
    handler = Captured()
    root = logging.getLogger()
    level = root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    try:
        yield handler
    finally:
        root.removeHandler(handler)
        root.setLevel(level)


class Evidence:
    """Everything the bench wrote or served, to be searched for canaries."""

    def __init__(self) -> None:
        self.items: list[tuple[str, bytes]] = []

    def add(self, where: str, data: bytes | str) -> None:
        self.items.append((where, data.encode() if isinstance(data, str) else data))

    def response(self, where: str, response: httpx2.Response) -> httpx2.Response:
        self.add(f"{where} (headers)", "\n".join(f"{k}: {v}" for k, v in response.headers.items()))
        self.add(where, response.content)
        return response


def _files(home: Path, evidence: Evidence, when: str) -> None:
    for path in sorted(home.rglob("*")):
        if path.is_file():
            evidence.add(f"{when}: {path.name}", path.read_bytes())


def _set_up(server: BenchServer, fake: FakeUpstream, refusing: FakeUpstream) -> str:
    fake.script("ok", latency=0.01)
    for model, behaviour in FAILURES.items():
        fake.script(model, latency=0.01, **behaviour)
    models = ["ok", *FAILURES]
    fake.listing("/v1/models", {"object": "list", "data": [listed(m, 128_000, vision=True) for m in models]})

    async def setup(bench: Bench) -> str:
        await bench.endpoints.add_endpoint(
            "stored", fake.base_url, "openrouter", api_key=PROVIDER_STORED, free_tier=True
        )
        await bench.endpoints.add_endpoint(
            "envkey", fake.base_url, "openrouter", api_key_env=PROVIDER_ENV_NAME, free_tier=True
        )
        for endpoint in ("stored", "envkey"):
            await bench.endpoints.refresh_endpoint(endpoint)
        # A provider whose listing refuses the key and echoes it: the refresh error is kept and shown.
        await bench.endpoints.add_endpoint("refusing", refusing.base_url, "openai", api_key=PROVIDER_STORED)
        try:
            await bench.endpoints.refresh_endpoint("refusing")
        except Exception as exc:
            assert PROVIDER_STORED not in str(exc)
        for name, (endpoint, members) in COLLECTIONS.items():
            await bench.collections.add_collection(
                {
                    "name": name,
                    "members": [f"{endpoint}/{m}" for m in members],
                    "description": f"{name} canaries",
                    "tags": ["leak"],
                    "max_explorers": 0,
                }
            )
        await bench.gateway_settings.set_gateway(seat_timeout=1)
        key, _ = await bench.keys.create("canary-app")
        return key

    return server.admin(setup)


def _image_messages(url: str, text: str) -> list[dict[str, Any]]:
    return [
        {"role": "system", "content": "Describe images."},
        {
            "role": "user",
            "content": [{"type": "text", "text": text}, {"type": "image_url", "image_url": {"url": url}}],
        },
    ]


def _every_shape(image_url: str) -> dict[str, Any]:
    """The canary image in every shape a client can send, beside OpenAI's image_url."""
    raw = base64.b64encode(IMAGE).decode()
    return {
        "messages": [
            {
                "role": "user",
                "content": [
                    {"type": "input_text", "text": "every shape"},
                    {"type": "input_image", "image_url": DATA_URL},
                    {"type": "input_image", "image_url": image_url},
                    {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": raw}},
                    {"type": "image", "source": {"type": "url", "url": image_url}},
                    {"type": "image_url", "image_url": {"url": image_url}},
                ],
            },
            {"role": "user", "content": "and Ollama's", "images": [raw]},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "see", "arguments": f'{{"img": "{DATA_URL}"}}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "content": raw},
        ],
        "metadata": {"image": DATA_URL, "raw": raw, "url": image_url},
    }


def _run_panels(server: BenchServer, key: str, image_url: str, evidence: Evidence) -> list[str]:
    headers = {"authorization": f"Bearer {key}"}
    chat = f"{server.v1}/chat/completions"
    calls: list[str] = []
    for name in COLLECTIONS:
        for url in (DATA_URL, image_url):
            body = {"model": f"bench/{name}", "messages": _image_messages(url, f"what is this? ({name})")}
            reply = evidence.response(f"chat {name}", httpx2.post(chat, json=body, headers=headers, timeout=60))
            assert reply.status_code == 200, reply.text
            calls += [seat["call"] for seat in reply.json()["bench"]["seats"]]
        if name == "fourth":  # the raw base64 counts as text: too long for the small windows elsewhere
            shapes = {"model": f"bench/{name}", **_every_shape(image_url)}
            reply = evidence.response(f"shapes {name}", httpx2.post(chat, json=shapes, headers=headers, timeout=60))
            assert reply.status_code == 200, reply.text
            calls += [seat["call"] for seat in reply.json()["bench"]["seats"]]
        streamed = {
            "model": f"bench/{name}:merged",
            "messages": _image_messages(DATA_URL, f"stream it ({name})"),
            "stream": True,
        }
        evidence.response(f"stream {name}", httpx2.post(chat, json=streamed, headers=headers, timeout=60))
    # Refusals that carry the request: unknown collection, bad nomination, the admin token as a key.
    refusals = [
        ({"model": "bench/nope", "messages": _image_messages(DATA_URL, "x")}, headers),
        ({"model": "bench/first", "messages": _image_messages(DATA_URL, "x"), "bench": {"with": ["zz"]}}, headers),
        (
            {"model": "bench/first", "messages": _image_messages(DATA_URL, "x")},
            {"authorization": f"Bearer {ADMIN_TOKEN}"},
        ),
        ({"model": "bench/first", "messages": _image_messages(DATA_URL, "x")}, {"authorization": f"Bearer {key}x"}),
        ({"model": "bench/first", "messages": _image_messages(DATA_URL, "x")}, {"authorization": PROVIDER_ENV}),
    ]
    for body, sent in refusals:
        refused = evidence.response("refused chat", httpx2.post(chat, json=body, headers=sent, timeout=60))
        assert 400 <= refused.status_code < 500
    verdict = {"call": calls[0], "useful": True, "note": "checked", "real": ["a claim"]}
    evidence.response("verdict", httpx2.post(f"{server.url}/bench/verdict", json=verdict, headers=headers))
    return calls


def _crawl(server: BenchServer, key: str, evidence: Evidence, panel_ids: list[str]) -> None:
    """Every GET route the server has, as the dashboard (session cookie) and as the gateway key."""
    login = httpx2.post(f"{server.url}/login", data={"token": ADMIN_TOKEN, "next": "/"})
    evidence.response("login", login)
    assert login.status_code == 303
    cookies = {"bw_session": login.cookies["bw_session"]}
    bearer = {"authorization": f"Bearer {ADMIN_TOKEN}"}
    app = server._server.config.app  # type: ignore[union-attr]
    paths = sorted(path for path, methods in app.openapi()["paths"].items() if "get" in methods and "{" not in path)
    paths.append("/openapi.json")
    paths += [f"/bench/panels/{p}" for p in panel_ids] + ["/bench/panels?owed=1", "/api/keys?revoked=1"]
    assert {"/v1/models", "/bench/panels", "/api/keys", "/login"} <= set(paths)
    for path in paths:
        gateway = path.startswith(("/v1/", "/bench/"))
        for label, kwargs in (
            ("as dashboard", {"cookies": cookies}),
            ("as admin bearer", {"headers": bearer}),
            ("as key", {"headers": {"authorization": f"Bearer {key}"}}),
        ):
            if gateway != (label == "as key"):
                continue
            try:
                evidence.response(f"GET {path} {label}", httpx2.get(f"{server.url}{path}", timeout=15, **kwargs))
            except httpx2.TimeoutException:
                continue


def _cli(home: Path, monkeypatch: pytest.MonkeyPatch, evidence: Evidence) -> None:
    monkeypatch.setenv("BENCHWARMERS_HOME", str(home))
    monkeypatch.setenv("BENCHWARMERS_ADMIN_TOKEN", ADMIN_TOKEN)
    runner = CliRunner()
    for kind in ExportKind:
        result = runner.invoke(cli, ["export", kind.value])
        assert result.exit_code == 0, result.output
        evidence.add(f"export {kind.value}", result.stdout)
    exported = runner.invoke(cli, ["export", "calls", "--output", str(home / "calls.jsonl")])
    assert exported.exit_code == 0
    for command in (
        ["key", "list", "--revoked", "--json"],
        ["key", "list", "--revoked"],
        ["endpoint", "list", "--json"],
        ["model", "list", "--json"],
        ["collection", "list", "--json"],
        ["report"],
        ["leaderboard"],
        ["alerts"],
    ):
        result = runner.invoke(cli, command)
        evidence.add(" ".join(command), result.output)


def _stored(server: BenchServer) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    async def read(bench: Bench) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        async with bench.state.read() as conn:
            panel_rows = [dict(r._mapping) for r in await conn.execute(select(panels))]
            seat_rows = [dict(r._mapping) for r in await conn.execute(select(seats))]
        return panel_rows, seat_rows

    return server.admin(read)


def test_no_canary_reaches_the_database_exports_logs_or_pages(tmp_path, monkeypatch, captured_logs):
    monkeypatch.setenv(PROVIDER_ENV_NAME, PROVIDER_ENV)
    home = tmp_path / "home"
    evidence = Evidence()
    with FakeUpstream() as fake, FakeUpstream() as image_host, FakeUpstream() as refusing:
        refusing.listing(
            "/v1/models", {"error": {"message": f"Incorrect API key provided: {PROVIDER_STORED}"}}, status=401
        )
        image_url = f"https://user:{URL_PASSWORD}@127.0.0.1:{image_host.port}/photos/cat.jpg?sig={URL_SIGNATURE}"
        server = BenchServer(home, admin_token=ADMIN_TOKEN, key_env_allow=PROVIDER_ENV_NAME).start()
        try:
            key = _set_up(server, fake, refusing)
            calls = _run_panels(server, key, image_url, evidence)
            # A key made through the API is in that one reply, and must be nowhere else.
            made = httpx2.post(
                f"{server.url}/api/keys", json={"name": "second"}, headers={"authorization": f"Bearer {ADMIN_TOKEN}"}
            )
            second_key = made.json()["key"]
            panel_ids = sorted({call.split(".")[0] for call in calls})
            _crawl(server, key, evidence, panel_ids)
            _files(home, evidence, "while serving")
            panel_rows, seat_rows = _stored(server)
        finally:
            server.stop()
        # The gateway never fetched the image URL; only the provider was called, with every key it needs.
        assert image_host.requests == []
        sent_keys = {r.headers.get("authorization") for r in fake.chat_requests}
        assert sent_keys == {f"Bearer {PROVIDER_STORED}", f"Bearer {PROVIDER_ENV}"}
    _files(home, evidence, "after stop")
    _cli(home, monkeypatch, evidence)
    evidence.add("server log", "\n".join(captured_logs.lines))

    # The panels ran through success and every failure class.
    kinds = {row["error_kind"] for row in seat_rows}
    assert {"rate_limited", "upstream_error", "context_too_long", "auth", "timeout", "bad_request"} <= kinds
    assert {"ok", "error"} <= {row["status"] for row in seat_rows}
    # Images are stored as placeholders, not merely missing.
    stored_requests = " ".join(str(row["request"]) for row in panel_rows)
    assert DATA_PLACEHOLDER in stored_requests
    assert f"[image: https://127.0.0.1:{image_host.port}/photos/cat.jpg?...]" in stored_requests

    canaries = {
        "stored provider key": PROVIDER_STORED,
        "provider key from the environment": PROVIDER_ENV,
        "admin token": ADMIN_TOKEN,
        "gateway key": key,
        "gateway key body": key.removeprefix("bwk_"),
        "gateway key made through the API": second_key,
        "image bytes": PIXELS.decode(),
        "image base64": PIXELS_B64,
        "URL password": URL_PASSWORD,
        "URL signature": URL_SIGNATURE,
    }
    assert len(evidence.items) > 50
    leaks = [
        f"{what} in {where}"
        for where, data in evidence.items
        for what, canary in canaries.items()
        if canary.encode() in data
    ]
    assert leaks == []
