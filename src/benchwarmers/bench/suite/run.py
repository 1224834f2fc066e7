"""Running the suite: each task through a real panel (or to each model alone), graded as it
arrives, stored, and turned into verdicts with the source `suite`.

A run is a plan (tasks, repeats, the collection or the models, the judge) stored before the first
call, and its results stored unit by unit as they arrive. A unit is one task attempt (one panel),
or with `--model` one task attempt for one model. Every panel carries the idempotency key
`suite:RUN:TASK:ATTEMPT[:MODEL]`: a run resumed after any interruption skips units with results,
grades a unit whose panel was recorded but whose results were not (no call repeated), and runs the
rest. Every call goes through the bench's pacing: members wait for a slot under the known limits,
and a model cooling down after a 429 is not called. Asked alone, such a model is waited for (the
call never happened, so nothing is repeated); in a panel it is recorded as not called.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from benchwarmers.bench.bounds import TREND_RUNS
from benchwarmers.bench.core.estimate import PromptSize, Ratios
from benchwarmers.bench.core.seats import explorer_count, seat_limits
from benchwarmers.bench.names import collection_name, suggest
from benchwarmers.bench.pacing import scopes_of
from benchwarmers.bench.panels.ids import PanelIds
from benchwarmers.bench.panels.parse import estimate_tokens, read_content
from benchwarmers.bench.panels.prepare import request_hash, too_small
from benchwarmers.bench.panels.service import Panels
from benchwarmers.bench.snapshot import Snapshot
from benchwarmers.bench.state import BenchState
from benchwarmers.bench.suite.estimate import describe_seconds, seconds_needed, tokens_for
from benchwarmers.bench.suite.grading import Graded, grade
from benchwarmers.bench.suite.record import CALLER, RATE_LIMITED, TOO_LARGE, WINDOW, skip_reason, store_unit
from benchwarmers.bench.suite.report import model_rows, planned_units, run_trend, task_view
from benchwarmers.bench.suite.report import report as build_report
from benchwarmers.bench.suite.tasks import Task, load_tasks
from benchwarmers.errors import BudgetExhausted, InvalidRequest, NotFound, TooLarge
from benchwarmers.store import calls
from benchwarmers.store import suite as store

JUDGED_KINDS = calls.SEATED_KINDS
MAX_WAIT = 3600.0  # longest wait for a cooling model asked alone before its unit is left for a resume
JUDGE_RUBRIC = (
    "You check one claim from a code review against a known defect.\n\n"
    "Known defect: {mechanism}\n\nClaim: {claim}\n\n"
    "Does the claim identify this defect's cause (not only its location)? Answer with one word: yes or no."
)

log = logging.getLogger("benchwarmers.suite")


def _check_target(snapshot: Snapshot, collection: str, models: Sequence[str]) -> None:
    """Refuse a collection or model that is not configured, with its close matches."""
    if collection and collection not in snapshot.collections:
        raise NotFound(
            f"collection bench/{collection} does not exist."
            f"{suggest(collection, snapshot.collections, prefix='bench/')} `benchwarmers collection list` shows them"
        )
    for alias in models:
        if alias not in snapshot.models:
            raise NotFound(
                f"{alias!r} is not on the roster.{suggest(alias, snapshot.models)} `benchwarmers model list` shows it"
            )


@dataclass(frozen=True)
class Unit:
    task: str
    attempt: int
    alias: str | None = None  # asked alone; None: the collection's panel

    def key(self, run_id: str) -> str:
        return ":".join(["suite", run_id, self.task, str(self.attempt), *([self.alias] if self.alias else [])])


@dataclass
class UnitDone:
    unit: Unit
    seats: int
    hits: int
    skipped: bool  # its results were already stored
    skips: int = 0  # members that could not take the task (window, 413, context)


Progress = Callable[[UnitDone], Awaitable[None] | None]


def plan_units(tasks: Sequence[str], repeat: int, models: Sequence[str]) -> list[Unit]:
    """Every unit of work, in the order a run does them (each task's attempts together)."""
    asked: list[str | None] = [*models] if models else [None]
    return [Unit(task, attempt, alias) for attempt in range(1, repeat + 1) for task in tasks for alias in asked]


def prompt_estimate(task: Task, ratios: Ratios | None = None) -> PromptSize:
    """The task's prompt in tokens, per model, as the panel estimates it before it seats anyone."""
    content = read_content([{"role": "user", "content": task.prompt()}])
    default = estimate_tokens(content.text_chars, content.images, content.kind)
    return PromptSize.of(content.text_chars, content.images, content.kind, default, ratios)


def run_tasks(run: dict[str, Any]) -> dict[str, Task]:
    """The tasks a run may name: the shipped ones and those of the folders it was started with."""
    return {t.id: t for t in load_tasks(Path(folder) for folder in run["plan"].get("folders") or [])}


def explorers_for(snapshot: Any, name: str) -> int:
    """Explorer seats each panel of the collection fills at most (who sits varies per panel)."""
    collection = snapshot.collections[name]
    members = [a for a in collection["members"] if a in snapshot.models and not snapshot.models[a].retired]
    return explorer_count(len(members), *seat_limits(collection, snapshot.gateway))


def new_run_id(now: float | None = None) -> str:
    return "r" + PanelIds().new(now).removeprefix("p")


class SuiteRuns:
    def __init__(self, state: BenchState, panels: Panels) -> None:
        self.state = state
        self.panels = panels

    async def create(
        self,
        tasks: Sequence[Task],
        *,
        collection: str | None,
        models: Sequence[str],
        repeat: int = 1,
        judge: str | None = None,
        folders: Sequence[str] = (),
    ) -> str:
        """Store a run's plan before any call; its id."""
        if bool(collection) == bool(models):
            raise InvalidRequest("say what to run: --collection bench/NAME, or --model ALIAS (repeatable)")
        if repeat < 1:
            raise InvalidRequest("--repeat must be at least 1")
        snapshot = await self.state.snapshot()
        name = collection_name(collection or "")
        _check_target(snapshot, name, [*models, *([judge] if judge else [])])
        plan = {
            "tasks": [t.id for t in tasks],
            "repeat": repeat,
            "collection": name or None,
            "models": list(models),
            "judge": judge,
            "folders": list(folders),
        }
        run_id = new_run_id()
        target = f"bench/{name}" if name else ", ".join(models)
        async with self.state.write() as conn:
            await store.create_run(conn, run_id, target, plan)
        return run_id

    async def dry_run(
        self, tasks: Sequence[Task], *, collection: str | None, models: Sequence[str], repeat: int = 1
    ) -> dict[str, Any]:
        """What a run would ask of each model, and the least time the known limits allow it."""
        snapshot = await self.state.snapshot()
        name = collection_name(collection or "")
        _check_target(snapshot, name, models)
        asked = list(models) or [a for a in snapshot.collections[name]["members"] if a in snapshot.models]
        tokens = [tokens_for(len(t.prompt())) for t in tasks]
        calls = len(tasks) * repeat
        per_call = max(tokens, default=0)
        by_endpoint: dict[str, int] = {}
        for alias in asked:
            endpoint = snapshot.models[alias].endpoint
            by_endpoint[endpoint] = by_endpoint.get(endpoint, 0) + calls
        rows: list[dict[str, Any]] = []
        for alias in asked:
            endpoint_scope, model_scope = scopes_of(snapshot, alias)
            own = seconds_needed(calls, per_call, model_scope.limits)
            shared = seconds_needed(by_endpoint[endpoint_scope.name], per_call, endpoint_scope.limits)
            needed = None if own is None or shared is None else max(own, shared)
            rows.append(
                {
                    "alias": alias,
                    "calls": calls,
                    "tokens": sum(tokens) * repeat,
                    "limits": [
                        f"{s.kind} {s.name}: {lim.describe()}"
                        for s in (endpoint_scope, model_scope)
                        for lim in s.limits
                    ],
                    "seconds": needed,
                    "needs": describe_seconds(needed),
                }
            )
        explorers = 0
        if name:
            explorers = explorers_for(snapshot, name) * calls
        needs: list[float | None] = [r["seconds"] for r in rows]
        known = [n for n in needs if n is not None]
        return {
            "units": calls * max(1, len(models)),
            "models": rows,
            "explorer_calls": explorers,
            "seconds": max([0.0, *known]) if len(known) == len(needs) else None,
        }

    async def get(self, run_id: str | None) -> dict[str, Any]:
        """A run by id, or the latest one."""
        async with self.state.read() as conn:
            run = await (store.get_run(conn, run_id) if run_id else store.latest_run(conn))
        if run is None:
            raise NotFound(f"no suite run {run_id!r}" if run_id else "no suite run yet: `benchwarmers suite run`")
        return run

    async def list(self) -> list[dict[str, Any]]:
        """Runs, newest first: each with its results count and its units done of those planned."""
        async with self.state.read() as conn:
            runs = await store.list_runs(conn)
        return [
            {
                "id": r["id"],
                "target": r["target"],
                "created_at": r["created_at"],
                "finished_at": r["finished_at"],
                "plan": r["plan"],
                "units": {"planned": planned_units(r["plan"]), "done": r["units_done"]},
                "results": r["results"],
            }
            for r in runs
        ]

    async def task(self, task_id: str, run_id: str | None = None) -> dict[str, Any]:
        """A task's files and key: a shipped task, or one from the task folders `run_id` was started with."""
        tasks = run_tasks(await self.get(run_id)) if run_id else {t.id: t for t in load_tasks()}
        if task_id not in tasks:
            where = f"run {run_id}'s tasks" if run_id else "the shipped tasks"
            raise NotFound(f"no task {task_id!r} in {where}; `benchwarmers suite list` shows them")
        return task_view(tasks[task_id])

    async def report(self, run_id: str | None = None) -> dict[str, Any]:
        """A run's report (the latest run's without an id), answers included for the drill-down."""
        run = await self.get(run_id)
        async with self.state.read() as conn:
            rows = await store.results(conn, run["id"])
            answers = await store.answers(conn, [r["call"] for r in rows if r["graded"] is not None])
        return build_report(run, rows, run_tasks(run), answers)

    async def trend(self, limit: int = TREND_RUNS) -> dict[str, Any]:
        """The newest `limit` runs, oldest first, and each model's hit and pair-correct rates in each
        (with their intervals): the Suite page's chart. Reads the results, never the answers."""
        async with self.state.read() as conn:
            runs = list(reversed(await store.list_runs(conn, limit=limit)))
            found = [(run, await store.results(conn, run["id"])) for run in runs]
        return run_trend([(run, model_rows(rows, run_tasks(run))) for run, rows in found])

    async def run(self, run_id: str, progress: Progress | None = None) -> str | None:
        """Do every unit of the run that has no results yet, in order; mark the run finished. A daily
        budget that runs out stops it cleanly before the next unit: the run stays unfinished (resumable)
        and what the refusal said is returned; None when the run finished."""
        run = await self.get(run_id)
        plan = run["plan"]
        tasks = run_tasks(run)
        missing = [t for t in plan["tasks"] if t not in tasks]
        if missing:
            raise InvalidRequest(f"run {run_id} needs tasks that are not loaded: {', '.join(missing)}")
        async with self.state.read() as conn:
            done = await store.done_units(conn, run_id)
        for unit in plan_units(plan["tasks"], plan["repeat"], plan["models"]):
            if (unit.task, unit.attempt, unit.alias) in done:
                await _report(progress, UnitDone(unit, 0, 0, skipped=True))
                continue
            try:
                done_now = await self._do(run_id, plan, unit, tasks[unit.task])
            except BudgetExhausted as exc:
                log.info("suite run %s stopped: %s", run_id, exc.message)
                return exc.message
            await _report(progress, done_now)
        async with self.state.write() as conn:
            await store.finish_run(conn, run_id)
        return None

    async def _do(self, run_id: str, plan: dict[str, Any], unit: Unit, task: Task) -> UnitDone:
        key = unit.key(run_id)
        snapshot = await self.state.snapshot()
        asked = [unit.alias] if unit.alias else list(snapshot.collections[plan["collection"]]["members"])
        # Members whose known window the prompt exceeds: left out of the panel, recorded as skipped.
        size = prompt_estimate(task, self.state.ratios)
        skips = {alias: WINDOW for alias, _window, _estimate in too_small(snapshot, asked, size)}
        async with self.state.read() as conn:
            panel_id = await store.finished_panel(conn, CALLER.name, key)
        if panel_id is None and asked and len(skips) == len(asked):
            await store_unit(self.state, run_id, unit, task, [], {}, skips, "")
            return UnitDone(unit, 0, 0, skipped=False, skips=len(skips))
        try:
            while panel_id is None:
                panel_id = await self._ask(plan, unit, task, key, without=list(skips))
                if unit.alias is None:
                    break
                async with self.state.read() as conn:
                    seat = (await store.panel_seats(conn, panel_id))[0]
                if seat["status"] not in RATE_LIMITED:
                    break
                # Asked alone and not called (no slot, or cooling after a 429): wait, then ask again.
                wait = max(1.0, float(seat["frees_at"] or time.time() + 60.0) - time.time())
                if wait > MAX_WAIT:
                    break
                await asyncio.sleep(wait)
                panel_id = None
        except TooLarge:
            # The panel's own check refused members the suite's did not leave out: all skip this task.
            skips |= {alias: TOO_LARGE for alias in asked if alias not in skips}
            await store_unit(self.state, run_id, unit, task, [], {}, skips, "")
            return UnitDone(unit, 0, 0, skipped=False, skips=len(skips))
        async with self.state.read() as conn:
            seats = [s for s in await store.panel_seats(conn, panel_id) if s["seat"] in JUDGED_KINDS]
        seated = {s["alias"] for s in seats}
        # Resumed from a recorded panel: the members it left out are the ones skipped.
        skips = {alias: reason for alias, reason in skips.items() if alias not in seated}
        graded = {s["call"]: await self._grade(task, s, plan.get("judge")) for s in seats if s["status"] == "ok"}
        for s in seats:
            if s["status"] == "empty":
                graded[s["call"]] = Graded(kind=task.kind)  # an empty answer claims nothing
        await store_unit(self.state, run_id, unit, task, seats, graded, skips, panel_id)
        refused = sum(1 for s in seats if skip_reason(s))
        hits = sum(1 for g in graded.values() if g.hit)
        return UnitDone(unit, len(seats) - refused, hits, skipped=False, skips=len(skips) + refused)

    async def _ask(self, plan: dict[str, Any], unit: Unit, task: Task, key: str, without: Sequence[str] = ()) -> str:
        body: dict[str, Any] = {
            "model": f"bench/{plan['collection']}" if plan["collection"] else unit.alias,
            "messages": [{"role": "user", "content": task.prompt()}],
            "max_tokens": task.max_tokens,
            "bench": {"shape": task.shape},
        }
        raw = orjson.dumps(body)
        prepared = await self.panels.prepare(
            body, request_hash(raw), CALLER, self.panels.new_panel_id(), direct=unit.alias, without=without
        )
        await self.panels.run(prepared, idempotency_key=key)
        return prepared.panel_id

    async def _grade(self, task: Task, seat: dict[str, Any], judge: str | None) -> Graded:
        answer = seat["answer"]
        by_patterns = grade(task, answer)
        if judge is None or task.key is None:
            return by_patterns
        # The claims at the key's location are the ones the patterns judged (hit or located).
        at_key = [*by_patterns.hits, *by_patterns.located]
        mechanism = task.key.mechanism
        decisions = {text: await self._judge(judge, text, mechanism, seat["call"]) for text in at_key}
        return grade(task, answer, judge=lambda text, _mechanism: decisions.get(text, False))

    async def _judge(self, alias: str, claim: str, mechanism: str, call: str) -> bool:
        """The judge model's yes or no (its call is not a seat: it judges, it is not judged)."""
        snapshot = await self.state.snapshot()
        prompt = JUDGE_RUBRIC.format(mechanism=mechanism, claim=claim)
        model = snapshot.models[alias]
        body = orjson.dumps(
            {
                "model": model.model_id,
                "stream": False,
                "temperature": 0,
                "messages": [{"role": "user", "content": prompt}],
            }
        )
        outcome = await self.state.calls.call(
            snapshot,
            alias=alias,
            call=f"{call}.judge",
            kind="judge",
            body=body,
            seat_timeout=snapshot.gateway.seat_timeout,
            tokens=len(prompt) // 3 + 16,
        )
        return outcome.status == "ok" and outcome.answer.strip().lower().lstrip("*`\"' ").startswith("yes")


async def _report(progress: Progress | None, done: UnitDone) -> None:
    if progress is not None:
        result = progress(done)
        if result is not None:
            await result
