"""Tables of results: rich for the terminal, markdown for docs/BENCHMARKS.md, JSON for perf/results/."""

from __future__ import annotations

import os
import platform
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import orjson
from rich.console import Console
from rich.table import Table

from perf.measure import Result

# Wide tables stay readable when piped to a file or a log (rich would wrap them to 80 columns).
console = Console(highlight=False, width=None if sys.stdout.isatty() else 300)
Column = tuple[str, Callable[[Result], Any]]


def _ms(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:.2f}" if value < 10 else f"{value:.1f}" if value < 100 else f"{value:.0f}"


def _num(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


def _errors(r: Result) -> str:
    text = str(r.errors)
    return f"{text} (+{r.seat_errors} seats)" if r.seat_errors else text


LOAD_COLUMNS: list[Column] = [
    ("scenario", lambda r: r.scenario),
    ("conc", lambda r: r.concurrency),
    ("mode", lambda r: "stream" if r.stream else "json"),
    ("panels/s", lambda r: _num(r.panels_per_s)),
    ("seat calls/s", lambda r: _num(r.seat_calls_per_s)),
    ("overhead p50 ms", lambda r: _ms(r.overhead_ms.get("p50"))),
    ("p95", lambda r: _ms(r.overhead_ms.get("p95"))),
    ("p99", lambda r: _ms(r.overhead_ms.get("p99"))),
    ("added p50 ms", lambda r: _ms(r.added_ms.get("p50"))),
    ("added p99", lambda r: _ms(r.added_ms.get("p99"))),
    ("server CPU ms/panel", lambda r: _ms(r.server_cpu_ms_per_panel)),
    ("server CPU %", lambda r: _num(r.server_cpu_pct, 0)),
    ("peak RSS MB", lambda r: _num(r.peak_rss_mb)),
    ("driver CPU %", lambda r: _num(r.driver_cpu_pct, 0)),
    ("fake CPU %", lambda r: _num(r.upstream_cpu_pct, 0)),
    ("other CPU %", lambda r: _num(r.other_cpu_pct, 0)),
    ("driver ceiling req/s", lambda r: _num(r.extra.get("ceiling_rps"))),
    ("errors", _errors),
]

CEILING_COLUMNS: list[Column] = [
    ("target", lambda r: r.target),
    ("conc", lambda r: r.concurrency),
    ("requests/s", lambda r: _num(r.panels_per_s)),
    ("added p50 ms", lambda r: _ms(r.added_ms.get("p50"))),
    ("added p99", lambda r: _ms(r.added_ms.get("p99"))),
    ("driver CPU %", lambda r: _num(r.driver_cpu_pct, 0)),
    ("fake CPU %", lambda r: _num(r.upstream_cpu_pct, 0)),
    ("other CPU %", lambda r: _num(r.other_cpu_pct, 0)),
    ("errors", _errors),
]

IMAGE_COLUMNS: list[Column] = [
    ("scenario", lambda r: r.scenario),
    ("conc", lambda r: r.concurrency),
    ("body MB", lambda r: _num(r.extra.get("body_mb"))),
    ("idle RSS MB", lambda r: _num(r.extra.get("idle_rss_mb"))),
    ("peak RSS MB", lambda r: _num(r.peak_rss_mb)),
    ("peak above idle ÷ body", lambda r: _num(r.extra.get("peak_over_body"), 2)),
    ("wall p50 ms", lambda r: _ms(r.extra.get("wall_p50_ms"))),
    ("overhead p50 ms", lambda r: _ms(r.overhead_ms.get("p50"))),
    ("server CPU ms/panel", lambda r: _ms(r.server_cpu_ms_per_panel)),
    ("errors", _errors),
]


SCALING_COLUMNS: list[Column] = [
    ("scenario", lambda r: r.scenario),
    ("conc", lambda r: r.concurrency),
    ("mode", lambda r: "stream" if r.stream else "json"),
    ("body KB", lambda r: _num(r.extra.get("body_kb"))),
    ("panels/s", lambda r: _num(r.panels_per_s)),
    ("seat calls/s", lambda r: _num(r.seat_calls_per_s)),
    ("overhead p50 ms", lambda r: _ms(r.overhead_ms.get("p50"))),
    ("p95", lambda r: _ms(r.overhead_ms.get("p95"))),
    ("p99", lambda r: _ms(r.overhead_ms.get("p99"))),
    ("added p50 ms", lambda r: _ms(r.added_ms.get("p50"))),
    ("server CPU ms/panel", lambda r: _ms(r.server_cpu_ms_per_panel)),
    ("CPU ms/seat", lambda r: _ms(r.extra.get("cpu_ms_per_seat"))),
    ("server CPU %", lambda r: _num(r.server_cpu_pct, 0)),
    ("peak RSS MB", lambda r: _num(r.peak_rss_mb)),
    ("other CPU %", lambda r: _num(r.other_cpu_pct, 0)),
    ("driver ceiling req/s", lambda r: _num(r.extra.get("ceiling_rps"))),
    ("errors", _errors),
]

TAILS_COLUMNS: list[Column] = [
    ("server", lambda r: r.target),
    ("conc", lambda r: r.concurrency),
    ("mode", lambda r: "stream" if r.stream else "json"),
    ("panels/s", lambda r: _num(r.panels_per_s)),
    ("overhead p50 ms", lambda r: _ms(r.overhead_ms.get("p50"))),
    ("p95", lambda r: _ms(r.overhead_ms.get("p95"))),
    ("p99", lambda r: _ms(r.overhead_ms.get("p99"))),
    ("max", lambda r: _ms(r.overhead_ms.get("max"))),
    ("server CPU %", lambda r: _num(r.server_cpu_pct, 0)),
    ("server CPU ms/panel", lambda r: _ms(r.server_cpu_ms_per_panel)),
    ("loop lag p50 ms", lambda r: _ms(r.extra.get("lag_p50_ms"))),
    ("p99", lambda r: _ms(r.extra.get("lag_p99_ms"))),
    ("max", lambda r: _ms(r.extra.get("lag_max_ms"))),
    ("lags ≥ 5 ms", lambda r: r.extra.get("lags_over_5ms", "-")),
    ("≥ 20 ms", lambda r: r.extra.get("lags_over_20ms", "-")),
    ("lags ≥ 5 ms, thread not running", lambda r: r.extra.get("lags_not_running", "-")),
    ("loop thread's run-queue wait ms/s", lambda r: _num(r.extra.get("runq_ms_per_s"))),
    ("other CPU %", lambda r: _num(r.other_cpu_pct, 0)),
    ("driver ceiling req/s", lambda r: _num(r.extra.get("ceiling_rps"))),
    ("errors", _errors),
]

PROBE_COLUMNS: list[Column] = [
    ("conc", lambda r: r.concurrency),
    ("mode", lambda r: "stream" if r.stream else "json"),
    ("GC pauses gen 0/1/2", lambda r: "/".join(str(n) for n in r.extra.get("gc_by_gen", []))),
    ("GC total ms", lambda r: _ms(r.extra.get("gc_total_ms"))),
    ("GC max ms", lambda r: _ms(r.extra.get("gc_max_ms"))),
    ("gen-2 max ms", lambda r: _ms(r.extra.get("gen2_max_ms"))),
    ("commits", lambda r: r.extra.get("commits", "-")),
    ("commit p50 ms", lambda r: _ms(r.extra.get("commit_p50_ms"))),
    ("p99", lambda r: _ms(r.extra.get("commit_p99_ms"))),
    ("max", lambda r: _ms(r.extra.get("commit_max_ms"))),
    ("batch (mean)", lambda r: _num(r.extra.get("batch_mean"))),
    ("panel write p50 ms", lambda r: _ms(r.extra.get("write_p50_ms"))),
    ("p99", lambda r: _ms(r.extra.get("write_p99_ms"))),
    ("max", lambda r: _ms(r.extra.get("write_max_ms"))),
    ("reservation p50 ms", lambda r: _ms(r.extra.get("reserve_p50_ms"))),
    ("p99", lambda r: _ms(r.extra.get("reserve_p99_ms"))),
    ("max", lambda r: _ms(r.extra.get("reserve_max_ms"))),
]


def rows(columns: Sequence[Column], results: Sequence[Result]) -> list[list[str]]:
    return [[str(get(r)) for _, get in columns] for r in results]


def show_pairs(title: str, headers: Sequence[str], data: Sequence[Sequence[Any]]) -> None:
    table = Table(title=title, header_style="bold", title_justify="left")
    for header in headers:
        table.add_column(header)
    for row in data:
        table.add_row(*(str(v) for v in row))
    console.print(table)


def markdown(headers: Sequence[str], data: Sequence[Sequence[Any]]) -> str:
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    lines += ["| " + " | ".join(str(v) for v in row) + " |" for row in data]
    return "\n".join(lines)


def markdown_results(columns: Sequence[Column], results: Sequence[Result]) -> str:
    return markdown([h for h, _ in columns], rows(columns, results))


def machine() -> dict[str, Any]:
    """What the figures were measured on."""
    cpu = "unknown"
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        for line in cpuinfo.read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    memory = 0
    meminfo = Path("/proc/meminfo")
    if meminfo.exists():
        memory = int(meminfo.read_text().split("MemTotal:")[1].split()[0]) // 1024
    return {
        "date": time.strftime("%Y-%m-%d %H:%M %Z"),
        "nproc": os.cpu_count(),
        "cpu": cpu,
        "memory_mb": memory,
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "loadavg_at_start": Path("/proc/loadavg").read_text().split()[:3] if Path("/proc/loadavg").exists() else None,
    }


def save(directory: Path, payload: dict[str, Any]) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"run-{time.strftime('%Y%m%d-%H%M%S')}.json"
    path.write_bytes(orjson.dumps(payload, option=orjson.OPT_INDENT_2))
    return path
