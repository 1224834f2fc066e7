"""`benchwarmers upkeep`: what the server's background loops run, run once, for a bench used without
a server (the CLI, the MCP server, the suite) or from a systemd timer or cron.

The jobs are the loops' own functions: the catalog refresh (listings and models.dev; went-paid,
retiring and possibly-changed alerts), the watch's probes of retired models, disk check, owed check
and auto swaps, retention, and the notifications of new alerts
(bench/notify/). A job that keeps when it last ran in the database (the refresh, daily;
retention, daily) is skipped while it is not due, as the server's loop would, unless forced; the
watch's jobs are cheap and idempotent, so they always run. One failing job never keeps the others
from running. The caller holds the upkeep lock (bench/upkeep/leader.py) while this runs.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from benchwarmers.bench.admin.alerts import list_alerts
from benchwarmers.catalog.modelsdev import MODELS_DEV_URL
from benchwarmers.errors import BenchError, InvalidRequest

if TYPE_CHECKING:
    from benchwarmers.bench.state import BenchState

JOBS = ("refresh", "probes", "disk", "owed", "swaps", "retention", "notify")  # in the order they run
GROUPS = {"watch": ("probes", "disk", "owed", "swaps")}  # the server's Watch, one round

DONE, NOT_DUE, FAILED = "done", "not due", "failed"


@dataclass
class JobResult:
    job: str
    status: str  # DONE, NOT_DUE or FAILED
    detail: str
    data: dict[str, Any] = field(default_factory=dict)

    def public(self) -> dict[str, Any]:
        return {"job": self.job, "status": self.status, "detail": self.detail, **self.data}


def chosen(only: Iterable[str] | None) -> list[str]:
    """The jobs `--only` names (a group such as `watch` stands for its jobs), in the order they run."""
    names = list(only or ())
    if not names:
        return list(JOBS)
    picked: set[str] = set()
    for name in names:
        if name not in JOBS and name not in GROUPS:
            choices = ", ".join([*JOBS, *GROUPS])
            raise InvalidRequest(f"--only {name!r} is not an upkeep job; choose from {choices}", param="only")
        picked.update(GROUPS.get(name, (name,)))
    return [job for job in JOBS if job in picked]


def _ago(seconds: float) -> str:
    hours = seconds / 3600
    return f"{hours:.0f} h" if hours >= 1 else f"{seconds / 60:.0f} min"


def _not_due(job: str, last: float | None, now: float, every: float) -> JobResult | None:
    """The skip of a job that ran less than `every` seconds ago (None: it is due)."""
    if last is None or now - last >= every:
        return None
    detail = f"ran {_ago(now - last)} ago; due in {_ago(last + every - now)} (--force runs it now)"
    return JobResult(job, NOT_DUE, detail, {"last_run": last})


async def _refresh(state: BenchState, now: float, force: bool, models_dev_url: str | None) -> JobResult:
    from benchwarmers.bench.admin.refresh import describe, last_refresh, refresh_all
    from benchwarmers.bench.upkeep.scheduler import DAY  # the server's schedule: a day after the last refresh

    if not force:
        async with state.read() as conn:
            skip = _not_due("refresh", await last_refresh(conn), now, DAY)
        if skip:
            return skip
    results = await refresh_all(state, models_dev_url=models_dev_url, actor="upkeep")
    sources = [{"source": r.source, "ok": r.ok, "detail": r.detail} for r in results]
    # models.dev falls back to a cached or bundled copy; an endpoint whose listing failed has none.
    failed = [r for r in results if not r.ok and r.source != "models.dev"]
    keys = ("listed", "added", "gone", "went_paid", "retiring", "possibly_changed")
    total = {k: sum((r.summary or {}).get(k, 0) for r in results) for k in keys}
    data = {"sources": sources}
    if failed:
        said = "; ".join(f"{r.source}: {r.detail}" for r in failed)
        return JobResult("refresh", FAILED, f"{len(failed)} of {_endpoints(len(results) - 1)} failed ({said})", data)
    return JobResult("refresh", DONE, f"{_endpoints(len(results) - 1)}: {describe(total)}", data)


def _endpoints(count: int) -> str:
    return f"{count} endpoint" if count == 1 else f"{count} endpoints"


async def _probes(state: BenchState, now: float) -> JobResult:
    from benchwarmers.bench.upkeep.probe import probe_due

    probed = await probe_due(state, now)
    back = [p.alias for p in probed if p.answered]
    still = [p.alias for p in probed if not p.answered]
    detail = "no retired model is due a probe"
    if probed:
        detail = f"{len(probed)} probed: {len(back)} back, {len(still)} still failing"
    return JobResult("probes", DONE, detail, {"back": back, "still_failing": still})


async def _alert_check(job: str, check: Awaitable[str | None], label: str) -> JobResult:
    changed = await check
    detail = f"{label} alert {changed}" if changed else "nothing changed"
    return JobResult(job, DONE, detail, {"alert": changed})


async def _swaps(state: BenchState) -> JobResult:
    from benchwarmers.bench.evidence.swaps import auto_swap

    made = await auto_swap(state)
    said = "; ".join(f"{s['explorer']} replaces {s['member']} ({s['shape']})" for s in made)
    detail = f"{len(made)} swaps: {said}" if made else "no decisive swap"
    return JobResult("swaps", DONE, detail, {"swaps": made})


async def _retention(state: BenchState, now: float, force: bool) -> JobResult:
    from benchwarmers.bench.upkeep.retention import DAY, apply_retention, last_retention

    if not force:
        async with state.read() as conn:
            skip = _not_due("retention", await last_retention(conn), now, DAY)
        if skip:
            return skip
    counts = await apply_retention(state)
    if counts is None:
        return JobResult("retention", DONE, "retention_days is 0: every prompt is kept", {"purged": None})
    return JobResult("retention", DONE, f"{counts['panels']} panels purged", {"purged": counts})


async def _notify(state: BenchState) -> JobResult:
    from benchwarmers.bench.notify.drain import drain

    drained = await drain(state)
    return JobResult("notify", DONE, drained.describe(), {"sent": drained.sent, "retrying": drained.retrying})


async def run_upkeep(
    state: BenchState,
    jobs: Iterable[str],
    *,
    force: bool = False,
    models_dev_url: str | None = MODELS_DEV_URL,
    progress: Callable[[str, JobResult | None], Any] | None = None,
) -> tuple[list[JobResult], list[dict[str, Any]]]:
    """Run `jobs` once, in order: (each job's result, the alerts raised meanwhile)."""
    from benchwarmers.bench.upkeep.disk import check_disk
    from benchwarmers.bench.upkeep.owed import check_owed

    before = {a["id"] for a in await list_alerts(state)}
    results: list[JobResult] = []
    for job in jobs:
        if progress is not None:
            progress(job, None)
        now = time.time()
        try:
            if job == "refresh":
                result = await _refresh(state, now, force, models_dev_url)
            elif job == "probes":
                result = await _probes(state, now)
            elif job == "disk":
                result = await _alert_check(job, check_disk(state, now), "low-disk")
            elif job == "owed":
                result = await _alert_check(job, check_owed(state, now), "verdicts-owed")
            elif job == "swaps":
                result = await _swaps(state)
            elif job == "retention":
                result = await _retention(state, now, force)
            else:  # last: the alerts this run raised go out with the others owed
                result = await _notify(state)
        except BenchError as exc:
            result = JobResult(job, FAILED, exc.message)
        except Exception as exc:  # the database away for a moment, say: the other jobs still run
            result = JobResult(job, FAILED, f"{type(exc).__name__}: {exc}")
        results.append(result)
        if progress is not None:
            progress(job, result)
    raised = [a for a in await list_alerts(state) if a["id"] not in before]
    return results, sorted(raised, key=lambda a: a["id"])
