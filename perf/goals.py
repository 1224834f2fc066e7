"""The issues' goals (issue 6, "Performance"; issue 19, "Performance, round two") next to what a run reached."""

from __future__ import annotations

from typing import Any

from perf.measure import Result


def goals(
    results: list[Result],
    image: Result | None,
    idle_rss: float,
    side: dict[str, Any] | None,
    tails: list[Result] | None = None,
) -> list[list[str]]:
    """The issues' goals next to what this run reached (only those the run measured)."""
    rows: list[list[str]] = []
    c64 = next(
        (
            r
            for r in results
            if r.target == "benchwarmers" and r.concurrency == 64 and not r.stream and "3 members" in r.scenario
        ),
        None,
    )
    if c64 is not None:
        p50, p99 = c64.overhead_ms.get("p50"), c64.overhead_ms.get("p99")
        met = p50 is not None and p99 is not None and p50 <= 2 and p99 <= 10
        rows.append(
            [
                "overhead per panel at c=64, 5 seats",
                "p50 ≤ 2 ms, p99 ≤ 10 ms",
                f"p50 {p50:.1f} ms, p99 {p99:.1f} ms" if p50 is not None and p99 is not None else "-",
                "yes" if met else "no",
            ]
        )
    clean = [r for r in results if "3 members" in r.scenario and r.errors == 0 and r.seat_errors == 0]
    best = max(clean, key=lambda r: r.seat_calls_per_s, default=None)
    if best is not None:
        rows.append(
            [
                "seat calls/s through one process, no errors",
                "≥ 1,000 (200 five-seat panels/s)",
                f"{best.seat_calls_per_s:,.0f} ({best.scenario}, c={best.concurrency}, "
                f"{'stream' if best.stream else 'json'})",
                "yes" if best.seat_calls_per_s >= 1000 else "no",
            ]
        )
    if image is not None:
        ratio = image.extra.get("peak_over_body")
        rows.append(
            [
                "peak RSS above idle, 15 MB image panel of 5 seats",
                "≤ 3 × body",
                f"{ratio} × body",
                "yes" if ratio is not None and ratio <= 3 else "no",
            ]
        )
    if results:
        rows.append(["idle RSS", "≤ 120 MB", f"{idle_rss:.1f} MB", "yes" if idle_rss <= 120 else "no"])
    rows += _portkey(results, side)
    rows += _tails(tails or [])
    if side:
        for key, goal, better_is_low in (
            ("added_p50_ratio", "≤ 0.5", True),
            ("added_p99_ratio", "≤ 0.5", True),
            ("throughput_ratio", "≥ 2", False),
        ):
            for row in side.get("ratios", []):
                if row.get("peer") != "LiteLLM":
                    continue
                value = row.get(key)
                if value is None:
                    continue
                met = value <= 0.5 if better_is_low else value >= 2
                name = key.replace("_", " ").replace("ratio", "ours ÷ LiteLLM")
                where = f"c={row['concurrency']}, {row['mode']}"
                rows.append([f"{name} ({where})", goal, f"{value:.2f}", "yes" if met else "no"])
    return rows


def _portkey(results: list[Result], side: dict[str, Any] | None) -> list[list[str]]:
    """Issue 19 against Portkey: CPU/request ≤ 0.7×, added p50 ≤ 1.0×, a five-seat panel < two requests."""
    rows: list[list[str]] = []
    ratios = [r for r in (side or {}).get("ratios", []) if r.get("peer") == "Portkey"]
    for row in ratios:
        where = f"c={row['concurrency']}, {row['mode']}"
        for key, name, limit in (("cpu_ratio", "CPU/request", 0.7), ("added_p50_ratio", "added p50", 1.0)):
            value = row.get(key)
            if value is not None:
                met = "yes" if value <= limit else "no"
                rows.append([f"{name} ours ÷ Portkey ({where})", f"≤ {limit}", f"{value:.2f}", met])
    portkey = next(
        (
            r
            for r in (side or {}).get("results", [])
            if r["target"] == "Portkey" and r["concurrency"] == 64 and not r["stream"]
        ),
        None,
    )
    five = next((r for r in results if r.concurrency == 64 and not r.stream and "3 members" in r.scenario), None)
    if portkey and five and portkey.get("server_cpu_ms_per_panel") and five.server_cpu_ms_per_panel is not None:
        two = 2 * portkey["server_cpu_ms_per_panel"]
        rows.append(
            [
                "CPU of a five-seat panel against two requests through Portkey (c=64, json)",
                "less",
                f"{five.server_cpu_ms_per_panel:.2f} ms against {two:.2f} ms",
                "yes" if five.server_cpu_ms_per_panel < two else "no",
            ]
        )
    return rows


def _tails(tails: list[Result]) -> list[list[str]]:
    rows = []
    for r in tails:
        p99, cpu = r.overhead_ms.get("p99"), r.server_cpu_pct
        if p99 is None or cpu is None:
            continue
        where = f"c={r.concurrency}, {'stream' if r.stream else 'json'}, {r.scenario.rsplit(',', 1)[-1].strip()}"
        where += f", {r.target.removeprefix('benchwarmers ').strip('()')}"
        met = "yes" if p99 <= 10 and cpu <= 50 else "no"
        reached = f"{p99:.1f} ms at {cpu:.0f}%"
        rows.append([f"overhead p99 at moderate load ({where})", "≤ 10 ms at ≤ 50% CPU", reached, met])
    return rows
