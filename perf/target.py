"""A gateway measured side by side: what perf/side_by_side.py measures and each peer's module
(perf/litellm_peer.py, perf/portkey_peer.py) hands it."""

from __future__ import annotations

from dataclasses import dataclass

from perf.fleet import Process

PATH = "/v1/chat/completions"


@dataclass
class Target:
    name: str
    port: int
    model: str
    process: Process
    headers: dict[str, str] | None = None
    version: str | None = None
    idle_rss: int = 0  # bytes, after a warm-up
