"""`python tools/suite_seed.py --repo .`: write the `claim-*` tasks whose mutation the project's own
tests catch. A maintainer's tool, run from a checkout: it is not in the wheel, nor is libcst, which
its mutations need (`pip install -e ".[test]"` brings it)."""

from __future__ import annotations

import sys
from pathlib import Path

if not __package__:
    # Run as a script (`python tools/suite_seed.py`), only its own folder is on the path: the
    # checkout's root, which holds the `tools` package, goes first (as `python -m` would put it).
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import typer

from benchwarmers.bench.suite.tasks import write_task
from benchwarmers.cli.common import console, err_console, fail, progress_bar
from benchwarmers.errors import BenchError
from tools.seeding.seed import CATALOGUE

app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)


@app.command()
def seed(
    only: list[str] = typer.Option(None, "--only", help="seed only this id (claim-NAME or NAME; repeatable)"),
    out: Path = typer.Option(None, "--out", help="folder the task files go to (default: the shipped tasks folder)"),
    repo: Path = typer.Option(None, "--repo", help="the benchwarmers checkout whose src/ and tests/ are used"),
    seeds: Path = typer.Option(None, "--seeds", help=f"a seed catalogue (default: {CATALOGUE} in the checkout)"),
    jobs: int = typer.Option(2, "--jobs", min=1, max=16, help="mutated copies tested at once"),
) -> None:
    """Seed claim-* tasks: mutate a copy of our own code, keep the mutations our own tests catch.

    For each recorded seed, the project's src/ is copied, the mutation applied to the copy, and
    the seed's test run against it; a mutation the test does not catch is refused, and so is a
    test that fails on the unmutated copy. Each seed caught becomes a task file (claim-NAME.json).
    """
    from tools.seeding.seed import TASKS, Outcome, choose, load_seeds, project_root, seed_all

    try:
        root = project_root(repo or Path.cwd())
        chosen = choose(load_seeds(seeds or root / CATALOGUE), only or [])
    except BenchError as exc:
        raise fail(exc.message) from None
    folder = out or root / TASKS
    outcomes: list[Outcome] = []
    with progress_bar(label="{task.description} {task.completed}/{task.total}") as bar:
        job = bar.add_task("seeding", total=len(chosen))

        def done(outcome: Outcome) -> None:
            outcomes.append(outcome)
            bar.advance(job)
            if outcome.task is not None:
                path = write_task(outcome.task, folder)
                console.print(f"{outcome.seed.id}: {outcome.message}; wrote {path}", markup=False)
            else:
                err_console.print(f"{outcome.seed.id}: {outcome.message}", markup=False)

        try:
            seed_all(root, chosen, jobs=jobs, progress=done)
        except BenchError as exc:
            raise fail(exc.message) from None
    refused = [o.seed.id for o in outcomes if o.task is None]
    console.print(f"{len(outcomes) - len(refused)} seeded, {len(refused)} refused", markup=False)
    if refused:
        raise fail(f"refused: {', '.join(refused)} (see above); fix or drop these seeds")


if __name__ == "__main__":
    app()
