"""The MCP server: the three tools, described for the agent that reads them, over one `BenchCaller`."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.tools import Tool
from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase, FuncMetadata
from mcp.server.transport_security import TransportSecuritySettings
from mcp.types import CallToolResult, ToolAnnotations
from pydantic import BaseModel, Field

from benchwarmers import __version__
from benchwarmers.mcp.caller import PANEL_TIMEOUT, QUICK_TIMEOUT, BenchCaller
from benchwarmers.mcp.replies import (
    CollectionList,
    PanelInfo,
    VerdictResult,
    collections_from_listing,
    render_collections,
    render_panel,
    render_verdict,
    text_result,
)
from benchwarmers.settings import Settings, is_loopback

INSTRUCTIONS = """\
Benchwarmers is a bench of LLMs. `ask` sends one prompt to a collection of models and returns every \
seat's answer, each with a call id. The method: pick a collection by its description \
(`list_collections`), send one self-contained prompt (`ask`), check every claim against the real \
code, then post a `verdict` for every seat you read. Agreement between seats is not a verdict: \
models fail together. Verdicts decide which models are seated next."""

LIST_DESCRIPTION = """\
List the bench's collections: the names `ask` takes. Each has a description of what it is for, tags, \
its member models, its task shape (or automatic), how many explorer seats the bench adds, the \
smallest context window among its members, and whether every member takes images.

Call this before `ask` and choose the collection whose description fits your task; do not guess \
names. A prompt larger than a collection's context window is refused."""

ASK_DESCRIPTION = """\
Ask a collection of models the same question. Every seat's answer comes back labelled with its \
model and a call id (failed and empty seats too).

Use it for a second opinion on work you can check: reviewing a change, hunting a bug, a design \
question, listing edge cases. Not for facts you can look up, nor decisions only the user can make. \
A panel can take minutes.

- Send one self-contained prompt. The seats see only this text: no files, no repository, no \
conversation. Paste the code it is about and say what answer you want.
- Answers are claims, not facts. Check each one against the real code before you act on it.
- Agreement between seats is not a verdict: models fail together, so a claim every seat makes is \
still unchecked.
- Then call `verdict` once for every seat whose answer you read, naming the claims that held \
(`real`) and the ones that were wrong (`false`)."""

VERDICT_DESCRIPTION = """\
Record your verdict on one seat's answer, by the call id `ask` gave it. Judge only after checking \
the answer against the real code, never because other seats agreed with it.

Post one verdict for every seat you read: useful or not, a one-line note on why, the claims you \
verified (`real`) and the claims you found wrong (`false`). An empty answer is not useful; failed \
seats are recorded already. Sending the same verdict again writes nothing; a different one \
replaces the earlier verdict."""


class ListArguments(ArgModelBase):
    pass


class AskArguments(ArgModelBase):
    collection: str = Field(description="a collection from list_collections, e.g. bench/reviewers (or reviewers)")
    prompt: str = Field(description="one self-contained prompt: the code or text it is about, and what you want back")
    with_: list[str] | None = Field(
        default=None, alias="with", description="model aliases to seat as well as the members, e.g. groq/kimi-k2"
    )
    merged: bool | None = Field(
        default=None,
        description="true: one merged answer as well as every seat; false: every answer only; "
        "omit for the collection's own setting",
    )
    shape: str | None = Field(
        default=None, description="the task's shape (review, design, enumeration, ...) when the collection has none"
    )


class VerdictArguments(ArgModelBase):
    call: str = Field(description="the seat's call id from ask, e.g. p20261129-231501-7f3a.member1")
    useful: bool = Field(description="did the answer help once checked against the real code?")
    note: str = Field(default="", description="one line on why")
    real: list[str] = Field(default_factory=list, description="claims from the answer that checked out")
    false: list[str] = Field(default_factory=list, description="claims from the answer that were wrong")


def _tool(
    name: str,
    title: str,
    description: str,
    fn: Callable[..., Awaitable[CallToolResult]],
    arguments: type[ArgModelBase],
    output: type[BaseModel],
    annotations: ToolAnnotations,
) -> Tool:
    """A tool from explicit argument and output models: `ask` takes `with`, which no Python
    parameter can be called, so every tool is declared the same way rather than from a signature."""
    return Tool(
        fn=fn,
        name=name,
        title=title,
        description=description,
        parameters=arguments.model_json_schema(by_alias=True),
        fn_metadata=FuncMetadata(arg_model=arguments, output_model=output),
        is_async=True,
        context_kwarg="ctx",
        annotations=annotations,
    )


def create_server(settings: Settings, *, lend_key: bool = True) -> MCPServer:
    """The MCP server for the bench at `settings.url`. `lend_key=False` (a server listening beyond
    loopback) sends only each MCP client's own bearer, never BENCHWARMERS_KEY."""
    bench = BenchCaller(settings.url, settings.key, lend_key=lend_key)

    async def list_collections(ctx: Context) -> CallToolResult:
        listing = await bench.call("GET", "/v1/models", bench.bearer(ctx), wait=QUICK_TIMEOUT)
        collections = collections_from_listing(listing)
        return text_result(render_collections(collections, bench.url), CollectionList(collections=collections))

    async def ask(ctx: Context, **arguments: Any) -> CallToolResult:
        bearer = bench.bearer(ctx)
        collection = arguments["collection"].strip()
        model = collection if collection.startswith("bench/") else f"bench/{collection}"
        options: dict[str, Any] = {}
        if arguments.get("with"):
            options["with"] = arguments["with"]
        if arguments.get("merged") is not None:
            options["reply"] = "merged" if arguments["merged"] else "all"
        if arguments.get("shape"):
            options["shape"] = arguments["shape"]
        body: dict[str, Any] = {"model": model, "messages": [{"role": "user", "content": arguments["prompt"]}]}
        if options:
            body["bench"] = options
        reply = await bench.call("POST", "/v1/chat/completions", bearer, body, wait=PANEL_TIMEOUT)
        panel = reply.get("bench") if isinstance(reply, dict) else None
        if not isinstance(panel, dict):
            raise ToolError(f"{bench.url} answered without a `bench` object: is BENCHWARMERS_URL a bench?")
        choices = reply.get("choices") or [{}]
        content = (choices[0].get("message") or {}).get("content") or ""
        return text_result(render_panel(panel, content), panel)

    async def verdict(ctx: Context, **arguments: Any) -> CallToolResult:
        body = {key: arguments[key] for key in ("call", "useful", "note", "real", "false")}
        data = await bench.call("POST", "/bench/verdict", bench.bearer(ctx), body, wait=QUICK_TIMEOUT)
        result = VerdictResult.model_validate(data)
        return text_result(render_verdict(result, arguments["useful"]), result)

    tools = [
        _tool(
            "list_collections",
            "List the bench's collections",
            LIST_DESCRIPTION,
            list_collections,
            ListArguments,
            CollectionList,
            ToolAnnotations(read_only_hint=True, open_world_hint=False),
        ),
        _tool(
            "ask",
            "Ask a collection of models",
            ASK_DESCRIPTION,
            ask,
            AskArguments,
            PanelInfo,
            ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=True),
        ),
        _tool(
            "verdict",
            "Judge one seat's answer",
            VERDICT_DESCRIPTION,
            verdict,
            VerdictArguments,
            VerdictResult,
            ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False),
        ),
    ]
    return MCPServer(
        "benchwarmers",
        title="Benchwarmers",
        instructions=INSTRUCTIONS,
        version=__version__,
        tools=tools,
        log_level="WARNING",
    )


def transport_security(host: str, port: int) -> TransportSecuritySettings:
    """DNS-rebinding protection for a loopback listener: only its own Host names and local origins.
    Beyond loopback the Host is whatever name reaches it, and every tool call carries a gateway key."""
    if not is_loopback(host):
        return TransportSecuritySettings(enable_dns_rebinding_protection=False)
    named = f"[{host}]" if ":" in host else host
    hosts = {named, "127.0.0.1", "localhost", "[::1]"}
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=sorted(f"{h}:{port}" for h in hosts),
        allowed_origins=sorted(f"http://{h}:{port}" for h in hosts),
    )
