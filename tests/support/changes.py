"""The changes log as the admin API returns it."""

from __future__ import annotations

import httpx2

from tests.support.benchserver import BenchServer


def changes(server: BenchServer, subject: str) -> list[tuple[str, str, str]]:
    rows = httpx2.get(f"{server.url}/api/changes?subject={subject}").json()["data"]
    return [(c["actor"], c["action"], c["name"]) for c in reversed(rows)]
