"""`/api/suite/...`: the suite's runs, a run's report and a task's code, for the Suite page (admin only).

A run's report holds every seat's answer (the drill-down reads them there); a task's files and key
come apart, once per task opened. `latest` names the newest run wherever a run id goes.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Path, Query
from pydantic import Field
from starlette.responses import Response

from benchwarmers.server.deps import BenchDep, admin_router
from benchwarmers.server.params import Blank
from benchwarmers.server.responses import json_response
from benchwarmers.server.schemas import error_responses

router = admin_router()

LATEST = "latest"
RunId = Annotated[str, Path(description="A run's id (`r…`), or `latest` for the newest run.", max_length=40)]
RunFolders = Annotated[
    Annotated[str, Field(max_length=40)] | None,  # bounds on the string: a blank value is None
    Blank,
    Query(
        description="Look among this run's tasks (its --tasks-dir folders too), `latest` for the newest run; "
        "the shipped tasks when left out."
    ),
]


def run_of(run_id: str) -> str | None:
    return None if run_id == LATEST else run_id


@router.get("/api/suite/runs")
async def get_runs(bench: BenchDep) -> Response:
    return json_response({"object": "list", "data": await bench.suite.list()})


@router.get("/api/suite/runs/{run_id}", responses=error_responses(404))
async def get_run(bench: BenchDep, run_id: RunId) -> Response:
    return json_response({"object": "suite.report", **await bench.suite.report(run_of(run_id))})


@router.get("/api/suite/tasks/{task_id}", responses=error_responses(404))
async def get_task(
    bench: BenchDep,
    task_id: Annotated[str, Path(description="A task's id, as `benchwarmers suite list` shows it.", max_length=80)],
    run: RunFolders = None,
) -> Response:
    run_id = None if run is None else (await bench.suite.get(run_of(run)))["id"]
    found = await bench.suite.task(task_id, run_id)
    return json_response({"object": "suite.task", **found})
