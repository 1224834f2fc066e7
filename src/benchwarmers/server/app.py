"""`create_app(settings)`: the HTTP edge. Nothing here runs at import time."""

from __future__ import annotations

import asyncio
import contextlib
import gc
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI
from starlette.requests import Request
from starlette.responses import Response

from benchwarmers import __version__
from benchwarmers.bench.notify.drain import NotifyJob
from benchwarmers.bench.services import Bench
from benchwarmers.bench.upkeep.leader import UpkeepLock
from benchwarmers.bench.upkeep.retention import retention_loop
from benchwarmers.bench.upkeep.scheduler import CatalogScheduler
from benchwarmers.bench.upkeep.watch import Watch
from benchwarmers.server import (
    api_admin,
    api_evidence,
    api_keys,
    api_notify,
    api_panels,
    api_suite,
    api_trends,
    bench_routes,
    body_memory,
    errors,
    login,
    messages_api,
    metrics_route,
    openapi,
    pages,
    readiness,
    responses_api,
    suite_page,
    v1_routes,
)
from benchwarmers.server.auth import Access
from benchwarmers.server.cors import CorsMiddleware
from benchwarmers.server.middleware import RequestIdMiddleware, UnreadBodyMiddleware
from benchwarmers.server.responses import json_response
from benchwarmers.server.startup import Startup
from benchwarmers.settings import Settings

_DEFAULT_GC_THRESHOLDS = gc.get_threshold()


def create_app(settings: Settings) -> FastAPI:
    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        bench = Bench(settings, actor="server")
        app.state.bench = bench
        app.state.startup = startup = Startup(bench)
        app.state.watch = None
        app.state.notify = None
        # Built here rather than on the first request: the dashboard's token file (keys required, no
        # admin token) exists once the server is up, and an unreadable one stops the start.
        app.state.access = Access.of(bench.settings, bench.keys)
        upkeep = UpkeepLock(settings.home)  # with several workers, one of them runs the loops
        jobs: list[CatalogScheduler | Watch | NotifyJob] = []
        retention: asyncio.Task[None] | None = None
        leading: asyncio.Task[None] | None = None

        def start_loops() -> None:
            nonlocal retention
            jobs.append(CatalogScheduler(bench.state).start())  # the daily catalog refresh
            app.state.watch = Watch(bench.state).start()  # retired models, the owed alert
            jobs.append(app.state.watch)
            app.state.notify = NotifyJob(bench.state).start()  # new alerts to the notification targets
            jobs.append(app.state.notify)
            retention = asyncio.create_task(retention_loop(bench.state), name="benchwarmers-retention")

        async def lead_when_free() -> None:
            await upkeep.wait_for()
            start_loops()

        async def serving() -> None:  # once the bench is open: at once, or when the database answers
            nonlocal leading
            if upkeep.acquire():
                start_loops()
            else:
                # Another worker leads, or `benchwarmers upkeep` is running: lead once the lock is free,
                # so a timer's run at this server's start does not leave it without its loops.
                leading = asyncio.create_task(lead_when_free(), name="benchwarmers-upkeep-lock")
            _freeze_startup_heap()

        body_memory.map_large_blocks()  # freed bodies go back to the system (glibc)
        await startup.open(then=serving)  # raises only for a database that can never work as configured
        try:
            yield
        finally:
            await startup.stop()
            gc.unfreeze()
            gc.set_threshold(*_DEFAULT_GC_THRESHOLDS)
            for task in (leading, retention):
                if task is not None:
                    task.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await task
            for job in jobs:
                await job.stop()
            upkeep.release()
            bench.state.metrics.process_exited()
            await bench.close()

    app = FastAPI(title="Benchwarmers", version=__version__, lifespan=lifespan, docs_url=None, redoc_url=None)
    app.state.body_budget = body_memory.BodyBudget(settings.body_memory_budget, settings.body_memory_wait)
    errors.install(app)
    openapi.install(app)

    app.add_middleware(CorsMiddleware, origins=settings.origins)  # inside RequestId: preflights get an id
    app.add_middleware(RequestIdMiddleware)
    app.add_middleware(UnreadBodyMiddleware)  # outermost: every early refusal reaches clients that write first
    app.add_middleware(metrics_route.RequestMetricsMiddleware)  # counts every answer, refusals too

    @app.get("/healthz")
    async def healthz() -> Response:
        return json_response({"status": "ok", "version": __version__})

    @app.get("/readyz", responses={503: {"description": "Not ready: the reasons (database, Redis, disk)."}})
    async def readyz(request: Request) -> Response:
        startup: Startup = request.app.state.startup
        found = await readiness.reasons(startup)
        if found:
            database = "unreachable" if any(r.startswith("database:") for r in found) else "ok"
            return json_response({"status": "not ready", "database": database, "reasons": found}, status=503)
        return json_response({"status": "ready", "database": "ok"})

    # Open: /healthz, /readyz, /login, /logout, /static and this document. Every other route is on a
    # guarded router (server/deps.py); tests/server/test_route_guards.py holds every route to that.
    app.include_router(v1_routes.router)
    app.include_router(responses_api.router)
    app.include_router(messages_api.router)
    app.include_router(bench_routes.router)
    app.include_router(api_evidence.router)
    app.include_router(api_keys.router)
    app.include_router(api_notify.router)
    app.include_router(login.router)
    app.include_router(api_admin.router)
    app.include_router(api_panels.router)
    app.include_router(api_suite.router)
    app.include_router(api_trends.router)
    app.include_router(suite_page.router)
    app.include_router(metrics_route.router)
    pages.install(app)  # the dashboard's pages and /static
    return app


def _freeze_startup_heap() -> None:
    """Keep the cyclic GC off the event loop's back while serving.

    - What startup built (modules, the catalog, the app: some 145,000 objects) lives as long as the
      process; frozen, a full collection no longer walks it (it held the loop 80-140 ms).
    - Panels in flight make and drop tens of thousands of objects, nearly all freed by their
      reference counts; at the default threshold (700) that churn ran ~20 collections a second,
      ~12% of the CPU at 64 connections (perf/tails.py). At 20,000 a collection comes when that
      many objects have piled up unfreed, a few megabytes at most.

    No collection first: startup leaves some 2,000 unreachable objects, not worth the 90 ms pass.
    Unfrozen on shutdown, so an app that lives in a longer process (tests) is collected after it.
    """
    gc.freeze()
    gc.set_threshold(20_000, 10, 100)


def app_from_environment() -> FastAPI:
    """The app of one worker of `serve --workers N` (uvicorn imports and calls this in each process;
    `serve` has put its settings in the environment the workers inherit)."""
    return create_app(Settings())
