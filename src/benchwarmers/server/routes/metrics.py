"""`GET /metrics` (Prometheus's text format, guarded like `/api`), and the count of every request."""

from __future__ import annotations

from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

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


class RequestMetricsMiddleware:
    """Counts each HTTP request by its route's template (`/api/models/{alias}`, never the path itself:
    one series per route, not per model or panel id) and the status it was answered with."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        status = 500

        async def noting(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, noting)
        finally:
            bench = getattr(scope["app"].state, "bench", None)
            if bench is not None:
                route = scope.get("route")
                bench.state.metrics.request(getattr(route, "path", None) or "unmatched", status)
