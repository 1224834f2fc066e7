"""Each route's body cap, said as it is; exports readable by their owner only."""

from __future__ import annotations

import stat
from pathlib import Path

import httpx2
import pytest
from typer.testing import CliRunner

from benchwarmers.cli.app import app as cli
from benchwarmers.server.body import BODY_CAP


def _refusal(message: str) -> dict:
    return {"error": {"message": message, "type": "invalid_request_error", "param": None, "code": "request_too_large"}}


@pytest.mark.parametrize(
    ("path", "cap", "limit"),
    [("/bench/verdict", 1024 * 1024, "1 MiB"), ("/api/keys", 64 * 1024, "64 KiB"), ("/login", 16 * 1024, "16 KiB")],
)
def test_a_routes_413_names_that_routes_cap(server, path, cap, limit):
    response = httpx2.post(
        f"{server.url}{path}", content=b"x" * (cap + 1), headers={"content-type": "application/json"}
    )
    assert response.status_code == 413
    assert response.json() == _refusal(
        f"the request body is larger than {limit}, this route's limit; send a smaller body."
    )


def test_the_chat_body_cap_is_20_000_000_bytes(server):
    assert BODY_CAP == 20_000_000
    response = httpx2.post(
        f"{server.v1}/chat/completions",
        content=b"x" * (BODY_CAP + 1),
        headers={"content-type": "application/json"},
        timeout=60,
    )
    assert response.status_code == 413
    assert response.json() == _refusal(
        "the request body is larger than 20 MB. Send images as https:// URLs, or smaller images (models scale a "
        "photo to about 1,500-2,000 pixels on its long side anyway)."
    )


@pytest.mark.parametrize("kind", ["calls", "verdicts", "evidence"])
def test_exports_are_readable_by_their_owner_only(tmp_path: Path, monkeypatch, kind):
    monkeypatch.setenv("BENCHWARMERS_HOME", str(tmp_path / "home"))
    fresh, existing = tmp_path / f"{kind}.jsonl", tmp_path / f"old-{kind}.jsonl"
    existing.write_text("an older export\n")
    existing.chmod(0o644)
    for target in (fresh, existing):
        result = CliRunner().invoke(cli, ["export", kind, "--output", str(target)])
        assert (result.exit_code, result.output) == (0, f"exported 0 {kind} to {target}\n")
        assert stat.S_IMODE(target.stat().st_mode) == 0o600
        assert target.read_bytes() == b""
