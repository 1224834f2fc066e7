"""The HTTP routes, one module per resource, each with one router; server/app.py includes ROUTERS.

No route module imports another: what two share is beside them in server/ (panel_http.py, the panel over
HTTP for the wire APIs; collection_views.py; rendering.py, the dashboard's pages as HTML).
"""

from __future__ import annotations

from fastapi import APIRouter

from benchwarmers.server.routes import (
    alerts,
    bench,
    budgets,
    changes,
    chat,
    collections,
    decision_models,
    discover,
    endpoints,
    evidence,
    health,
    keys,
    login,
    messages,
    metrics,
    models,
    notify,
    pages,
    panels,
    responses,
    settings,
    shapes,
    suite,
    trends,
    verdicts,
    wire_models,
)

# In the order they match. Open: /healthz, /readyz, /login, /logout, /static and the OpenAPI document.
# Every other route is on a guarded router (server/deps.py); tests/server/test_route_guards.py holds
# every route to that.
ROUTERS: tuple[APIRouter, ...] = (
    health.router,
    wire_models.router,
    chat.router,
    responses.router,
    messages.router,
    bench.router,
    evidence.router,
    keys.router,
    budgets.router,
    notify.router,
    login.router,
    collections.router,
    models.router,
    endpoints.router,
    settings.router,
    shapes.router,
    decision_models.router,
    changes.router,
    alerts.router,
    discover.router,
    panels.router,
    verdicts.router,
    suite.router,
    trends.router,
    metrics.router,
    pages.router,
)
