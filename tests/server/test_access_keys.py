"""Gateway keys: their form, how they are stored, the CLI and `/api/keys`, and revocation at once."""

from __future__ import annotations

import hashlib
import re

import httpx2
import orjson
import pytest
from sqlalchemy import select
from typer.testing import CliRunner

from benchwarmers.bench.admin.keys import hash_key, new_key
from benchwarmers.bench.services import Bench
from benchwarmers.cli.app import app
from benchwarmers.errors import Unauthorized
from benchwarmers.server.auth import MISSING, NOT_A_KEY, NOT_BEARER, bearer_token
from benchwarmers.store.changes import list_changes
from benchwarmers.store.schema import gateway_keys
from tests.support.benchserver import BenchServer, add_fake_endpoint, listed
from tests.support.panels import collection

ADMIN_TOKEN = "admin-token-for-the-revoked-name-test-0001"
KEY_FORM = re.compile(r"^bwk_[A-Za-z0-9_-]{43}$")


def test_a_key_is_bwk_and_32_random_bytes_url_safe():
    keys = {new_key() for _ in range(200)}
    assert len(keys) == 200
    assert all(KEY_FORM.match(k) for k in keys)
    assert hash_key("bwk_x") == hashlib.sha256(b"bwk_x").hexdigest()


@pytest.mark.parametrize(
    ("header", "message", "code"),
    [
        (None, MISSING, "missing_api_key"),
        ("", MISSING, "missing_api_key"),
        ("Basic dXNlcjpwYXNz", NOT_BEARER, "malformed_api_key"),
        ("Bearer", NOT_BEARER, "malformed_api_key"),
        ("Bearer sk-proj-abcdefghijklmnopqrstuvwxyz", NOT_A_KEY, "malformed_api_key"),
        ("Bearer bwk_short", NOT_A_KEY, "malformed_api_key"),
        ("Bearer bwk_" + "a" * 42 + "!", NOT_A_KEY, "malformed_api_key"),
    ],
)
def test_missing_and_malformed_bearers_say_which(header, message, code):
    with pytest.raises(Unauthorized) as refused:
        bearer_token(header)
    assert (refused.value.message, refused.value.code) == (message, code)


def test_a_well_formed_bearer_is_read_whatever_the_scheme_case():
    key = new_key()
    assert bearer_token(f"Bearer {key}") == key
    assert bearer_token(f"bearer  {key} ") == key


@pytest.fixture
def keyed(bench_with_roster: BenchServer) -> BenchServer:
    collection(bench_with_roster, "alpha", ["llama-3.3-70b"], max_explorers=0)
    collection(bench_with_roster, "beta", ["qwen3-32b"], max_explorers=0)
    return bench_with_roster


async def _rows(bench: Bench) -> list[dict]:
    async with bench.state.read() as conn:
        return [dict(r._mapping) for r in await conn.execute(select(gateway_keys).order_by(gateway_keys.c.id))]


def test_a_key_is_stored_as_its_sha256_and_logged_without_it(keyed):
    key, record = keyed.admin(lambda bench: bench.keys.create("ci", ["bench/alpha", "beta", "alpha"], 30))
    assert record["collections"] == ["alpha", "beta"]
    [row] = keyed.admin(_rows)
    assert row["sha256"] == hashlib.sha256(key.encode()).hexdigest()
    assert (row["name"], row["last4"], row["collections"], row["rpm"]) == ("ci", key[-4:], ["alpha", "beta"], 30)

    async def changes(bench: Bench) -> list[dict]:
        async with bench.state.read() as conn:
            return await list_changes(conn, subject="key")

    [change] = keyed.admin(changes)
    assert (change["action"], change["name"], change["actor"]) == ("create", "ci", "test")
    assert change["after"] == {
        "name": "ci",
        "last4": key[-4:],
        "collections": ["alpha", "beta"],
        "rpm": 30,
        "daily_panels": None,
        "daily_tokens": None,
    }
    logged = repr(change)
    assert key not in logged and row["sha256"] not in logged


@pytest.mark.parametrize(
    ("name", "collections", "rpm", "status", "message"),
    [
        ("Bad Name", None, None, 400, "key name 'Bad Name' is not valid"),
        ("local", None, None, 400, "key name 'local' is reserved for callers without a key"),
        ("ci", ["alhpa"], None, 404, "no collection bench/alhpa. Did you mean bench/alpha?"),
        ("ci", [], None, 400, "collections is empty"),
        ("ci", None, 0, 400, "rpm must be a whole number of requests a minute from 1 to 100000"),
        ("ci", None, "5", 400, "rpm must be a whole number"),
    ],
)
def test_bad_keys_are_refused_through_the_api(keyed, name, collections, rpm, status, message):
    response = httpx2.post(f"{keyed.url}/api/keys", json={"name": name, "collections": collections, "rpm": rpm})
    assert response.status_code == status
    assert response.json()["error"]["message"].startswith(message)


def test_api_keys_make_list_and_revoke(keyed, client):
    made = httpx2.post(f"{keyed.url}/api/keys", json={"name": "notes-app", "collections": ["alpha"], "rpm": 5})
    assert made.status_code == 201
    assert made.headers["cache-control"] == "no-store"
    body = made.json()
    key = body.pop("key")
    assert KEY_FORM.match(key)
    assert body == {
        "name": "notes-app",
        "last4": key[-4:],
        "collections": ["alpha"],
        "rpm": 5,
        "daily_panels": None,
        "daily_tokens": None,
        "created_at": body["created_at"],
        "last_used_at": None,
        "revoked_at": None,
    }
    again = httpx2.post(f"{keyed.url}/api/keys", json={"name": "notes-app"})
    assert again.status_code == 409
    assert again.json()["error"]["message"] == (
        "a gateway key named 'notes-app' exists already; revoke it first or pick another name"
    )
    listed = httpx2.get(f"{keyed.url}/api/keys").json()["data"]
    assert [k["name"] for k in listed] == ["notes-app"]
    assert key not in httpx2.get(f"{keyed.url}/api/keys").text

    revoked = httpx2.delete(f"{keyed.url}/api/keys/notes-app")
    assert revoked.status_code == 200
    assert revoked.json()["revoked_at"] is not None
    assert httpx2.get(f"{keyed.url}/api/keys").json()["data"] == []
    with_revoked = httpx2.get(f"{keyed.url}/api/keys?revoked=1").json()["data"]
    assert [(k["name"], k["revoked_at"] is not None) for k in with_revoked] == [("notes-app", True)]
    twice = httpx2.delete(f"{keyed.url}/api/keys/notes-app")
    assert (twice.status_code, twice.json()["error"]["message"]) == (409, "gateway key 'notes-app' is revoked already")
    missing = httpx2.delete(f"{keyed.url}/api/keys/notes")
    assert missing.status_code == 404
    assert missing.json()["error"]["message"] == "no gateway key named 'notes'."
    # A revoked key's name is never given to another key.
    reused = httpx2.post(f"{keyed.url}/api/keys", json={"name": "notes-app"})
    assert (reused.status_code, reused.json()["error"]) == (
        409,
        {
            "message": "the name 'notes-app' belonged to a gateway key that was revoked, and a name is never given "
            "to a second key (it would see the first one's panels); pick another name",
            "type": "invalid_request_error",
            "param": "name",
            "code": "key_name_revoked",
        },
    )


def test_revocation_by_another_process_stops_the_key_on_the_next_request(fake, tmp_path):
    server = BenchServer(tmp_path / "home", require_keys=True).start()
    try:
        add_fake_endpoint(server, fake, models=[listed("phi-4")])
        collection(server, "solo", ["phi-4"], max_explorers=0)
        key, _ = server.admin(lambda bench: bench.keys.create("ci"))
        headers = {"authorization": f"Bearer {key}"}
        assert httpx2.get(f"{server.v1}/models", headers=headers).status_code == 200
        [row] = server.admin(_rows)
        assert row["last_used_at"] is not None  # the first use is noted at once
        server.admin(lambda bench: bench.keys.revoke("ci"))
        refused = httpx2.get(f"{server.v1}/models", headers=headers)
        assert refused.status_code == 401
        assert refused.json()["error"]["code"] == "revoked_api_key"
    finally:
        server.stop()


def test_last_used_is_written_at_most_once_a_minute(fake, tmp_path):
    server = BenchServer(tmp_path / "home", require_keys=True).start()
    try:
        key, _ = server.admin(lambda bench: bench.keys.create("ci"))
        headers = {"authorization": f"Bearer {key}"}
        httpx2.get(f"{server.v1}/models", headers=headers)
        [first] = server.admin(_rows)
        for _ in range(3):
            httpx2.get(f"{server.v1}/models", headers=headers)
        [later] = server.admin(_rows)
        assert later["last_used_at"] == first["last_used_at"]
    finally:
        server.stop()


def test_cli_key_create_list_revoke(keyed, monkeypatch):
    monkeypatch.setenv("BENCHWARMERS_HOME", str(keyed.settings.home))
    monkeypatch.setenv("COLUMNS", "200")
    runner = CliRunner()
    made = runner.invoke(app, ["key", "create", "ci", "--collection", "alpha", "--rpm", "10"])
    assert made.exit_code == 0, made.output
    key = made.stdout.strip()
    assert KEY_FORM.match(key)
    assert made.stderr == (
        "key 'ci' made (bench/alpha, 10 requests a minute). It is shown only this once: "
        "send it as Authorization: Bearer <key>.\n"
    )
    listed = runner.invoke(app, ["key", "list"])
    assert listed.exit_code == 0
    assert re.search(
        rf"ci\s+│\s+…{re.escape(key[-4:])}\s+│\s+bench/alpha\s+│\s+10\s+│\s+none\s+│\s+never\s+│\s+active",
        listed.stdout,
    )
    assert key not in listed.stdout
    as_json = orjson.loads(runner.invoke(app, ["key", "list", "--json"]).stdout)
    assert [(k["name"], k["last4"], k["collections"], k["rpm"]) for k in as_json] == [("ci", key[-4:], ["alpha"], 10)]

    used = httpx2.get(f"{keyed.v1}/models", headers={"authorization": f"Bearer {key}"})
    assert used.status_code == 200  # keys are not required here: the bearer is ignored, not checked

    revoked = runner.invoke(app, ["key", "revoke", "ci"])
    assert (revoked.exit_code, revoked.stdout) == (0, "key 'ci' revoked\n")
    assert runner.invoke(app, ["key", "list"]).stdout == (
        "no gateway keys yet: make one with `benchwarmers key create NAME`\n"
    )
    assert "revoked" in runner.invoke(app, ["key", "list", "--revoked"]).stdout
    unknown = runner.invoke(app, ["key", "revoke", "cj"])
    assert (unknown.exit_code, unknown.stderr) == (1, "error: no gateway key named 'cj'.\n")
    bad = runner.invoke(app, ["key", "create", "x", "--collection", "nope"])
    assert bad.exit_code == 1
    assert bad.stderr.startswith("error: no collection bench/nope.")


def test_a_revoked_keys_name_is_never_given_to_a_new_key_so_its_panels_stay_unreadable(fake, tmp_path):
    server = BenchServer(tmp_path / "home", admin_token=ADMIN_TOKEN).start()
    try:
        add_fake_endpoint(server, fake, models=[listed("phi-4")])
        collection(server, "solo", ["phi-4"], max_explorers=0)
        key, _ = server.admin(lambda bench: bench.keys.create("ci"))
        admin = {"authorization": f"Bearer {ADMIN_TOKEN}"}  # only an admin mints keys when keys are required
        old = {"authorization": f"Bearer {key}"}
        body = {"model": "bench/solo", "messages": [{"role": "user", "content": "private question"}]}
        asked = httpx2.post(f"{server.v1}/chat/completions", json=body, headers=old, timeout=30)
        panel_id = asked.json()["bench"]["panel"]
        assert [p["id"] for p in httpx2.get(f"{server.url}/bench/panels", headers=old).json()["data"]] == [panel_id]
        assert httpx2.delete(f"{server.url}/api/keys/ci", headers=admin).status_code == 200

        again = httpx2.post(f"{server.url}/api/keys", json={"name": "ci"}, headers=admin)
        assert (again.status_code, again.json()["error"]["code"]) == (409, "key_name_revoked")
        new = httpx2.post(f"{server.url}/api/keys", json={"name": "ci-2"}, headers=admin)
        assert new.status_code == 201
        headers = {"authorization": f"Bearer {new.json()['key']}"}
        assert httpx2.get(f"{server.url}/bench/panels", headers=headers).json()["data"] == []
        assert httpx2.get(f"{server.url}/bench/panels/{panel_id}", headers=headers).status_code == 404
        # The old key itself is refused.
        assert httpx2.get(f"{server.url}/bench/panels", headers=old).status_code == 401
    finally:
        server.stop()
