"""`GET /metrics`: Prometheus's text format, guarded like `/api` (the count of every request is
server/middleware.py's `RequestMetricsMiddleware`)."""

from __future__ import annotations

from starlette.responses import Response

from benchwarmers.bench.metrics import CONTENT_TYPE
from benchwarmers.server.deps import BenchDep, admin_router

router = admin_router()


@router.get(
    "/metrics",
    response_class=Response,
    responses={200: {"description": "Prometheus text format.", "content": {CONTENT_TYPE: {}}}},
)
async def get_metrics(bench: BenchDep) -> Response:
    owed = await bench.log.owed_count()
    allowances = await bench.allowances.by_scope()
    budgets = await bench.budgets.today()
    return Response(
        bench.metrics.render(owed, allowances, budgets, await bench.figures.scrape()),
        media_type=CONTENT_TYPE,
    )
