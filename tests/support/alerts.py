"""Alerts as a test reads them back: the open ones, and the explorer pool they take models out of."""

from __future__ import annotations

from typing import Any

from benchwarmers.bench.admin import alerts as bench_alerts
from tests.support.benchserver import BenchServer
from tests.support.panels import ask


def open_alerts(server: BenchServer) -> list[tuple[str, str, str]]:
    found = server.admin(lambda bench: bench_alerts.list_alerts(bench.state))
    return [(a["kind"], a["subject"], a["message"]) for a in found]


def explorers(client: Any, name: str = "solo") -> list[str]:
    return [s["alias"] for s in ask(client, f"bench/{name}").bench["seats"] if s["seat"] == "explorer"]
