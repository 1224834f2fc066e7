"""The issue's goals (issue 6, "Performance") next to what a run reached."""

from __future__ import annotations

from typing import Any

from measure import Result


def goals(results: list[Result], image: Result | None, idle_rss: float, side: dict[str, Any] | None) -> list[list[str]]:
    """The issue's goals next to what this run reached."""
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
    rows.append(["idle RSS", "≤ 120 MB", f"{idle_rss:.1f} MB", "yes" if idle_rss <= 120 else "no"])
    if side:
        for key, goal, better_is_low in (
            ("added_p50_ratio", "≤ 0.5", True),
            ("added_p99_ratio", "≤ 0.5", True),
            ("throughput_ratio", "≥ 2", False),
        ):
            for row in side.get("ratios", []):
                value = row.get(key)
                if value is None:
                    continue
                met = value <= 0.5 if better_is_low else value >= 2
                name = key.replace("_", " ").replace("ratio", "ours ÷ LiteLLM")
                where = f"c={row['concurrency']}, {row['mode']}"
                rows.append([f"{name} ({where})", goal, f"{value:.2f}", "yes" if met else "no"])
    return rows
