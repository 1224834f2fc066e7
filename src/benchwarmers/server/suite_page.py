"""The dashboard's Suite page: the runs, a run's per-model table, and a task's answers beside its code.

The runs and the per-model table are rendered here; a task opened (`?task=`) is drawn by the page's
script from `/api/suite/runs/{run}` (the seats' answers, as safe markdown) and `/api/suite/tasks/{task}`
(the code shown, with its real line numbers and the key's lines marked).
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Query, Request
from pydantic import Field
from starlette.responses import Response

from benchwarmers.dashboard import suite_views
from benchwarmers.errors import NotFound
from benchwarmers.server.deps import BenchDep, pages_router
from benchwarmers.server.params import Blank
from benchwarmers.server.routes.pages import render
from benchwarmers.server.schemas import error_responses

router = pages_router()

# The bounds sit on the string, not the Query: an empty value (Blank) is None, which has no length.
RunShown = Annotated[
    Annotated[str, Field(max_length=40)] | None, Blank, Query(description="The run shown; the newest when left out.")
]
TaskOpened = Annotated[
    Annotated[str, Field(max_length=80)] | None, Blank, Query(description="Open this task's seats beside its code.")
]


@router.get("/suite", responses=error_responses(404))
async def suite_page(
    request: Request,
    bench: BenchDep,
    run: RunShown = None,
    task: TaskOpened = None,
) -> Response:
    runs = await bench.suite.list()
    report: dict[str, Any] | None = None
    if run or runs:
        report = await bench.suite.report(run)
    opened = None
    if task and report is not None:
        opened = next((t for t in report["tasks"] if t["task"] == task), None)
        if opened is None:
            raise NotFound(f"run {report['run']} has no results for task {task!r}; pick one of its tasks")
    return await render(
        request,
        "suite.html",
        "suite",
        runs=runs,
        report=report,
        opened=opened,
        task_line=suite_views.task_line,
        run_state=suite_views.run_state,
        span=suite_views.span,
    )
