"""Talking to the bench: one HTTP request per tool call, a refusal or an absent bench as a tool error."""

from __future__ import annotations

from typing import Any

import httpx2
import orjson
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError

# A panel runs every seat to its own timeout and may add a merger after; reading a listing or
# recording a verdict is quick. Connecting is quick or the bench is not there.
PANEL_TIMEOUT = httpx2.Timeout(900, connect=5)
QUICK_TIMEOUT = httpx2.Timeout(30, connect=5)


class BenchCaller:
    """One HTTP request per tool call. A problem reaching the bench, or a refusal from it, becomes a
    ToolError whose text tells the agent what happened and what would fix it."""

    def __init__(self, url: str, key: str | None, *, lend_key: bool = True) -> None:
        self.url = url.rstrip("/")
        self.key = key
        self.lend_key = lend_key

    def bearer(self, ctx: Context) -> str | None:
        """The key to send: the MCP client's own bearer over HTTP, else BENCHWARMERS_KEY — unless this
        server listens beyond loopback, where lending its key would open the bench to the network."""
        request = ctx.request_context.request
        headers = getattr(request, "headers", None)
        if headers is not None:
            scheme, _, token = str(headers.get("authorization", "")).partition(" ")
            if scheme.lower() == "bearer" and token.strip():
                return token.strip()
        if not self.lend_key:
            raise ToolError("send your gateway key to this MCP server as `Authorization: Bearer <key>`")
        return self.key

    async def call(self, method: str, path: str, bearer: str | None, body: Any = None, *, wait: httpx2.Timeout) -> Any:
        headers = {"accept": "application/json"}
        if body is not None:
            headers["content-type"] = "application/json"
        if bearer:
            headers["authorization"] = f"Bearer {bearer}"
        content = orjson.dumps(body) if body is not None else None
        try:
            async with httpx2.AsyncClient(timeout=wait, trust_env=False) as client:
                response = await client.request(method, self.url + path, content=content, headers=headers)
        except httpx2.ConnectError:
            raise ToolError(
                f"no bench is answering at {self.url}. Ask the user to start one with `benchwarmers serve`, "
                "or to set BENCHWARMERS_URL to where it runs."
            ) from None
        except httpx2.TimeoutException:
            raise ToolError(f"the bench at {self.url} did not answer in time ({path})") from None
        except (httpx2.HTTPError, httpx2.InvalidURL) as exc:
            raise ToolError(f"could not reach the bench at {self.url}: {type(exc).__name__}: {exc}") from None
        try:
            data = response.json()
        except ValueError:
            raise ToolError(
                f"{self.url}{path} answered {response.status_code} with a body that is not JSON: "
                "is BENCHWARMERS_URL a bench?"
            ) from None
        if response.status_code != 200:
            raise ToolError(refusal(response.status_code, data))
        return data


def refusal(status: int, data: Any) -> str:
    """The bench's own message, with what to do when it is about the key."""
    error = data.get("error") if isinstance(data, dict) else None
    message = error.get("message") if isinstance(error, dict) else None
    text = f"the bench refused ({status}): {message or orjson.dumps(data).decode()[:300]}"
    if status == 401:
        text += " (set BENCHWARMERS_KEY to a gateway key made on the dashboard's Settings page)"
    return text
