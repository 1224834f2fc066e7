"""`create_app(settings)`: the HTTP edge. Nothing here runs at import time."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI
from starlette.responses import Response

from benchwarmers import __version__
from benchwarmers.bench.services import Bench
from benchwarmers.bench.upkeep.retention import retention_loop
from benchwarmers.bench.upkeep.scheduler import CatalogScheduler
from benchwarmers.bench.upkeep.watch import Watch
from benchwarmers.server import (
    api_admin,
    api_evidence,
    api_keys,
    api_panels,
    bench_routes,
    errors,
    login,
    openapi,
    pages,
    responses_api,
    v1_routes,
)
from benchwarmers.server.cors import CorsMiddleware
from benchwarmers.server.deps import BenchDep
from benchwarmers.server.middleware import RequestIdMiddleware, UnreadBodyMiddleware
from benchwarmers.server.responses import json_response
from benchwarmers.settings import Settings

log = logging.getLogger("benchwarmers.server")


def create_app(settings: Settings) -> FastAPI:
    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        bench = Bench(settings, actor="server")
        await bench.open()
        app.state.bench = bench
        scheduler = CatalogScheduler(bench.state).start()  # the daily catalog refresh
        app.state.watch = watch = Watch(bench.state).start()  # probes of retired models, the owed alert
        retention = asyncio.create_task(retention_loop(bench.state), name="benchwarmers-retention")
        try:
            yield
        finally:
            retention.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await retention
            await scheduler.stop()
            await watch.stop()
            await bench.close()

    app = FastAPI(title="Benchwarmers", version=__version__, lifespan=lifespan, docs_url=None, redoc_url=None)
    errors.install(app)
    openapi.install(app)

    app.add_middleware(CorsMiddleware, origins=settings.origins)  # inside RequestId: preflights get an id
    app.add_middleware(RequestIdMiddleware)
    app.add_middleware(UnreadBodyMiddleware)  # outermost: every early refusal reaches clients that write first

    @app.get("/healthz")
    async def healthz() -> Response:
        return json_response({"status": "ok", "version": __version__})

    @app.get("/readyz", responses={503: {"description": "The database is not reachable."}})
    async def readyz(bench: BenchDep) -> Response:
        try:
            await bench.state.ping()
        except Exception as exc:
            log.warning("database not reachable: %s", type(exc).__name__)
            return json_response({"status": "unavailable", "database": "unreachable"}, status=503)
        return json_response({"status": "ready", "database": "ok"})

    # Open: /healthz, /readyz, /login, /logout, /static and this document. Every other route is on a
    # guarded router (server/deps.py); tests/test_route_guards.py holds every route to that.
    app.include_router(v1_routes.router)
    app.include_router(responses_api.router)
    app.include_router(bench_routes.router)
    app.include_router(api_evidence.router)
    app.include_router(api_keys.router)
    app.include_router(login.router)
    app.include_router(api_admin.router)
    app.include_router(api_panels.router)
    pages.install(app)  # the dashboard's pages and /static
    return app
