"""`benchwarmers mcp`: the bench's MCP server for coding agents, over stdio or streamable HTTP."""

from __future__ import annotations

import typer

from benchwarmers.cli.common import console, fail, load_settings

DEFAULT_BIND = "127.0.0.1:8124"


def with_port(bind: str, port: int) -> str:
    """`host` → `host:port`, so a bare host means this command's port rather than `serve`'s."""
    bind = bind.strip()
    if bind.startswith("["):
        return bind if "]:" in bind else f"{bind}:{port}"
    if bind.count(":") > 1:  # a bare IPv6 address
        return f"[{bind}]:{port}"
    return bind if ":" in bind else f"{bind}:{port}"


def mcp(
    http: bool = typer.Option(False, "--http", help="serve streamable HTTP at /mcp instead of stdio"),
    bind: str = typer.Option(
        None,
        "--bind",
        help=f"HOST:PORT for --http (default {DEFAULT_BIND}, loopback only; "
        "another host needs BENCHWARMERS_ADMIN_TOKEN)",
    ),
) -> None:
    """MCP tools for agents (list_collections, ask, verdict), calling the bench at BENCHWARMERS_URL."""
    from benchwarmers.mcp import create_server, transport_security
    from benchwarmers.settings import is_loopback, parse_bind

    settings = load_settings()
    if not http:
        if bind:
            raise fail("--bind is for --http; over stdio the MCP client starts this command itself")
        create_server(settings).run("stdio")
        return
    try:
        host, port = parse_bind(with_port(bind or DEFAULT_BIND, 8124))
    except ValueError as exc:
        raise fail(str(exc)) from None
    loopback = is_loopback(host)
    if not loopback and not settings.admin_token:
        raise fail(
            f"refusing to listen on {host}: it is not a loopback address, so anyone who can reach it could "
            "ask your bench. Set BENCHWARMERS_ADMIN_TOKEN (clients then send their own gateway key as "
            "`Authorization: Bearer <key>`), or bind to 127.0.0.1."
        )
    import uvicorn

    server = create_server(settings, lend_key=loopback)
    app = server.streamable_http_app(transport_security=transport_security(host, port), host=host)
    shown = f"[{host}]" if ":" in host else host
    console.print(f"Benchwarmers MCP on http://{shown}:{port}/mcp  (asking the bench at {settings.url})", markup=False)
    uvicorn.run(app, host=host, port=port, log_level="warning", access_log=False, timeout_graceful_shutdown=5)
