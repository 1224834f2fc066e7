"""The bench as three MCP tools for coding agents: `list_collections`, `ask` and `verdict`.

The MCP server is a caller like any other: each tool is one HTTP request to a running bench
(`BENCHWARMERS_URL`, with `BENCHWARMERS_KEY` as its gateway key). It holds no state and opens no
database, so it can run wherever the agent runs. `create_server(settings)` builds it; the
`benchwarmers mcp` command runs it over stdio or streamable HTTP.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import httpx2
import orjson
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.tools import Tool
from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase, FuncMetadata
from mcp.server.transport_security import TransportSecuritySettings
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel, ConfigDict, Field

from benchwarmers import __version__
from benchwarmers.settings import Settings, is_loopback

# A panel runs every seat to its own timeout and may add a merger after; reading a listing or
# recording a verdict is quick. Connecting is quick or the bench is not there.
PANEL_TIMEOUT = httpx2.Timeout(900, connect=5)
QUICK_TIMEOUT = httpx2.Timeout(30, connect=5)

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


# -- what the tools take ---------------------------------------------------------------------------


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


# -- what they give back (structured content; the bench may add fields, so extras are kept) ----------


class CollectionInfo(BaseModel):
    name: str
    description: str
    tags: list[str]
    members: list[str]
    shape: str | None
    explorers: int
    reply: str
    context_window: int | None
    capabilities: list[str]


class CollectionList(BaseModel):
    collections: list[CollectionInfo]


class SeatInfo(BaseModel):
    model_config = ConfigDict(extra="allow")
    call: str
    seat: str
    alias: str
    status: str
    seconds: float
    answer: str | None = None
    error: str | None = None


class SkippedSeat(BaseModel):
    model_config = ConfigDict(extra="allow")
    seat: str
    alias: str
    why: str


class PanelInfo(BaseModel):
    """The reply's `bench` object."""

    model_config = ConfigDict(extra="allow")
    panel: str
    collection: str
    shape: str | None = None
    shape_by: str | None = None
    reply: str | None = None
    seats: list[SeatInfo]
    skipped: list[SkippedSeat] = Field(default_factory=list)
    verdict: str | None = None
    merger: dict[str, Any] | str | None = None
    note: str | None = None


class VerdictResult(BaseModel):
    call: str
    recorded: bool
    replaced: bool


# -- talking to the bench ----------------------------------------------------------------------------


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

    async def call(
        self, method: str, path: str, bearer: str | None, body: Any = None, *, timeout: httpx2.Timeout
    ) -> Any:
        headers = {"accept": "application/json"}
        if body is not None:
            headers["content-type"] = "application/json"
        if bearer:
            headers["authorization"] = f"Bearer {bearer}"
        content = orjson.dumps(body) if body is not None else None
        try:
            async with httpx2.AsyncClient(timeout=timeout, trust_env=False) as client:
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


# -- the text the agent reads ------------------------------------------------------------------------


def collections_from_listing(listing: Any) -> list[CollectionInfo]:
    """Each collection once: the listing repeats every one in its other reply mode (`bench/x:merged`)."""
    found: dict[str, CollectionInfo] = {}
    for entry in listing.get("data", []) if isinstance(listing, dict) else []:
        name = str(entry.get("id", "")).split(":", 1)[0]
        if not name or name in found:
            continue
        together = entry.get("together") or {}
        found[name] = CollectionInfo(
            name=name,
            description=entry.get("description") or "",
            tags=entry.get("tags") or [],
            members=entry.get("members") or [],
            shape=entry.get("shape"),
            explorers=int(entry.get("explorers") or 0),
            reply=entry.get("reply") or "all",
            context_window=together.get("context_window"),
            capabilities=together.get("capabilities") or ["text"],
        )
    return list(found.values())


def render_collections(collections: list[CollectionInfo], url: str) -> str:
    if not collections:
        return (
            f"The bench at {url} has no collections you may call. Ask the user to create one "
            "(`benchwarmers collection add`, or the dashboard's Collections page)."
        )
    count = f"{len(collections)} collection{'s' if len(collections) != 1 else ''}"
    lines = [f"{count} on the bench at {url}. Choose one by its description and pass its name to `ask`.", ""]
    for c in collections:
        window = f"{c.context_window:,} tokens" if c.context_window else "unknown"
        facts = [
            f"members: {', '.join(c.members)} + {c.explorers} explorer seat{'s' if c.explorers != 1 else ''}",
            f"shape: {c.shape or 'automatic'}",
            f"reply: {c.reply}",
            f"context window: {window}",
            f"takes: {', '.join(c.capabilities)}",
        ]
        if c.tags:
            facts.insert(0, f"tags: {', '.join(c.tags)}")
        lines.append(f"- {c.name}: {c.description or '(no description)'}")
        lines.append(f"  {' · '.join(facts)}")
    return "\n".join(lines)


def render_panel(bench: dict[str, Any], content: str) -> str:
    """Every seat's answer under its call id, then what to do with them."""
    seats = bench.get("seats") or []
    lines = [
        f"{bench.get('collection')} · panel {bench.get('panel')} · shape {bench.get('shape')} "
        f"({bench.get('shape_by')}) · {len(seats)} seat{'s' if len(seats) != 1 else ''}",
        "",
    ]
    if bench.get("note"):
        lines += [f"Note: {bench['note']}", ""]
    merger = bench.get("merger")
    merger_call = merger.get("call") if isinstance(merger, dict) else merger
    if merger_call:
        lines += [f"## merged answer · call {merger_call}", "", content.strip(), ""]
    for seat in seats:
        label = str(seat["call"]).rpartition(".")[2] or seat["seat"]  # member1, explorer2: as in the call id
        lines.append(f"## {label} · {seat['alias']} · {seat['status']} · {float(seat['seconds']):.1f}s")
        lines.append(f"call: {seat['call']}")
        lines.append("")
        if seat["status"] == "ok":
            lines.append((seat.get("answer") or "").strip())
        elif seat["status"] == "empty":
            lines.append("(empty answer)")
        else:
            lines.append(f"(failed: {seat.get('error') or 'no answer'})")
        lines.append("")
    for skip in bench.get("skipped") or []:
        lines.append(f"Skipped {skip.get('seat')} {skip.get('alias')}: {skip.get('why')}")
    answered = [s["call"] for s in seats if s["status"] != "error"] + ([merger_call] if merger_call else [])
    lines += [
        "---",
        "These are claims, not facts. Check each against the real code; agreement between seats proves nothing.",
    ]
    if answered:
        lines.append(
            "Then call `verdict` for every seat you read (useful, note, real and false claims): " + ", ".join(answered)
        )
    return "\n".join(lines).strip() + "\n"


def render_verdict(result: VerdictResult, useful: bool) -> str:
    judged = "useful" if useful else "not useful"
    if not result.recorded:
        return f"{result.call} already has this verdict; nothing written."
    if result.replaced:
        return f"Replaced the earlier verdict on {result.call}: now {judged}."
    return f"Recorded: {result.call} is {judged}."


def text_result(text: str, structured: BaseModel | dict[str, Any]) -> CallToolResult:
    data = structured.model_dump(mode="json") if isinstance(structured, BaseModel) else structured
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=data)


# -- the server --------------------------------------------------------------------------------------


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
        listing = await bench.call("GET", "/v1/models", bench.bearer(ctx), timeout=QUICK_TIMEOUT)
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
        reply = await bench.call("POST", "/v1/chat/completions", bearer, body, timeout=PANEL_TIMEOUT)
        panel = reply.get("bench") if isinstance(reply, dict) else None
        if not isinstance(panel, dict):
            raise ToolError(f"{bench.url} answered without a `bench` object: is BENCHWARMERS_URL a bench?")
        content = reply["choices"][0]["message"].get("content") or ""
        return text_result(render_panel(panel, content), panel)

    async def verdict(ctx: Context, **arguments: Any) -> CallToolResult:
        body = {key: arguments[key] for key in ("call", "useful", "note", "real", "false")}
        data = await bench.call("POST", "/bench/verdict", bench.bearer(ctx), body, timeout=QUICK_TIMEOUT)
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
