"""What the tools give back: text the agent reads, and the same as structured content.

The structured models keep fields they do not name, so a bench that adds to its replies still validates.
"""

from __future__ import annotations

from typing import Any

from mcp.types import CallToolResult, TextContent
from pydantic import BaseModel, ConfigDict, Field

ANSWERED = ("ok", "empty")  # seats to judge
NOT_CALLED = ("paced", "cooling", "retired")  # seats whose model the bench did not call: nothing to judge


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


class MergerInfo(SeatInfo):
    """Merged mode's extra call: the seat fields, plus the order it read the answers in and why it merged."""

    order: list[str] = Field(default_factory=list)
    chosen_as: str | None = None


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
    merger: MergerInfo | None = None
    note: str | None = None


class VerdictResult(BaseModel):
    call: str
    recorded: bool
    replaced: bool


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
    merger = bench.get("merger") or None
    if merger and merger["status"] == "ok":
        # `content` is the merger's answer; on a failed merge it is every seat again, so it is left out.
        lines += [f"## merged answer · {merger['alias']} · call {merger['call']}", "", content.strip(), ""]
    if merger and merger.get("chosen_as"):
        # Why this merger, ties included: the evidence's best is often not separated.
        lines += [f"Merger {merger['alias']} chosen as {merger['chosen_as']}.", ""]
    picked = bench.get("picked") or None
    if picked:
        lines += [f"Picked {picked['alias']} (call {picked['call']}) as {picked['why']}.", ""]
    for seat in seats:
        label = str(seat["call"]).rpartition(".")[2] or seat["seat"]  # member1, explorer2: as in the call id
        if seat.get("stands_in_for"):
            label += f" (stand-in for {seat['stands_in_for']})"
        lines.append(f"## {label} · {seat['alias']} · {seat['status']} · {float(seat['seconds']):.1f}s")
        lines.append(f"call: {seat['call']}")
        lines.append("")
        if seat["status"] == "ok":
            lines.append((seat.get("answer") or "").strip())
            for call in seat.get("tool_calls") or ():
                function = call.get("function") or {}
                lines.append(f"→ tool call {function.get('name')}({function.get('arguments')})")
        elif seat["status"] == "empty":
            lines.append("(empty answer)")
        elif seat["status"] == "retired":  # its note says it was not asked, why, and what brings it back
            lines.append(f"({seat.get('error') or 'retired: not asked'})")
        elif seat["status"] in NOT_CALLED:
            lines.append(f"(not called: {seat.get('error')})")
        else:
            lines.append(f"(failed: {seat.get('error') or 'no answer'})")
        if seat.get("truncated_at") is not None:  # ok or empty (a reply cut before its answer began)
            lines.append(
                f"(answer cut at {seat['truncated_at']:,} bytes by the bench's answer cap: the model wrote more)"
            )
        lines.append("")
    for skip in bench.get("skipped") or []:
        lines.append(f"Skipped {skip.get('seat')} {skip.get('alias')}: {skip.get('why')}")
    answered = [s["call"] for s in [*seats, *([merger] if merger else [])] if s["status"] in ANSWERED]
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
