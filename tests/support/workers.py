"""`serve --workers N`'s processes, found from the parent's pid."""

from __future__ import annotations

from pathlib import Path

import httpx2
from prometheus_client.parser import text_string_to_metric_families


def worker_pids(url: str) -> set[str]:
    text = httpx2.get(f"{url}/metrics").text
    return {
        sample.labels["pid"]
        for family in text_string_to_metric_families(text)
        for sample in family.samples
        if sample.name == "benchwarmers_worker_resident_memory_bytes"
    }


def worker_processes(pid: int) -> list[int]:
    """The serve process's workers: its children that run the app (not multiprocessing's helpers)."""
    children = [int(c) for t in Path(f"/proc/{pid}/task").iterdir() for c in (t / "children").read_text().split()]
    return [c for c in children if b"multiprocessing.resource_tracker" not in Path(f"/proc/{c}/cmdline").read_bytes()]
