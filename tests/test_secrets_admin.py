"""What holds secrets is changed only by a trusted admin: with BENCHWARMERS_REQUIRE_KEYS and no
admin token, the open dashboard API may not add endpoints or make gateway keys."""

from __future__ import annotations

import httpx2
import pytest

from tests.benchserver import BenchServer

REFUSAL = (
    "adding endpoints and making gateway keys needs the admin token when gateway keys are required: set "
    "BENCHWARMERS_ADMIN_TOKEN and log in, or use `benchwarmers endpoint add` / `benchwarmers key create`"
)


@pytest.fixture
def keys_required(tmp_path):
    server = BenchServer(tmp_path / "home", require_keys=True).start()
    try:
        yield server
    finally:
        server.stop()


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/api/endpoints", {"name": "x", "base_url": "https://example.com/v1", "api_key_env": "GROQ_API_KEY"}),
        ("/api/keys", {"name": "mine"}),
    ],
)
def test_the_open_api_may_not_add_endpoints_or_mint_keys_when_keys_are_required(keys_required, path, body):
    answer = httpx2.post(f"{keys_required.url}{path}", json=body)
    assert answer.status_code == 403
    assert answer.json() == {
        "error": {"message": REFUSAL, "type": "permission_error", "param": None, "code": "admin_token_required"}
    }
    listed = httpx2.get(f"{keys_required.url}{path}").json()["data"]
    assert listed == []  # nothing was made


def test_with_the_admin_token_they_may(tmp_path):
    server = BenchServer(tmp_path / "home", admin_token="t" * 32).start()
    try:
        auth = {"authorization": "Bearer " + "t" * 32}
        made = httpx2.post(f"{server.url}/api/keys", json={"name": "mine"}, headers=auth)
        assert made.status_code == 201
        assert made.json()["key"].startswith("bwk_")
    finally:
        server.stop()
