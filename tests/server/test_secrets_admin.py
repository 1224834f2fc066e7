"""What holds secrets is changed only by a trusted admin: with BENCHWARMERS_REQUIRE_KEYS and no
admin token, adding endpoints and making gateway keys needs the dashboard's token (the home's
`dashboard-token`, whose reader is the bench's own user), never a gateway key or nothing."""

from __future__ import annotations

import httpx2
import pytest

from tests.support.benchserver import BenchServer

REFUSAL = (
    "the dashboard API needs the dashboard's session, and a gateway key never opens it: open the login URL "
    "`benchwarmers dashboard-url` prints (or log in at /login), or send Authorization: Bearer <the token in "
    "BENCHWARMERS_HOME/dashboard-token>"
)
BODIES = [
    ("/api/endpoints", {"name": "x", "base_url": "https://example.com/v1", "api_key_env": "GROQ_API_KEY"}),
    ("/api/keys", {"name": "mine"}),
]


@pytest.fixture
def keys_required(tmp_path):
    server = BenchServer(tmp_path / "home", require_keys=True).start()
    try:
        yield server
    finally:
        server.stop()


@pytest.mark.parametrize(("path", "body"), BODIES)
def test_neither_nothing_nor_a_gateway_key_adds_endpoints_or_mints_keys_when_keys_are_required(
    keys_required, path, body
):
    key, _ = keys_required.admin(lambda bench: bench.keys.create("app"))
    for headers in ({}, {"authorization": f"Bearer {key}"}):
        answer = httpx2.post(f"{keys_required.url}{path}", json=body, headers=headers)
        assert answer.status_code == 401
        assert answer.json() == {
            "error": {"message": REFUSAL, "type": "authentication_error", "param": None, "code": "admin_token_required"}
        }
    listed = httpx2.get(f"{keys_required.url}{path}", headers=keys_required.admin_headers()).json()["data"]
    assert [row["name"] for row in listed] == (["app"] if path == "/api/keys" else [])  # nothing was made


@pytest.mark.parametrize(("path", "body"), BODIES)
def test_the_dashboard_token_may(keys_required, path, body):
    made = httpx2.post(f"{keys_required.url}{path}", json=body, headers=keys_required.admin_headers())
    assert made.status_code == 201, made.text
    assert made.json()["name"] == body["name"]


def test_with_the_admin_token_they_may(tmp_path):
    server = BenchServer(tmp_path / "home", admin_token="t" * 32).start()
    try:
        auth = {"authorization": "Bearer " + "t" * 32}
        made = httpx2.post(f"{server.url}/api/keys", json={"name": "mine"}, headers=auth)
        assert made.status_code == 201
        assert made.json()["key"].startswith("bwk_")
        assert not (server.settings.home / "dashboard-token").exists()  # the admin token is the dashboard's
    finally:
        server.stop()
