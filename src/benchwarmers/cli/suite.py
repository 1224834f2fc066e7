"""`benchwarmers suite`: list, show, mine, run and report the review tasks with known defects."""

from __future__ import annotations

import difflib
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson
import typer

from benchwarmers.bench.suite.mine import mine as mine_record
from benchwarmers.bench.suite.tasks import Task, load_tasks, select, shipped_folder, write_task
from benchwarmers.cli.common import Grouped, console, err_console, fail, print_json, progress_bar, table, with_bench
from benchwarmers.errors import BenchError

if TYPE_CHECKING:
    from benchwarmers.bench.services import Bench

app = typer.Typer(help="The suite: review tasks with known defects, run under free-tier limits, graded.")

TASKS_DIR = typer.Option(None, "--tasks-dir", help="also load the tasks in this folder (repeat)")


def _tasks(folders: list[Path] | None) -> list[Task]:
    try:
        return load_tasks(folders or [])
    except BenchError as exc:
        raise fail(exc.message) from None


@app.command("list")
def list_tasks(
    tasks_dir: list[Path] = TASKS_DIR,
    as_json: bool = typer.Option(False, "--json", help="print JSON"),
) -> None:
    """Show the tasks: shipped ones and those in --tasks-dir folders."""
    tasks = _tasks(tasks_dir)
    if as_json:
        print_json(
            [
                {
                    "id": t.id,
                    "kind": t.kind,
                    "shape": t.shape,
                    "files": [f.path for f in t.files],
                    "source": t.source.repo,
                }
                for t in tasks
            ]
        )
        return
    rows = [
        [t.id, t.kind, t.shape, ", ".join(f"{f.path}:{f.start}-{f.end}" for f in t.files), t.source.license]
        for t in tasks
    ]
    table(None, ["task", "kind", "shape", "shows", "licence"], rows)


@app.command("show")
def show(
    task_id: str = typer.Argument(..., help="a task's id, as `suite list` shows it"),
    tasks_dir: list[Path] = TASKS_DIR,
    as_json: bool = typer.Option(False, "--json", help="print JSON"),
) -> None:
    """Show one task: its prompt exactly as a model is sent it, and its key (where the defect is, what names it)."""
    from rich.panel import Panel
    from rich.text import Text

    from benchwarmers.bench.suite.report import task_shown

    tasks = {t.id: t for t in _tasks(tasks_dir)}
    if task_id not in tasks:
        close = difflib.get_close_matches(task_id, tasks, n=3, cutoff=0.5)
        hint = f" Did you mean {', '.join(close)}?" if close else ""
        raise fail(f"no task {task_id!r}; `benchwarmers suite list` shows them.{hint}")
    shown = task_shown(tasks[task_id])
    if as_json:
        print_json(shown)
        return
    facts = [("task", shown["task"]), ("kind", shown["kind"]), ("shape", shown["shape"]), ("title", shown["title"])]
    facts += [("source", _source(shown["source"])), *_key_lines(shown["key"])]
    if console.is_terminal:
        for name, value in facts:
            console.print(Text.assemble((f"{name}: ", "bold"), value))
        prompt = Panel(Text(shown["prompt"]), title="the prompt, exactly as a model is sent it", title_align="left")
        # Wrapped inside the panel (the console's soft wrap would crop it there); the text itself is unchanged.
        console.print(prompt, soft_wrap=False)
        return
    # Piped: plain lines, the prompt last and verbatim (`--json | jq -r .prompt` gives it alone).
    sys.stdout.write("".join(f"{name}: {value}\n" for name, value in facts) + "prompt:\n" + shown["prompt"] + "\n")


def _source(source: dict[str, str]) -> str:
    where = source.get("url") or source["repo"]
    commit = f" @ {source['commit'][:12]}" if source.get("commit") else ""
    return f"{source['repo']}{commit} ({source['license']}) {where}".strip()


def _key_lines(key: dict[str, Any] | None) -> list[tuple[str, str]]:
    """What a right answer names: a bug's place and mechanism, or a control's fixed lines (none is right)."""
    if key is None:
        return [("key", "none")]
    if "mechanism" in key:
        first, last = key["lines"]
        lines = f"line {first}" if first == last else f"lines {first}-{last}"
        return [
            ("key", f"{key['path']} {lines}, in {key['function']}"),
            ("mechanism", key["mechanism"]),
            ("patterns", "; ".join(key["patterns"])),
        ]
    first, last = key["fixed_lines"]
    flagged = f"a claim at {key['path']} lines {first}-{last} (±3) flags it"
    return [("key", f"no defect: the code after the fix of {key['pair']}; {flagged}")]


@app.command("mine")
def mine(
    records: Path = typer.Argument(..., help="a JSON-lines file of fix records (see docs/SUITE.md)"),
    out: Path = typer.Option(None, "--out", help="folder to write the tasks to (default: the shipped tasks)"),
) -> None:
    """Turn real fixes into rebench-*-bug and rebench-*-control task pairs."""
    folder = out or shipped_folder()
    written = []
    try:
        lines = records.read_bytes().splitlines()
    except OSError as exc:
        raise fail(f"cannot read {records}: {exc.strerror}") from None
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            bug, control = mine_record(orjson.loads(line))
        except orjson.JSONDecodeError:
            raise fail(f"{records}:{number} is not a JSON object") from None
        except BenchError as exc:
            raise fail(f"{records}:{number}: {exc.message}") from None
        written += [write_task(bug, folder), write_task(control, folder)]
    for path in written:
        console.print(f"wrote {path}")


@app.command("run")
@with_bench
async def run(
    bench: Bench,
    collection: str = typer.Option(None, "--collection", help="send each task through this collection's panel"),
    model: list[str] = typer.Option(None, "--model", help="ask this model alone (repeat for several)"),
    tasks: list[str] = typer.Option(None, "--tasks", help="only tasks whose id matches this glob (repeat)"),
    repeat: int = typer.Option(1, "--repeat", min=1, max=20, help="ask each task this many times"),
    judge: str = typer.Option(None, "--judge", help="a model that judges whether a claim names the mechanism"),
    tasks_dir: list[Path] = TASKS_DIR,
    resume: str = typer.Option(None, "--resume", help="continue this run (the latest unfinished one: 'last')"),
    dry_run: bool = typer.Option(False, "--dry-run", help="print the plan and the time the known limits need"),
) -> None:
    """Run tasks through a collection (or models one by one), grade them, and record verdicts."""
    from rich.progress import MofNCompleteColumn, TimeRemainingColumn

    from benchwarmers.bench.suite.run import UnitDone

    folders = [str(p.resolve()) for p in tasks_dir or []]
    if resume:
        run_id = (await bench.suite.get(None if resume == "last" else resume))["id"]
    else:
        chosen = select(_tasks(tasks_dir), tasks or [])
        if dry_run:
            plan = await bench.suite.dry_run(chosen, collection=collection, models=model or [], repeat=repeat)
            _print_plan(plan, len(chosen))
            return
        run_id = await bench.suite.create(
            chosen, collection=collection, models=model or [], repeat=repeat, judge=judge, folders=folders
        )
    run = await bench.suite.get(run_id)
    plan = run["plan"]
    total = len(plan["tasks"]) * plan["repeat"] * max(1, len(plan["models"]))
    err_console.print(f"suite run {run_id}: {total} unit(s) against {run['target']}")
    progress = progress_bar()
    progress.columns = (*progress.columns, MofNCompleteColumn(), TimeRemainingColumn())
    counts = {"hits": 0, "seats": 0, "skips": 0}
    with progress:
        bar = progress.add_task(run_id, total=total)

        def advance(done: UnitDone) -> None:
            counts["hits"] += done.hits
            counts["seats"] += done.seats
            counts["skips"] += done.skips
            progress.update(bar, advance=1, description=f"{done.unit.task} ({counts['hits']} hits)")

        stopped = await bench.suite.run(run_id, advance)
    if stopped is not None:
        err_console.print(f"run {run_id} stopped: {stopped}", markup=False)
        console.print(f"resume it with `benchwarmers suite run --resume {run_id}`", markup=False)
        return
    skips = f", {counts['skips']} skipped (too large for the model)" if counts["skips"] else ""
    console.print(
        f"run {run_id} done: {counts['seats']} seat(s) graded now{skips}; `benchwarmers suite report {run_id}`"
    )


def _print_plan(plan: dict[str, Any], tasks: int) -> None:
    console.print(f"{tasks} task(s), {plan['units']} panel(s)")
    rows = [
        [r["alias"], str(r["calls"]), Grouped(r["tokens"]), "; ".join(r["limits"]) or "none known", r["needs"]]
        for r in plan["models"]
    ]
    table(None, ["model", "calls", "tokens", "known limits", "needs at least"], rows)
    if plan["explorer_calls"]:
        console.print(f"plus up to {plan['explorer_calls']} explorer call(s), spread over free models")


@app.command("report")
@with_bench
async def report(
    bench: Bench,
    run_id: str = typer.Argument(None, help="a run id (default: the latest run)"),
    task: str = typer.Option(None, "--task", help="show each seat's answer to this task"),
    as_json: bool = typer.Option(False, "--json", help="print JSON"),
) -> None:
    """Per model: pair-correct rate and the other pair outcomes (both flagged, neither, reversed), hit rate
    (Wilson 95%), false claims, seconds, tokens, rate limits, skips."""
    found = await bench.suite.report(run_id)
    if as_json:
        print_json(found)
        return
    done = found["units"]
    console.print(f"run {found['run']} against {found['target']}: {done['done']} of {done['planned']} unit(s) done")
    rows = [
        [
            m["alias"],
            _rate(m["pair_correct_rate"], m["correct"], m["pairs"]),
            # The other pair outcomes: all in both flagged flags everything, all in neither flags nothing.
            str(m["both_flagged"]),
            str(m["neither"]),
            str(m["reversed"]),
            _rate(m["hit_rate"], m["hits"], m["found"])
            + (f" [{m['hit_interval'][0]:.2f}–{m['hit_interval'][1]:.2f}]" if m["hit_interval"] else ""),
            "-" if m["false_per_answer"] is None else f"{m['false_per_answer']:.2f}",
            "-" if m["median_seconds"] is None else f"{m['median_seconds']:.1f}",
            Grouped(m["tokens"]),
            str(m["rate_limited"]),
            str(m["errors"]),
            _skipped(m),
        ]
        for m in found["models"]
    ]
    headers = [
        "model",
        "pairs correct",
        "both flagged",
        "neither",
        "reversed",
        "hit rate [95%]",
        "false/answer",
        "median s",
        "tokens",
        "rate-limited",
        "errors",
        "skipped",
    ]
    table(None, headers, rows)
    if found["judge_agreement"] is not None:
        console.print(f"judge and patterns agreed on {found['judge_agreement']:.0%} of the claims judged")
    if task:
        _print_task(found, task)


def _skipped(model: dict[str, Any]) -> str:
    """Skips apart from errors, with their reasons: `2 (window 2)`."""
    if not model["skipped"]:
        return "0"
    return f"{model['skipped']} ({', '.join(f'{why} {n}' for why, n in model['skipped_by'].items())})"


def _rate(rate: float | None, good: int, total: int) -> str:
    return "-" if rate is None else f"{rate:.0%} ({good}/{total})"


def _print_task(found: dict[str, Any], task_id: str) -> None:
    chosen = next((t for t in found["tasks"] if t["task"] == task_id), None)
    if chosen is None:
        raise fail(f"run {found['run']} has no results for {task_id!r}")
    console.print(f"\n{task_id} ({chosen['kind']}) key: {chosen['key']}")
    for seat in chosen["seats"]:
        verdict = "hit" if seat["hit"] else ("flagged" if seat["flagged"] else seat["status"])
        if seat["skipped"]:
            verdict = f"skipped ({seat['skipped']})"
        console.print(f"\n[bold]{seat['alias']}[/bold] #{seat['attempt']} {seat['call']}: {verdict}")
        console.print(seat["answer"] or "(no answer)", markup=False)
