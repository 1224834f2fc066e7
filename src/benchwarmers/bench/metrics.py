"""What an operator watches, in Prometheus's format, counted with the official client library.

Counted where it happens: panels and seats when a panel is recorded, the recorder's queue and its
commits, verdicts when given. Verdicts owed are read from the database at each scrape (they are
the database's, not a process's). One process (`serve`) keeps its figures in memory; with several
workers (`serve --workers N`) every process writes its own to files in PROMETHEUS_MULTIPROC_DIR and
a scrape, whichever worker answers it, adds them up (prometheus_client's multiprocess mode). That
mode is chosen when prometheus_client is first imported, so this module imports it only when a
`Metrics` is built, after `serve` has set the variable.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from prometheus_client.registry import CollectorRegistry

    from benchwarmers.bench.core.outcomes import SeatOutcome

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
# Seconds: a seat is a model call (100 ms to minutes); a commit is a database write (ms).
SEAT_BUCKETS = (0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120, 300)
COMMIT_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5)
# The process_* figures each worker reports for itself with --workers (labelled by pid).
WORKER_FIGURES = (
    ("cpu_seconds", "CPU time of a worker (user + system)."),
    ("resident_memory_bytes", "Resident memory of a worker."),
    ("open_fds", "Open file descriptors of a worker."),
)
PROCESS_EVERY = 1.0  # seconds between updates of a worker's process figures (multiprocess mode)


class Metrics:
    def __init__(self, multiprocess_dir: Path | None = None) -> None:
        from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

        self.multiprocess_dir = multiprocess_dir
        # A registry per bench (tests run several in one interpreter; each counts its own).
        self.registry = registry = CollectorRegistry(auto_describe=True)
        self.requests = Counter(
            "benchwarmers_requests",
            "HTTP requests answered, by route and status.",
            ["route", "status"],
            registry=registry,
        )
        self.panels = Counter(
            "benchwarmers_panels",
            "Panels recorded, by collection and outcome (answered: at least one seat answered).",
            ["collection", "status"],
            registry=registry,
        )
        self.seats = Counter(
            "benchwarmers_seats",
            "Seats recorded, by model, endpoint, kind of seat and status (ok, empty, error, paced, cooling, retired).",
            ["model", "endpoint", "seat", "status"],
            registry=registry,
        )
        self.seat_seconds = Histogram(
            "benchwarmers_seat_seconds",
            "Time a called seat took, by model and endpoint.",
            ["model", "endpoint"],
            buckets=SEAT_BUCKETS,
            registry=registry,
        )
        self.rate_limited = Counter(
            "benchwarmers_upstream_rate_limited",
            "Calls a provider refused as rate limited (429), by model and endpoint.",
            ["model", "endpoint"],
            registry=registry,
        )
        self.cooling = Counter(
            "benchwarmers_cooldown_skips",
            "Seats not called because their model was cooling down after a provider's refusal.",
            ["model", "endpoint"],
            registry=registry,
        )
        self.verdicts = Counter(
            "benchwarmers_verdicts", "Verdicts given, by usefulness.", ["useful"], registry=registry
        )
        self.queue = Gauge(
            "benchwarmers_recorder_queue",
            "Writes waiting for the recorder's next commit.",
            registry=registry,
            multiprocess_mode="livesum",
        )
        self.commit_seconds = Histogram(
            "benchwarmers_recorder_commit_seconds",
            "Time a recorder commit took (one transaction for every write that queued for it).",
            buckets=COMMIT_BUCKETS,
            registry=registry,
        )
        self.commit_writes = Counter(
            "benchwarmers_recorder_writes", "Writes committed by the recorder.", registry=registry
        )
        self._seats: dict[tuple[str, ...], Any] = {}
        self._took: dict[tuple[str, ...], Any] = {}
        self._routes: dict[tuple[str, int], Any] = {}
        self._process: dict[str, Any] = {}
        self._process_at = 0.0
        if multiprocess_dir is None:
            from prometheus_client import PlatformCollector, ProcessCollector

            ProcessCollector(registry=registry)
            PlatformCollector(registry=registry)
        else:
            # The standard process_* figures read this process only: per worker here, labelled by pid.
            for name, text in WORKER_FIGURES:
                self._process[name] = Gauge(
                    f"benchwarmers_worker_{name}", text, registry=registry, multiprocess_mode="liveall"
                )

    # -- counting ----------------------------------------------------------------------------------

    def request(self, route: str, status: int) -> None:
        counted = self._routes.get((route, status))
        if counted is None:
            counted = self._routes[(route, status)] = self.requests.labels(route, str(status))
        counted.inc()
        if self._process:
            self._update_process()

    def panel(self, collection: str, outcomes: Iterable[SeatOutcome]) -> None:
        answered = False
        for outcome in outcomes:
            key = (outcome.alias, outcome.endpoint, outcome.seat, outcome.status)
            seats = self._seats.get(key)
            if seats is None:  # a child per label set, kept: labels() costs more than the count
                seats = self._seats[key] = self.seats.labels(*key)
            seats.inc()
            if outcome.status in ("ok", "empty", "error"):
                took = self._took.get(key[:2])
                if took is None:
                    took = self._took[key[:2]] = self.seat_seconds.labels(*key[:2])
                took.observe(outcome.seconds)
            if outcome.failure is not None and outcome.failure.kind.value == "rate_limited":
                self.rate_limited.labels(outcome.alias, outcome.endpoint).inc()
            elif outcome.status == "cooling":
                self.cooling.labels(outcome.alias, outcome.endpoint).inc()
            answered = answered or (outcome.status == "ok" and outcome.seat != "decision")
        self.panels.labels(collection, "answered" if answered else "unanswered").inc()
        self._update_process()

    def unrecorded(self, collection: str) -> None:
        """A panel whose record could not be written (the caller got an error, not the reply)."""
        self.panels.labels(collection, "unrecorded").inc()

    def verdict(self, useful: bool) -> None:
        self.verdicts.labels("true" if useful else "false").inc()

    def _update_process(self) -> None:
        if not self._process or time.monotonic() - self._process_at < PROCESS_EVERY:
            return
        self._process_at = time.monotonic()
        from prometheus_client import ProcessCollector

        for family in ProcessCollector(registry=None).collect():
            name = family.name.removeprefix("process_")
            if name in self._process and family.samples:
                self._process[name].set(family.samples[0].value)

    # -- exposition --------------------------------------------------------------------------------

    def render(
        self,
        owed: int,
        allowances: Mapping[tuple[str, str], int] | None = None,
        budgets: Iterable[dict[str, Any]] = (),
        read: Iterable[Any] = (),
    ) -> bytes:
        """Every figure, in the text format; `owed` is the database's count of verdicts owed,
        `allowances` what is left of each (scope, window) day or month allowance, as this process's
        pacer counts it (one count for all processes with Redis), and `budgets` the daily budgets with
        what each spent today (bench/budgets.py `today`), `read` more figures read from the database at
        this scrape (collectors: bench/notify/figures.py)."""
        from prometheus_client import CollectorRegistry, generate_latest

        if self.multiprocess_dir is None:
            registry = self.registry
            extra: CollectorRegistry | None = CollectorRegistry(auto_describe=False)
        else:
            from prometheus_client import multiprocess

            self._update_process()
            registry = CollectorRegistry(auto_describe=False)
            multiprocess.MultiProcessCollector(registry, path=str(self.multiprocess_dir))
            extra = registry
        assert extra is not None
        extra.register(_Owed(owed))
        extra.register(_Allowances(allowances or {}))
        extra.register(_Budgets(list(budgets)))
        for collector in read:
            extra.register(collector)
        body = generate_latest(registry)
        return body if extra is registry else body + generate_latest(extra)

    def process_exited(self, pid: int | None = None) -> None:
        """Drop a worker's live gauges once it stops (multiprocess mode)."""
        if self.multiprocess_dir is not None:
            from prometheus_client import multiprocess

            multiprocess.mark_process_dead(pid or os.getpid(), str(self.multiprocess_dir))


class _Owed:
    """The verdicts owed, as read at this scrape."""

    def __init__(self, owed: int) -> None:
        self.owed = owed

    def collect(self) -> Iterable[Any]:
        from prometheus_client.core import GaugeMetricFamily

        yield GaugeMetricFamily(
            "benchwarmers_verdicts_owed", "Seats answered and not yet judged (the bench's debt).", value=self.owed
        )


class _Allowances:
    """What is left of each day and month allowance, as read at this scrape."""

    def __init__(self, remaining: Mapping[tuple[str, str], int]) -> None:
        self.remaining = remaining

    def collect(self) -> Iterable[Any]:
        from prometheus_client.core import GaugeMetricFamily

        family = GaugeMetricFamily(
            "benchwarmers_allowance_remaining",
            "Requests or tokens left of a daily or monthly allowance until it resets (scope: model or endpoint).",
            labels=["scope", "window"],
        )
        for (scope, window), left in sorted(self.remaining.items()):
            family.add_metric([scope, window], left)
        yield family


class _Budgets:
    """Each daily budget and what it spent since its reset, as read at this scrape (the store's)."""

    def __init__(self, budgets: list[dict[str, Any]]) -> None:
        self.budgets = budgets

    def collect(self) -> Iterable[Any]:
        from prometheus_client.core import GaugeMetricFamily

        labels = ["kind", "name", "unit"]
        limit = GaugeMetricFamily(
            "benchwarmers_budget_limit", "A daily budget (collection, key, suite), in panels or tokens.", labels=labels
        )
        spent = GaugeMetricFamily(
            "benchwarmers_budget_spent", "What a daily budget spent since its last reset.", labels=labels
        )
        resets = GaugeMetricFamily(
            "benchwarmers_budget_resets_at", "When a daily budget next resets (Unix time).", labels=["kind", "name"]
        )
        for budget in self.budgets:
            for unit in ("panels", "tokens"):
                if budget[f"daily_{unit}"] is not None:
                    limit.add_metric([budget["kind"], budget["name"], unit], budget[f"daily_{unit}"])
                    spent.add_metric([budget["kind"], budget["name"], unit], budget[unit])
            resets.add_metric([budget["kind"], budget["name"]], budget["resets_at"])
        yield limit
        yield spent
        yield resets
