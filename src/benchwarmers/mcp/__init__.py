"""The bench as three MCP tools for coding agents: `list_collections`, `ask` and `verdict`.

The MCP server is a caller like any other: each tool is one HTTP request to a running bench
(`BENCHWARMERS_URL`, with `BENCHWARMERS_KEY` as its gateway key). It holds no state and opens no
database, so it can run wherever the agent runs. `create_server(settings)` builds it; the
`benchwarmers mcp` command runs it over stdio or streamable HTTP.

- `caller.py`: the HTTP requests to the bench, and its refusals as tool errors;
- `replies.py`: what the tools give back, as text for the agent and as structured content;
- `server.py`: the tools' descriptions and arguments, and the server.
"""

from benchwarmers.mcp.server import create_server, transport_security

__all__ = ["create_server", "transport_security"]
