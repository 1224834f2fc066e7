"""`benchwarmers upkeep`: the server's background jobs, run once, then exit (for a systemd timer or cron)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from benchwarmers.catalog.modelsdev import MODELS_DEV_URL
from benchwarmers.cli.common import console, err_console, fail, load_settings, print_json, progress_bar, run, table

if TYPE_CHECKING:
    from benchwarmers.bench.state import BenchState
    from benchwarmers.bench.upkeep.once import JobResult

WAIT_POLL = 1.0  # --wait: how often to try the lock again (a person is watching)


def upkeep(
    only: list[str] = typer.Option(
        None, "--only", help="only this job: refresh, probes, disk, owed, swaps, retention, or watch (repeatable)"
    ),
    force: bool = typer.Option(False, "--force", help="run the daily jobs (refresh, retention) even if not due"),
    wait: bool = typer.Option(False, "--wait", help="wait for the process that holds the upkeep lock, then run"),
    json: bool = typer.Option(False, "--json", help="print a JSON summary"),
    models_dev_url: str = typer.Option(MODELS_DEV_URL, "--models-dev-url", help="where to fetch models.dev from"),
    no_models_dev: bool = typer.Option(
        False, "--no-models-dev", help="do not fetch models.dev; use the cached or bundled copy"
    ),
) -> None:
    """Run what `serve` runs in the background once, and exit: catalog refresh (went paid, retiring),
    probes of retired models, the disk and verdicts-owed checks, auto swaps, retention.

    The daily jobs are skipped when they ran less than a day ago (by a server or an earlier upkeep)
    unless --force. A running server on this home holds the upkeep lock and runs the jobs itself:
    upkeep then says so and does nothing (exit 0), or waits for the lock with --wait. Exit 1 with one
    `error:` line when a job failed (the others still ran)."""
    from benchwarmers.bench.upkeep.once import chosen
    from benchwarmers.errors import BenchError

    try:
        jobs = chosen(only)
    except BenchError as exc:
        raise fail(exc.message) from None
    failed = run(_main(jobs, force, wait, json, None if no_models_dev else models_dev_url))
    if failed:
        raise fail("upkeep: " + "; ".join(f"{r.job} failed: {r.detail}" for r in failed))


async def _main(jobs: list[str], force: bool, wait: bool, json: bool, models_dev_url: str | None) -> list[JobResult]:
    from benchwarmers.bench.services import Bench
    from benchwarmers.bench.upkeep.leader import UpkeepLock

    settings = load_settings()
    settings.ensure_home()
    lock = UpkeepLock(settings.home)
    if not lock.acquire():
        holder = lock.holder()
        who = f"process {holder}" if holder else "another process"
        if not wait:
            said = (
                f"{who} holds the upkeep lock of {settings.home} (a server runs these jobs itself, or another "
                "upkeep is running): nothing done; --wait waits for it"
            )
            if json:
                print_json({"ran": False, "held_by": holder, "jobs": [], "alerts": []})
            else:
                console.print(said, markup=False)
            return []
        err_console.print(f"waiting for {who} to release the upkeep lock of {settings.home}", markup=False)
        await lock.wait_for(every=WAIT_POLL)
    try:
        async with Bench(settings, actor="upkeep") as bench:
            return await _run(bench.state, jobs, force, json, models_dev_url)
    finally:
        lock.release()


async def _run(
    state: BenchState, jobs: list[str], force: bool, json: bool, models_dev_url: str | None
) -> list[JobResult]:
    from benchwarmers.bench.upkeep.once import FAILED, run_upkeep

    with progress_bar() as progress:
        task = progress.add_task("upkeep", total=len(jobs))

        def step(job: str, result: JobResult | None) -> None:
            if result is None:
                progress.update(task, description=f"upkeep: {job}")
            else:
                progress.advance(task)

        results, raised = await run_upkeep(state, jobs, force=force, models_dev_url=models_dev_url, progress=step)
    if json:
        print_json({"ran": True, "jobs": [r.public() for r in results], "alerts": raised})
    else:
        # No title: piped, a table's title goes to stderr, and cron mails whatever reaches stderr.
        table(None, ["job", "status", "detail"], [[r.job, r.status, r.detail] for r in results])
        for alert in raised:
            console.print(f"alert raised: {alert['label']}: {alert['subject']}", markup=False)
        if raised:
            console.print("`benchwarmers alerts` lists them; `--ack ID` acknowledges one", markup=False)
    return [r for r in results if r.status == FAILED]
