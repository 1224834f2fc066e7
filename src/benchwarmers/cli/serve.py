"""`benchwarmers serve`: the gateway, the API and the dashboard on one port."""

from __future__ import annotations

import errno
import os
import shutil
import socket
from typing import TYPE_CHECKING

import typer

from benchwarmers.cli.common import console, err_console, fail, load_settings, run
from benchwarmers.errors import BenchError

if TYPE_CHECKING:
    from benchwarmers.settings import Settings


def serve(
    bind: str = typer.Option(None, "--bind", help="HOST:PORT to listen on (default BENCH_BIND or 127.0.0.1:8123)"),
    workers: int = typer.Option(
        1, "--workers", min=1, max=64, help="processes serving the one port (uvicorn's process manager)"
    ),
) -> None:
    """Serve the bench: OpenAI-compatible gateway, verdicts, API and dashboard."""

    from benchwarmers.server import listen
    from benchwarmers.server.app import create_app
    from benchwarmers.settings import is_loopback

    settings = load_settings()
    if bind:
        settings = settings.model_copy(update={"bind": bind})
    try:
        host, port = settings.host_port()
    except ValueError as exc:
        raise fail(str(exc)) from None
    if not is_loopback(host) and not settings.admin_token:
        raise fail(
            f"refusing to listen on {host}: it is not a loopback address, so anyone who can reach it "
            "could call your models. Set BENCHWARMERS_ADMIN_TOKEN (e.g. `export BENCHWARMERS_ADMIN_TOKEN="
            "$(python -c 'import secrets; print(secrets.token_urlsafe(32))')`) and create gateway keys, "
            "or bind to 127.0.0.1."
        )
    try:
        sockets = listen.bind(host, port)
    except OSError as exc:
        raise fail(bind_failure(host, port, exc)) from None
    settings.ensure_home()
    shown = f"[{host}]" if ":" in host else host
    base = f"http://{shown}:{port}"
    console.print(f"Benchwarmers serving on {base}  (data in {settings.home})", markup=False)
    console.print(f"Dashboard: {base}/  (the setup checklist there walks a new bench to its first panel)", markup=False)
    show_login(settings, base)
    console.print(
        f"Next: point any OpenAI client at {base}/v1 with model bench/NAME, "
        "or `benchwarmers ask bench/NAME 'prompt'`; stop with Ctrl-C",
        markup=False,
    )
    if workers > 1:
        serve_workers(settings, sockets, workers)
        return
    server = listen.QuietServer(listen.uvicorn_config(create_app(settings), settings))
    try:
        server.run(sockets=sockets)
    except KeyboardInterrupt:
        pass
    finally:
        for sock in sockets:
            sock.close()
    if not server.started:
        raise typer.Exit(3)  # uvicorn has logged why (the database could not be opened, say)


def show_login(settings: Settings, base: str) -> None:
    """With gateway keys required and no admin token, the dashboard's token file (made on first use)
    and where to log in. The URL holds the token, so it is printed only to a person's terminal: under
    systemd or Docker stdout is a log, and `benchwarmers dashboard-url` prints it on demand."""
    from benchwarmers.bench.admin.dashboard_token import read_or_make, token_path, uses_file

    if not uses_file(settings):
        return
    try:
        token = read_or_make(token_path(settings))
    except BenchError as exc:
        raise fail(exc.message) from None
    if console.is_terminal:
        console.print(f"Log in to the dashboard (once per browser): {login_url(base, token)}", markup=False)
    else:
        console.print(
            f"Dashboard login: gateway keys do not open it; `benchwarmers dashboard-url` prints its login URL "
            f"(the token is in {token_path(settings)})",
            markup=False,
        )


def login_url(base: str, token: str) -> str:
    return f"{base.rstrip('/')}/login?token={token}"


def dashboard_url(
    rotate: bool = typer.Option(
        False, "--rotate", help="make a new dashboard token first: every dashboard session ends"
    ),
) -> None:
    """Print the dashboard's login URL (it holds the dashboard's token: open it once per browser).

    Anyone who can read the bench's data folder is its admin already (the CLI changes everything),
    so the token file is read, or made, here as `serve` does."""
    from benchwarmers.bench.admin import dashboard_token

    settings = load_settings()
    base = bench_base(settings)
    if settings.admin_token is not None:
        if rotate:
            raise fail("the admin token lives in BENCHWARMERS_ADMIN_TOKEN: set a new one there and restart the bench")
        console.print(login_url(base, settings.admin_token), markup=False)
        return
    if not settings.require_keys:
        console.print(f"{base}/", markup=False)
        err_console.print("No login needed: as installed the dashboard is open on this machine.", markup=False)
        return
    settings.ensure_home()
    path = dashboard_token.token_path(settings)
    try:
        token = dashboard_token.rotate(path) if rotate else dashboard_token.read_or_make(path)
    except BenchError as exc:
        raise fail(exc.message) from None
    console.print(login_url(base, token), markup=False)
    if rotate:
        err_console.print("A new dashboard token: running servers take it on their next request.", markup=False)


def bench_base(settings: Settings) -> str:
    """Where a browser reaches the bench: its public URL, BENCHWARMERS_URL when set, else the bind."""
    if settings.public_url:
        return settings.public_url.rstrip("/")
    if "url" in settings.model_fields_set:
        return settings.url.rstrip("/")
    host, port = settings.host_port()
    return f"http://{f'[{host}]' if ':' in host else host}:{port}"


def serve_workers(settings: Settings, sockets: list[socket.socket], workers: int) -> None:
    """N worker processes on the bound sockets, started and restarted by uvicorn's process manager
    (server/supervisor.py: a worker that fails its start-up after the bench has served is started again).

    Each worker builds its app from the environment (`app_from_environment`), so what this command
    decided is put there first: the bind (verdict hints name it) and the metrics folder every worker
    writes its figures to. The database is migrated here, once, before any worker opens it (when it
    can be reached: otherwise by the first worker to open it).
    """
    from benchwarmers.server import listen
    from benchwarmers.server.supervisor import Supervisor

    os.environ["BENCH_BIND"] = settings.bind
    # The workers accept from one shared socket, and libuv (uvloop) accepts every waiting connection
    # at once: the first worker awake took 44-61 of 64 connections opened together. One accept per
    # wake-up lets the others take their share (35-39 on the busier one since).
    os.environ.setdefault("UV_TCP_SINGLE_ACCEPT", "1")
    if settings.metrics_dir is None:
        metrics = settings.home / "metrics"
        shutil.rmtree(metrics, ignore_errors=True)  # figures of an earlier run are not this run's
        metrics.mkdir(mode=0o700)
        os.environ["PROMETHEUS_MULTIPROC_DIR"] = str(metrics)
    opened = run(_migrate(settings))
    if not settings.redis_url:
        console.print(
            f"{workers} workers: without BENCHWARMERS_REDIS_URL each counts its own gateway-key rate limits "
            "and provider pacing (see docs/DEPLOY.md)",
            markup=False,
        )
    config = listen.uvicorn_config(
        "benchwarmers.server.app:app_from_environment", settings, factory=True, workers=workers
    )
    supervisor = Supervisor(config, sockets=sockets)
    # The bench opened here: the configuration works, so a worker that fails its start-up later (the
    # database refusing connections for a while) is started again, even before any worker was seen ready.
    supervisor.served = opened
    try:
        supervisor.run()
    finally:
        for sock in sockets:
            sock.close()
    if supervisor.failed_to_start:
        raise typer.Exit(3)  # no worker could start; uvicorn has logged why


async def _migrate(settings: Settings) -> bool:
    """Migrate here, once, before the workers start; whether the bench opened. A database that cannot
    be reached now is no reason not to start: the workers wait for it (server/startup.py), answering
    /healthz and /readyz meanwhile, and the first to open it migrates."""
    from benchwarmers.bench.services import Bench
    from benchwarmers.bench.state import DatabaseUnavailable

    bench = Bench(settings, actor="server")
    try:
        async with bench:
            pass
    except DatabaseUnavailable as exc:
        cause = type(exc.__cause__ or exc).__name__
        console.print(
            f"the database {bench.state.database_address} cannot be reached now ({cause}); "
            "the workers start and wait for it (/readyz says 503 until it answers)",
            markup=False,
        )
        return False
    return True


def bind_failure(host: str, port: int, exc: OSError) -> str:
    where = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    if exc.errno == errno.EADDRINUSE:
        return (
            f"cannot listen on {where}: the port is already in use (by another bench, or another program). "
            "Stop that, or choose another port with --bind or BENCH_BIND."
        )
    if exc.errno == errno.EACCES:
        return f"cannot listen on {where}: permission denied; choose a port above 1023 with --bind or BENCH_BIND."
    return f"cannot listen on {where}: {exc.strerror or type(exc).__name__}; check the host in --bind or BENCH_BIND."
