"""`benchwarmers serve`: the gateway, the API and the dashboard on one port."""

from __future__ import annotations

import importlib.util

import typer

from benchwarmers.cli.common import console, fail, load_settings
from benchwarmers.settings import is_loopback


def serve(
    bind: str = typer.Option(None, "--bind", help="HOST:PORT to listen on (default BENCH_BIND or 127.0.0.1:8123)"),
) -> None:
    """Serve the bench: OpenAI-compatible gateway, verdicts, API and dashboard."""
    import uvicorn

    from benchwarmers.server.app import create_app

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
    settings.ensure_home()
    console.print(f"Benchwarmers serving on http://{host}:{port}  (data in {settings.home})")
    fast = importlib.util.find_spec("uvloop") is not None and importlib.util.find_spec("httptools") is not None
    uvicorn.run(
        create_app(settings),
        host=host,
        port=port,
        log_level="warning",
        access_log=False,
        loop="uvloop" if fast else "asyncio",
        http="httptools" if fast else "h11",
        timeout_graceful_shutdown=5,
    )
