"""A panel, step by step: parse, estimate, shape, seat (running the seats is panels/run.py).

Everything here can refuse a request (it raises BenchError before any model is called).
"""

from __future__ import annotations

import hashlib
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from benchwarmers.bench.core.estimate import Estimate, PromptSize, Ratios
from benchwarmers.bench.core.outcomes import SeatOutcome
from benchwarmers.bench.core.seats import explorer_count, seat_limits
from benchwarmers.bench.names import catalogue, suggest, unknown_shape
from benchwarmers.bench.panels import parse as req
from benchwarmers.bench.panels.pick import check_request
from benchwarmers.bench.panels.seating import Candidate, SeatPlan, Skipped, TagRules, plan_seats
from benchwarmers.bench.snapshot import ModelView, Snapshot
from benchwarmers.errors import Forbidden, InvalidRequest, NotFound, TooLarge
from benchwarmers.redaction import redact_request
from benchwarmers.store.records import Collection
from benchwarmers.upstream.client import ChatBody


@dataclass
class PreparedPanel:
    panel_id: str
    caller: str
    collection: Collection
    model_name: str  # as the caller sent it, e.g. bench/reviewers:merged
    reply: str
    shape: str
    shape_by: str
    plan: SeatPlan
    stored: dict[str, Any]  # the request as it may be written down: images as placeholders
    hidden: tuple[str, ...]  # what its image URLs carried (query strings, passwords): scrubbed everywhere
    chat: ChatBody
    content: req.Content
    estimate: int
    stream: bool
    include_usage: bool
    request_hash: str
    tokens: int = 0  # what a seat reserves under tokens limits: the estimate plus max_tokens
    created: float = field(default_factory=time.time)
    # The decision models' calls, logged like seats but not seats: one, or more when the first failed.
    decisions: tuple[SeatOutcome, ...] = ()
    checks: dict[str, Any] = field(default_factory=dict)  # tools, tool_choice, response_format: what a pick checks
    snapshot: Snapshot | None = None  # the config it was seated with, which it runs with too


PICK_CHECKS = ("tools", "tool_choice", "response_format")


def reserved_tokens(estimate: int, body: dict[str, Any]) -> int:
    """Tokens a call reserves under a tokens limit: the prompt's estimate plus the most it may write
    (`max_completion_tokens` or `max_tokens`, as providers count them when the call arrives)."""
    cap = body.get("max_completion_tokens", body.get("max_tokens"))
    return estimate + (cap if isinstance(cap, int) and not isinstance(cap, bool) and cap > 0 else 0)


def request_hash(body_bytes: bytes | bytearray) -> str:
    return hashlib.sha256(body_bytes).hexdigest()


def _candidate(model: ModelView, shape: str, snapshot: Snapshot, history: Any, size: PromptSize) -> Candidate:
    # The current epoch's evidence (bench/core/epochs.py): what the model is now, not what it was.
    useful, not_useful = history.current.get((model.alias, shape), (0, 0))
    return Candidate(
        alias=model.alias,
        family=model.family,
        free=model.free,
        enabled=model.enabled,
        retiring=model.retiring,
        retired=model.retired,
        went_paid=model.alias in snapshot.went_paid,
        cooldown_until=model.cooldown_until,
        window=model.window,
        # Only a known window is checked, so only then is the model's own estimate worth making.
        prompt=size.tokens_for(model.alias) if model.window is not None else None,
        vision=model.vision,
        last_seated=history.last_seated.get((model.alias, shape)),
        useful=useful,
        not_useful=not_useful,
        tags=model.tags,
    )


def resolve_collection(snapshot: Snapshot, model: Any) -> tuple[Collection, req.ModelName]:
    """The collection a request names, or a refusal that lists every collection."""
    name = req.parse_model_name(model)
    if name is None:
        given = f"model {model!r} is not a collection" if model else "no model was given"
        raise InvalidRequest(
            f"{given}: ask for a collection as bench/<name>. {catalogue(snapshot.collections.values())}",
            param="model",
            code="model_not_collection",
        )
    collection = snapshot.collections.get(name.collection)
    if collection is None:
        raise NotFound(
            f"collection bench/{name.collection} does not exist."
            f"{suggest(name.collection, snapshot.collections, prefix='bench/')}"
            f" {catalogue(snapshot.collections.values())}",
            param="model",
            code="model_not_found",
        )
    return collection, name


@dataclass
class Draft:
    """A request read and checked: everything known before the shape is decided and seats are taken."""

    collection: Collection
    name: req.ModelName
    options: req.BenchOptions
    content: req.Content
    estimate: int  # the kind's default estimate: token pacing, and models with no learned ratio
    request: req.PanelRequest
    size: PromptSize | None = None  # the estimate per model, where a window is checked

    @property
    def body(self) -> dict[str, Any]:
        return self.request.body

    @property
    def sized(self) -> PromptSize:
        if self.size is None:
            return PromptSize.of(self.content.text_chars, self.content.images, self.content.kind, self.estimate, None)
        return self.size

    @property
    def images(self) -> bool:
        return self.content.images > 0


def too_small(
    snapshot: Snapshot, members: Sequence[str], size: PromptSize, *, images: bool = False
) -> list[tuple[str, int, Estimate]]:
    """(alias, window, estimate) of the members whose known window is smaller than their estimate of
    the prompt: a panel with any of them is refused (413); the suite leaves them out and records a
    skip. Only members that would sit are held to their window: on an image request a member that
    cannot (or is not known to) see is skipped as blind first, so its window refuses nothing."""
    found = []
    for alias in members:
        model = snapshot.models.get(alias)
        if model is None or model.window is None or (images and model.vision is not True):
            continue
        estimate = size.for_model(alias)
        if model.window < estimate.tokens:
            found.append((alias, model.window, estimate))
    return found


def too_large_message(small: Sequence[tuple[str, int, Estimate]]) -> str:
    """What a 413 says: each estimate with how it was made, and the windows it is larger than."""
    groups: dict[Estimate, list[str]] = {}
    for alias, window, estimate in small:
        groups.setdefault(estimate, []).append(f"{alias} ({window:,} tokens)")
    parts = [
        f"about {e.tokens:,} tokens ({e.describe()}), larger than the context window of {', '.join(named)}"
        for e, named in groups.items()
    ]
    return (
        f"the prompt is {'; '.join(parts)}. Trim the prompt or pick a collection with larger windows "
        "(GET /v1/models shows each collection's together.context_window)."
    )


def read_request(
    snapshot: Snapshot,
    body: dict[str, Any] | req.PanelRequest,
    direct: Collection | None = None,
    ratios: Ratios | None = None,
) -> Draft:
    """Parse and estimate; refuse what cannot run (unknown collection, bad options, too large).

    `direct` is a collection made for this request (the suite asking models one by one): the body's
    `model` is then not read. `ratios`: each model's characters a token, learned from its usage."""
    request = req.PanelRequest.of(body)
    body = request.body
    if direct is not None:
        collection, name = direct, req.ModelName(collection=direct["name"], suffix=None)
    else:
        collection, name = resolve_collection(snapshot, body.get("model"))
    options = request.options
    req.check_n(body)
    check_request(body)
    content = req.read_content(req.check_messages(body))
    estimate = req.estimate_tokens(content.text_chars, content.images, content.kind)
    size = PromptSize.of(content.text_chars, content.images, content.kind, estimate, ratios)
    if options.shape is not None and options.shape not in snapshot.shapes:
        raise InvalidRequest(
            unknown_shape(options.shape, snapshot.shapes, what="bench.shape"),
            param="bench.shape",
        )
    small = too_small(snapshot, collection["members"], size, images=bool(content.images))
    if small:
        raise TooLarge(too_large_message(small), param="messages", code="context_length_exceeded")
    for alias in options.nominees:
        if alias not in snapshot.models:
            hint = suggest(alias, snapshot.models) or " See GET /api/models for the roster."
            raise InvalidRequest(
                f"bench.with names {alias!r}, which is not on the roster.{hint}",
                param="bench.with",
                code="unknown_model",
            )
    return Draft(
        collection=collection,
        name=name,
        options=options,
        content=content,
        estimate=estimate,
        request=request,
        size=size,
    )


DIRECT = "(direct)"  # the collection name of panels that ask models one by one; no collection has it


def direct_collection(alias: str, snapshot: Snapshot) -> Collection:
    """A one-member collection with no explorers, to ask `alias` alone through a real panel."""
    if alias not in snapshot.models:
        hint = suggest(alias, snapshot.models) or " `benchwarmers model list` shows the roster."
        raise InvalidRequest(f"{alias!r} is not on the roster.{hint}", param="model", code="unknown_model")
    return {
        "name": DIRECT,
        "description": "",
        "tags": [],
        "members": [alias],
        "shape": None,
        "reply": "all",
        "merger": None,
        "max_explorers": 0,
        "max_calls": 1,
        "auto_swap": False,
        "require_tags": [],
        "exclude_tags": [],
        "daily_panels": None,
        "daily_tokens": None,
        "stand_ins": False,
        "created_at": 0.0,
    }


def fixed_shape(draft: Draft) -> tuple[str, str] | None:
    """The shape when something decides it outright; None when it is automatic."""
    if shape := draft.collection.get("shape"):
        return shape, "set on the collection"
    if draft.options.shape:
        return draft.options.shape, "set by the caller"
    if draft.images:
        return "vision", "image request"
    return None


def explorers_to_fill(draft: Draft, snapshot: Snapshot) -> int:
    """Explorer seats a text request will fill (the decision model is asked only when > 0)."""
    members = {a for a in draft.collection["members"] if a in snapshot.models}
    # A retired member's call goes to its stand-in where the collection has them (an estimate: no
    # stand-in may be eligible, which only leaves the decision model asked when it need not be).
    stand_ins = bool(draft.collection.get("stand_ins"))
    called = len([a for a in members if stand_ins or not snapshot.models[a].retired])
    return explorer_count(called, *seat_limits(draft.collection, snapshot.gateway))


def seat_panel(
    draft: Draft,
    *,
    shape: str,
    shape_by: str,
    snapshot: Snapshot,
    history: Any,
    body_hash: str,
    caller: str,
    panel_id: str,
    now: float,
    rng: random.Random,
) -> PreparedPanel:
    collection, body, images, size = draft.collection, draft.body, draft.images, draft.sized
    members: list[Candidate] = []
    missing: list[Skipped] = []
    for alias in collection["members"]:
        model = snapshot.models.get(alias)
        if model is None:
            missing.append(Skipped(seat="member", alias=alias, why="not on the roster any more"))
        else:
            members.append(_candidate(model, shape, snapshot, history, size))
    nominees = [_candidate(snapshot.models[alias], shape, snapshot, history, size) for alias in draft.options.nominees]
    estimate = draft.estimate
    max_explorers, max_calls = seat_limits(collection, snapshot.gateway)
    pool = [_candidate(m, shape, snapshot, history, size) for m in snapshot.models.values()]
    plan = plan_seats(
        members,
        nominees,
        pool,
        estimate=estimate,
        images=images,
        max_explorers=max_explorers,
        max_calls=max_calls,
        now=now,
        rng=rng,
        epsilon=snapshot.gateway.epsilon,
        floor=snapshot.gateway.explorer_floor,
        rules=TagRules(
            frozenset(collection.get("require_tags") or ()), frozenset(collection.get("exclude_tags") or ())
        ),
        stand_ins=bool(collection.get("stand_ins")),
    )
    plan = replace(plan, skipped=tuple(missing) + plan.skipped)
    if images and not plan.seats:
        raise InvalidRequest(
            "no seat on this panel can take images: every member and nominee is blind or not known to "
            "see, and no free vision model is available for an explorer seat. Tick Vision / OCR for a "
            "model that can (`benchwarmers model set ALIAS --vision`) or pick a vision collection.",
            param="messages",
            code="no_vision_seat",
        )
    if not plan.seats:
        raise InvalidRequest(
            f"bench/{collection['name']} has no member that can be asked (see bench.skipped reasons: "
            f"{'; '.join(f'{s.alias}: {s.why}' for s in plan.skipped)}). Edit the collection.",
            param="model",
            code="empty_panel",
        )
    redacted = redact_request(body)
    return PreparedPanel(
        panel_id=panel_id,
        caller=caller,
        collection=collection,
        model_name=str(body["model"]),
        reply=req.reply_mode(draft.options, draft.name, collection.get("reply") or "all", body),
        shape=shape,
        shape_by=shape_by,
        plan=plan,
        stored=redacted.stored,
        hidden=redacted.hidden,
        chat=ChatBody.from_request(body),
        content=draft.content,
        estimate=estimate,
        tokens=reserved_tokens(estimate, body),
        stream=draft.request.stream,
        include_usage=draft.request.include_usage,
        request_hash=body_hash,
        created=now,
        checks={key: body[key] for key in PICK_CHECKS if key in body},
        snapshot=snapshot,
    )


def refuse_nominees_beyond(
    scope: frozenset[str] | None, snapshot: Snapshot, body: dict[str, Any] | req.PanelRequest
) -> None:
    """A gateway key limited to the collections `scope` nominates (`bench.with`) only their members:
    it may not seat the rest of the roster. Refused rather than dropped, so the caller learns its
    request was not what ran; checked before the roster is searched for close matches, so the
    refusal names nothing beyond what the key may call."""
    if scope is None:
        return
    nominees = req.PanelRequest.of(body).options.nominees
    allowed = {m for name in scope if name in snapshot.collections for m in snapshot.collections[name]["members"]}
    for alias in nominees:
        if alias not in allowed:
            named = ", ".join(f"bench/{c}" for c in sorted(scope)) or "none"
            raise Forbidden(
                f"bench.with names {alias!r}, which is not a member of this gateway key's collections ({named}): "
                "a key limited to collections may nominate only their members; leave it out of bench.with",
                param="bench.with",
                code="nominee_not_allowed",
            )
