"""The tables at the end of a run (perf/run.py): on the terminal, and as markdown with `--markdown`."""

from __future__ import annotations

from typing import Any

from rich.table import Table

from perf.ceiling import TARGET
from perf.measure import Result
from perf.report import (
    CEILING_COLUMNS,
    IMAGE_COLUMNS,
    LOAD_COLUMNS,
    PROBE_COLUMNS,
    SCALING_COLUMNS,
    TAILS_COLUMNS,
    console,
    markdown,
    rows,
)
from perf.side_by_side import OURS
from perf.tails import GROUP_HEADERS, INSTRUMENTED

Section = tuple[str, list[str], list[list[Any]]]
SLOWEST_HEADERS = [
    "overhead ms",
    "max loop lag ms",
    "loop thread's CPU in it ms",
    "GC ms",
    "GC gen",
    "longest commit ms",
    "longest write ms",
    "longest reservation ms",
]


def show(title: str, headers: list[str], data: list[list[Any]]) -> None:
    """A rich table: words to the left, figures to the right."""
    table = Table(title=title, header_style="bold", title_justify="left")
    for index, header in enumerate(headers):
        words = index == 0 and header in ("scenario", "target", "gateway", "requests", "goal", "server")
        table.add_column(header, justify="left" if words or header in ("mode", "target", "reached") else "right")
    for row in data:
        table.add_row(*(str(v) for v in row))
    console.print(table)


def _results(title: str, columns: Any, results: list[Result]) -> Section:
    return title, [h for h, _ in columns], rows(columns, results)


def _side_tables(side: dict[str, Any], ceiling: list[Result]) -> list[Section]:
    if not side.get("rows"):
        return []
    versions = ", ".join(f"{name} {version}" for name, version in side.get("versions", {}).items())
    small = {r.concurrency: r.panels_per_s for r in ceiling if r.target == TARGET}
    data = [[*row, f"{small[row[1]]:,.1f}" if row[1] in small else "-"] for row in side["rows"]]
    return [
        (
            f"Side by side with {versions} (1 model; {OURS}: bench/solo)",
            [*side["headers"], "driver ceiling req/s"],
            data,
        ),
        (
            "Ours ÷ each peer (added latency and CPU/request: below 1 is better; throughput: above 1 is better)",
            side["ratio_headers"],
            side["ratio_rows"],
        ),
    ]


def _tails_tables(found: dict[str, Any]) -> list[Section]:
    results = found["results"]
    if not results:
        return []
    latency = results[0].scenario.rsplit(",", 1)[-1].strip()
    tables = [
        _results(f"Tails: five-seat panels, {latency}", TAILS_COLUMNS, results),
        _results(
            "What the server's probes saw during those runs",
            PROBE_COLUMNS,
            [r for r in results if r.target == INSTRUMENTED],
        ),
    ]
    for detail in found["details"]:
        where = f"c={detail['concurrency']}, {detail['mode']}"
        tables.append((f"The slowest requests against the middle half ({where})", GROUP_HEADERS, detail["groups"]))
        keys = ("overhead_ms", "max_lag_ms", "max_lag_cpu_ms", "gc_ms", "gc_gen", "commit_ms", "write_ms", "reserve_ms")
        slowest = [["-" if k == "gc_gen" and r[k] < 0 else r[k] for k in keys] for r in detail["slowest"]]
        tables.append((f"The slowest requests, one by one ({where})", SLOWEST_HEADERS, slowest))
    return tables


def tables(payload: dict[str, Any]) -> list[Section]:
    results, ceiling, image, scaled, tails_found = payload.pop("_objects")
    found: list[Section] = []
    if results:
        found.append(_results("Panels through the gateway", LOAD_COLUMNS, results))
    if ceiling:
        found.append(_results("The driver's own ceiling (no gateway)", CEILING_COLUMNS, ceiling))
    if image:
        found.append(_results("Image request", IMAGE_COLUMNS, [image]))
    side = payload.get("side_by_side")
    if side:
        found += _side_tables(side, ceiling)
    if scaled:
        found.append(_results("Scaling: seats per panel (small prompt)", SCALING_COLUMNS, scaled["seats"]))
        found.append(_results("Scaling: prompt size (5 members)", SCALING_COLUMNS, scaled["prompts"]))
    if tails_found:
        found += _tails_tables(tails_found)
    if payload["goals"]:
        found.append(("Goals", ["goal", "target", "reached", "met"], payload["goals"]))
    payload["_busiest"] = max(
        (r.other_cpu_pct or 0.0 for r in [*results, *ceiling, *(tails_found or {}).get("results", [])]), default=0.0
    )
    return found


def print_tables(payload: dict[str, Any], as_markdown: bool) -> None:
    m = payload["machine"]
    idle = f" · idle RSS {payload['idle_rss_mb']} MB" if payload["idle_rss_mb"] else ""
    jitter = float(payload["options"].get("jitter") or 0)
    spread = f" ± {jitter:.0%}" if jitter else ""
    console.print(
        f"\n{m['date']} · {m['nproc']} cores · {m['cpu']} · Python {m['python']} · "
        f"fake latency {payload['options']['latency']} s{spread}{idle}"
    )
    found = tables(payload)
    busiest = payload.pop("_busiest")
    for title, headers, data in found:
        show(title, headers, data)
    side = payload.get("side_by_side") or {}
    for name, why in side.get("skipped", {}).items():
        console.print(f"{name} side by side skipped: {why}", markup=False)
    if busiest > 25:
        console.print(
            f"[yellow]Other work used up to {busiest:.0f}% CPU (of {m['nproc']}00%) during this run: "
            "the gateway competed for the cores, so read these figures as upper bounds.[/yellow]"
        )
    if as_markdown:
        console.print(
            f"\nMeasured {m['date']} on {m['nproc']} cores ({m['cpu']}), Python {m['python']}, fake latency "
            f"{payload['options']['latency']} s{spread}, idle RSS {payload['idle_rss_mb']} MB; other work on the "
            f"machine used up to {busiest:.0f}% CPU during the run.",
            markup=False,
        )
        for title, headers, data in found:
            console.print(f"\n### {title}\n", markup=False)
            console.print(markdown(headers, data), markup=False)
