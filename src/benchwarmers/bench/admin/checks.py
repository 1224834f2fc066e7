"""Checks: does each endpoint answer, take its key and list its models; does each model on a
collection answer a one-token call, take an image when it claims to, and what window is known.

Every call goes through the upstream pool like a seat and is classified like one
(`upstream/failures.py`), but a check is not a seat: nothing is recorded in the call log, and no
cooldown, failure streak or alert comes of it. The one thing a check writes is what it learned a
model can do: a model that claims vision and refuses an image (a 400 or 404 to the image call while
the same call without it answers) gets the `learned` fact `input_kinds = ["text"]`, which outranks
the listing and models.dev (`catalog/facts.py`) so it no longer sits image panels; your own
`model set --vision` still outranks it. A later check that sees it take an image forgets it.
Onboarding (`discover add`) runs the same probe on the model it adds.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

import orjson

from benchwarmers.bench.bounds import CHECK_TIMEOUT
from benchwarmers.bench.core.outcomes import SeatOutcome
from benchwarmers.bench.names import close_matches
from benchwarmers.bench.pacing import scopes_of
from benchwarmers.bench.panels.prepare import scrub_outcome
from benchwarmers.bench.panels.run import call_model
from benchwarmers.bench.snapshot import EndpointView, ModelView, Snapshot
from benchwarmers.bench.state import BenchState
from benchwarmers.errors import NotFound
from benchwarmers.redaction import scrub_text
from benchwarmers.store import roster
from benchwarmers.store.changes import record_change
from benchwarmers.upstream.failures import FailureKind, UpstreamFailure
from benchwarmers.upstream.listings import fetch_listing

PROBE_TOKENS = 32
PROMPT = "Reply with the single word OK."
# A 16×16 red square: small, but above the minimum size vision APIs accept.
TINY_PNG = (
    "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAABAAAAAQCAIAAACQkWg2AAAAFklEQVR42mP4z8BAEmIY1TCqYfhqAACQ+f8B8u7o"
    "VwAAAABJRU5ErkJggg=="
)
# An image refused with these means the model cannot see; any other failure proves nothing.
_BLIND = frozenset({FailureKind.bad_request, FailureKind.not_found})


@dataclass
class EndpointCheck:
    name: str
    status: str  # ok | unreachable | auth failed | listing failed | key not set | key not allowed
    reachable: bool | None  # None: not asked
    key: str  # ok | listing ok | rejected | not set | none | not allowed
    listing: str  # "42 models", or why it could not be read
    fix: str = ""


@dataclass
class ModelCheck:
    alias: str
    endpoint: str
    status: str  # ok | broken | empty | rate-limited | cooling | paced | blind | auth failed | unreachable | timeout
    text: str  # how the one-token call went
    vision: str | None = None  # None: it does not claim to see
    window: int | None = None
    window_source: str | None = None
    window_note: str = ""  # a window learned from errors, below what the listing says
    learned: list[str] = field(default_factory=list)  # facts this check recorded
    fix: str = ""
    kind: str | None = None  # the failure kind of the one-token call
    free: bool | None = None  # as the catalog (or your override) says; False: its calls cost money
    note: str = ""  # worth knowing though not a problem: a priced model
    # What is left of its daily and monthly allowances after the check's own call (bench/pacing.py).
    allowances: list[str] = field(default_factory=list)


def _body(model_id: str, content: Any) -> bytes:
    return orjson.dumps(
        {"model": model_id, "stream": False, "max_tokens": 1, "messages": [{"role": "user", "content": content}]}
    )


def _secrets(state: BenchState, snapshot: Snapshot) -> list[str]:
    found = [e.ref.api_key for e in snapshot.endpoints.values() if e.ref.api_key]
    return [*found, state.settings.admin_token] if state.settings.admin_token else found


async def _call(state: BenchState, snapshot: Snapshot, model: ModelView, content: Any, per_call: float) -> SeatOutcome:
    outcome = await call_model(
        state.clients,
        state.pacer,
        snapshot,
        alias=model.alias,
        call=f"check:{model.alias}",
        kind="check",
        body=_body(model.model_id, content),
        seat_timeout=per_call,
        tokens=PROBE_TOKENS,  # a one-token question: paced like any call, never much of a budget
    )
    scrub_outcome(outcome, _secrets(state, snapshot))
    return outcome


def claims_vision(by_source: Mapping[str, Mapping[str, Any]]) -> bool:
    """Your override decides; else any source but a check's own learning saying it takes images."""
    override = by_source.get("override", {}).get("input_kinds")
    if override is not None:
        return "image" in override
    return any("image" in (facts.get("input_kinds") or ()) for src, facts in by_source.items() if src != "learned")


def _window(model: ModelView, by_source: Mapping[str, Mapping[str, Any]]) -> tuple[int | None, str | None, str]:
    """The window the bench uses, its source, and a note when a context error lowered it."""
    window, source = model.facts.get("context_window", (None, None))
    if source != "learned":
        return window, source, ""
    listed = next(((s, by_source[s]["context_window"]) for s in ("listing", "models.dev")
                   if by_source.get(s, {}).get("context_window")), None)  # fmt: skip
    if listed is None:
        return window, source, "learned from a context error"
    return window, source, f"lowered from {listed[1]:,} ({listed[0]}) by a context error"


def _text_fix(model: ModelView, failure: UpstreamFailure, collections: list[str]) -> tuple[str, str]:
    """(status, what to do) for a one-token call that failed."""
    where = ", ".join(collections)
    if failure.kind is FailureKind.rate_limited:
        wait = f"wait {round(failure.retry_after)}s" if failure.retry_after else "wait"
        return "rate-limited", f"{wait} and check again; a model that stays limited is better as an explorer"
    if failure.kind is FailureKind.auth:
        return "auth failed", f"the provider refused the key of {model.endpoint}: see the endpoint's row"
    if failure.kind is FailureKind.timeout:
        return "timeout", "it did not answer in time: check again, or raise `benchwarmers gateway set --seat-timeout`"
    if failure.kind is FailureKind.connection:
        return "unreachable", f"{model.endpoint} cannot be reached: see the endpoint's row"
    if failure.kind is FailureKind.not_found:
        fix = f"{model.endpoint} does not serve it: `benchwarmers endpoint refresh {model.endpoint}`"
        return "broken", fix + (f", and take it off {where}" if where else "")
    return "broken", "it does not answer: read the error" + (
        f"; replace it on {where} if it keeps failing" if where else ""
    )


# Not called at all: a check of a model that is cooling down (or has no slot) proves nothing, so it is no pass.
NOT_CALLED = frozenset({"cooling", "paced"})


def _unanswered_fix(outcome: SeatOutcome, collections: list[str]) -> str:
    """What to do about a one-token call that was not called, or answered with nothing."""
    if outcome.status == "cooling":
        until = time.strftime("%H:%M:%S UTC", time.gmtime(outcome.frees_at)) if outcome.frees_at else "it frees up"
        return f"its provider answered a seat 429: it is not called until {until}; check again then"
    if outcome.status == "paced":
        return "its known rate limits left no slot for the call: check again when it frees up"
    where = ", ".join(collections)
    return "it answered with nothing: an empty answer is no answer" + (
        f"; replace it on {where} if it keeps doing so" if where else ""
    )


def _price_note(model: ModelView, collections: list[str]) -> str:
    if model.free is not False:
        return ""
    if not collections:
        return "priced: the catalog says it is not free: its calls cost money"
    return f"priced: the catalog says it is not free, so every panel on {', '.join(collections)} pays for its calls"


async def _learn_vision(state: BenchState, model: ModelView, sees: bool, learned_kinds: Any) -> list[str]:
    """Record a refused image as text-only; forget that once it takes one. What was written."""
    if sees and learned_kinds is None:
        return []
    if not sees and learned_kinds == ["text"]:
        return []
    after = None if sees else ["text"]
    async with state.write() as conn:
        if sees:
            await roster.clear_fact(conn, model.pk, "input_kinds", "learned")
        else:
            await roster.set_fact(conn, model.pk, "input_kinds", "learned", ["text"])
        await record_change(
            conn,
            actor="check",
            subject="model",
            name=model.alias,
            action="learned",
            before={"input_kinds": learned_kinds},
            after={"input_kinds": after},
        )
    return ["input_kinds: takes images again" if sees else "input_kinds: text only (refused an image)"]


async def probe_model(
    state: BenchState,
    alias: str,
    *,
    per_call: float = CHECK_TIMEOUT,
    record: bool = True,
    collections: list[str] | None = None,
) -> ModelCheck:
    """One model: a one-token call, an image call when it claims vision, the window it is known by."""
    snapshot = await state.snapshot()
    model = snapshot.models[alias]
    async with state.read() as conn:
        rows = await roster.facts_of(conn, model.pk)
    by_source: dict[str, dict[str, Any]] = {}
    for row in rows:
        by_source.setdefault(row["source"], {})[row["fact"]] = row["value"]
    window, window_source, note = _window(model, by_source)
    check = ModelCheck(alias, model.endpoint, "ok", "", window=window, window_source=window_source, window_note=note)
    check.free, check.note = model.free, _price_note(model, collections or [])
    text = await _call(state, snapshot, model, PROMPT, per_call)
    check.allowances = [a.describe() for a in await state.pacer.allowances(scopes_of(snapshot, alias))]
    if text.failure is not None:
        check.kind = text.failure.kind.value
        check.status, check.fix = _text_fix(model, text.failure, collections or [])
        check.text = text.error
    elif text.status in NOT_CALLED:
        check.status, check.text, check.fix = text.status, f"not called: {text.error}", _unanswered_fix(text, [])
    else:
        check.text = f"answered in {text.seconds:.2f}s" + ("" if text.status == "ok" else " (empty)")
        if text.status != "ok":
            check.status, check.fix = "empty", _unanswered_fix(text, collections or [])
    if not claims_vision(by_source):
        return check
    if text.failure is not None or text.status in NOT_CALLED:
        check.vision = "not checked: the text call failed" if text.failure else "not checked: it was not called"
        return check
    image = [
        {"type": "text", "text": "What colour is this image?"},
        {"type": "image_url", "image_url": {"url": TINY_PNG}},
    ]
    seen = await _call(state, snapshot, model, image, per_call)
    if seen.failure is None:
        check.vision = "takes images"
        sees: bool | None = True
    elif seen.failure.kind in _BLIND:
        check.vision = f"refused an image: {seen.error}"
        check.status = "blind"
        check.fix = (
            "it claims vision but refused an image: it no longer sits image panels (`model set --vision` to insist)"
        )
        sees = False
    else:
        check.vision = f"not checked: {seen.error}"
        sees = None
    if record and sees is not None:
        check.learned = await _learn_vision(state, model, sees, by_source.get("learned", {}).get("input_kinds"))
    return check


async def check_endpoint(state: BenchState, endpoint: EndpointView, per_call: float) -> EndpointCheck:
    """Reachability, the key and the listing, from one listing call."""
    if endpoint.key_refused:
        return EndpointCheck(endpoint.name, "key not allowed", None, "not allowed", "not read", endpoint.key_refused)
    key = "none"
    if endpoint.api_key_env and not endpoint.ref.api_key:
        key = "not set"
    elif endpoint.ref.api_key:
        key = "listing ok"

    async def fetch_json(method: str, url: str, body: Any | None) -> Any:
        return await state.upstream.request_json(endpoint.ref, method, url, json=body, timeout=per_call)

    try:
        listed = await fetch_listing(endpoint.kind, endpoint.base_url, fetch_json)
    except UpstreamFailure as failure:
        message = scrub_text(str(failure), _secrets(state, await state.snapshot()))
        if failure.kind in (FailureKind.connection, FailureKind.timeout):
            fix = f"nothing answers at {endpoint.base_url}: is it running, is the URL right?"
            return EndpointCheck(endpoint.name, "unreachable", False, key, message, fix)
        if failure.kind is FailureKind.auth:
            return EndpointCheck(endpoint.name, "auth failed", True, "rejected", message, _key_fix(endpoint))
        fix = f"it answered but gave no listing: check its kind ({endpoint.kind}) and base URL"
        return EndpointCheck(endpoint.name, "listing failed", True, key, message, fix)
    except Exception as exc:  # a listing that is not one: the kind is probably wrong
        fix = f"its listing could not be read: check its kind ({endpoint.kind})"
        return EndpointCheck(endpoint.name, "listing failed", True, key, f"unreadable listing: {exc}", fix)
    if key == "not set":
        return EndpointCheck(endpoint.name, "key not set", True, key, f"{len(listed)} models", _key_fix(endpoint))
    return EndpointCheck(endpoint.name, "ok", True, key, f"{len(listed)} models")


def _key_fix(endpoint: EndpointView) -> str:
    if endpoint.api_key_env:
        return f"put a valid key in ${endpoint.api_key_env} where the bench runs"
    return f"store a valid key: `benchwarmers endpoint remove {endpoint.name}`, then add it again with --api-key"


def _settle_key(endpoint: EndpointCheck, models: Iterable[ModelCheck]) -> None:
    """What the models' calls prove about the key: a refusal, or an answer made with it."""
    mine = [m for m in models if m.endpoint == endpoint.name]
    if endpoint.key in ("not allowed", "not set"):
        return
    if any(m.kind == FailureKind.auth.value for m in mine):
        endpoint.key = "rejected"
        if endpoint.status == "ok":
            endpoint.status, endpoint.fix = "auth failed", "a model call was refused: the key may lack access"
    elif endpoint.key == "listing ok" and any(m.kind is None and m.status not in NOT_CALLED for m in mine):
        endpoint.key = "ok"


def on_collections(snapshot: Snapshot) -> dict[str, list[str]]:
    """alias → the collections it sits on (as member or merger), for every such model."""
    found: dict[str, list[str]] = {}
    for name, collection in sorted(snapshot.collections.items()):
        for alias in [*collection["members"], *([collection["merger"]] if collection["merger"] else [])]:
            if alias in snapshot.models and f"bench/{name}" not in found.get(alias, []):
                found.setdefault(alias, []).append(f"bench/{name}")
    return found


def _targets(snapshot: Snapshot, target: str | None) -> tuple[list[str], list[str]]:
    """(endpoint names, model aliases) a check covers."""
    seated = on_collections(snapshot)
    if target is None:
        aliases = sorted(seated)
        endpoints = {n for n, e in snapshot.endpoints.items() if e.enabled}
        return sorted(endpoints | {snapshot.models[a].endpoint for a in aliases}), aliases
    if target in snapshot.endpoints:
        return [target], sorted(a for a in seated if snapshot.models[a].endpoint == target)
    if target in snapshot.models:
        return [snapshot.models[target].endpoint], [target]
    hint = close_matches(target, [*snapshot.endpoints, *snapshot.models])
    raise NotFound(
        f"no endpoint or model named {target!r}." + (f" Did you mean {', '.join(hint)}?" if hint else ""),
        param="target",
    )


async def run_checks(
    state: BenchState,
    target: str | None = None,
    *,
    per_call: float = CHECK_TIMEOUT,
    record: bool = True,
) -> dict[str, Any]:
    """Check the endpoints and the models on collections (or one endpoint, or one model), all at once."""
    snapshot = await state.snapshot()
    names, aliases = _targets(snapshot, target)
    seated = on_collections(snapshot)
    started = time.monotonic()
    endpoint_checks = await asyncio.gather(*(check_endpoint(state, snapshot.endpoints[n], per_call) for n in names))
    model_checks = await asyncio.gather(
        *(probe_model(state, a, per_call=per_call, record=record, collections=seated.get(a, [])) for a in aliases)
    )
    for endpoint in endpoint_checks:
        _settle_key(endpoint, model_checks)
    problems = sum(e.status != "ok" for e in endpoint_checks) + sum(m.status != "ok" for m in model_checks)
    return {
        "endpoints": [asdict(e) for e in endpoint_checks],
        "models": [{**asdict(m), "collections": seated.get(m.alias, [])} for m in model_checks],
        "problems": problems,
        "seconds": round(time.monotonic() - started, 2),
    }
