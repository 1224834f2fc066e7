"""`GET /metrics`: Prometheus's text format, guarded like `/api` (the count of every request is
server/middleware.py's `RequestMetricsMiddleware`)."""

from __future__ import annotations

from starlette.responses import Response

from benchwarmers.bench.admin.allowances import remaining_by_scope
from benchwarmers.bench.metrics import CONTENT_TYPE
from benchwarmers.bench.notify.figures import scrape_figures
from benchwarmers.server.deps import BenchDep, admin_router

router = admin_router()


@router.get(
    "/metrics",
    response_class=Response,
    responses={200: {"description": "Prometheus text format.", "content": {CONTENT_TYPE: {}}}},
)
async def get_metrics(bench: BenchDep) -> Response:
    owed = await bench.log.owed_count()
    allowances = await remaining_by_scope(bench.state)
    budgets = await bench.state.budgets.today()
    return Response(
        bench.state.metrics.render(owed, allowances, budgets, await scrape_figures(bench.state)),
        media_type=CONTENT_TYPE,
    )
