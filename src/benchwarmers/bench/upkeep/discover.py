"""Discover: models.dev models worth adding, free first, each marked against the bench.

Marks: `reachable` (an endpoint of yours serves that provider and lists the model), `unlisted` (it serves
the provider, but its listing does not carry the model: the endpoint would answer 404), `unverified` (it
serves the provider by its kind or URL, but its listing was never read: refresh it to know), `on bench`
(that very model, through that provider, is on the roster), `also on bench` (the same model is on the
roster through another provider or under another variant id). Reachability is judged from the endpoint's
actual listing wherever one was read, never from its kind alone (an OpenRouter-kind proxy may list a few
models). `add` puts a reachable or unverified model on the roster with models.dev's facts and probes it;
its endpoint's next refresh confirms it (a hand-added model is never marked gone for being unlisted).
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from benchwarmers.bench.admin.aliases import listed_alias
from benchwarmers.bench.admin.checks import probe_model
from benchwarmers.bench.admin.models import model_detail
from benchwarmers.bench.admin.refresh import free_tier_facts, free_tiers_of
from benchwarmers.bench.names import close_matches
from benchwarmers.bench.presets import for_provider
from benchwarmers.bench.providers import catalog_of, endpoint_provider
from benchwarmers.catalog.facts import listed_facts
from benchwarmers.catalog.modelsdev import DiscoverEntry, ModelsDev, normalise_id
from benchwarmers.errors import Conflict, InvalidRequest, NotFound
from benchwarmers.store import roster
from benchwarmers.store.changes import record_change

if TYPE_CHECKING:
    from benchwarmers.bench.snapshot import Snapshot
    from benchwarmers.bench.state import BenchState
    from benchwarmers.catalog.free_tiers import FreeTiers

ONBOARD_TIMEOUT = 20.0  # seconds per probe call when a model is added


@dataclass(frozen=True)
class Found:
    entry: DiscoverEntry
    reachable: str | None  # the endpoint that serves its provider (and lists it, when its listing was read)
    on_bench: str | None  # the roster alias of this very model
    also_on_bench: tuple[str, ...]  # the same model through another provider or id
    unlisted: str | None = None  # the endpoint serving its provider whose listing lacks it
    verified: bool = True  # False: `reachable` is judged from the endpoint's kind, its listing never read

    @property
    def marks(self) -> list[str]:
        marks = ["reachable"] if self.reachable else []
        if self.reachable and not self.verified:
            marks.append("unverified")
        if self.unlisted:
            marks.append("unlisted")
        if self.on_bench:
            marks.append("on bench")
        if self.also_on_bench:
            marks.append("also on bench")
        return marks


def _reach(catalog: ModelsDev, snapshot: Snapshot) -> dict[str, list[str]]:
    """models.dev provider → the enabled endpoints (by name) that serve it."""
    reach: dict[str, list[str]] = {}
    for name in sorted(snapshot.endpoints):
        endpoint = snapshot.endpoints[name]
        provider = endpoint_provider(catalog, endpoint) if endpoint.enabled else None
        if provider is not None:
            reach.setdefault(provider, []).append(name)
    return reach


def mark(
    catalog: ModelsDev, snapshot: Snapshot, entries: list[DiscoverEntry], listed: frozenset[str] = frozenset()
) -> list[Found]:
    """`listed`: the endpoints whose listing was read (refreshed without an error): for them, a model
    is reachable only if it is on their roster (listed, or added by hand)."""
    reach = _reach(catalog, snapshot)
    exact: dict[tuple[str, str], str] = {}
    same: dict[str, list[str]] = {}
    serves: dict[str, set[str]] = {}
    for alias, model in sorted(snapshot.models.items()):
        provider = endpoint_provider(catalog, snapshot.endpoints[model.endpoint])
        if provider is not None:
            exact.setdefault((provider, model.model_id.lower()), alias)
        if not model.gone:
            serves.setdefault(model.endpoint, set()).add(model.model_id.lower())
        same.setdefault(normalise_id(model.model_id), []).append(alias)
    found = []
    for entry in entries:
        on_bench = exact.get((entry.provider_id, entry.model_id.lower()))
        also = tuple(a for a in same.get(normalise_id(entry.model_id), ()) if a != on_bench)
        # The first endpoint whose listing carries it; else one whose listing was never read; else none.
        candidates = reach.get(entry.provider_id, [])
        lists = [e for e in candidates if e not in listed or entry.model_id.lower() in serves.get(e, ())]
        lists.sort(key=lambda e: e not in listed)
        if lists:
            found.append(Found(entry, lists[0], on_bench, also, verified=lists[0] in listed))
        else:
            found.append(Found(entry, None, on_bench, also, unlisted=candidates[0] if candidates else None))
    # Free first (the catalog's order), then what you can reach; otherwise the catalog's order.
    return sorted(found, key=lambda f: (not f.entry.free, f.reachable is None))


def found_public(found: Found, tiers: FreeTiers | None = None) -> dict[str, Any]:
    """One found model as shown; `free_tier` is its provider's free-tier entry (limits, data use, source
    and date) when the free-tier file has one."""
    entry = found.entry
    tier = tiers.lookup(entry.model_id, entry.provider_id) if tiers is not None else None
    return {
        "id": f"{entry.provider_id}/{entry.model_id}",
        "provider": entry.provider_id,
        "provider_name": entry.provider_name,
        "model": entry.model_id,
        "name": entry.name,
        "family": entry.family,
        "context_window": entry.context_window,
        "vision": entry.vision,
        "free": entry.free,
        "marks": found.marks,
        "reachable": found.reachable,
        "verified": found.verified,
        "unlisted": found.unlisted,
        "on_bench": found.on_bench,
        "also_on_bench": list(found.also_on_bench),
        "free_tier": tier.fact() if tier is not None else None,
        "tags": sorted(tier.traits) if tier is not None else [],
    }


async def discover(
    state: BenchState,
    *,
    free: bool = False,
    vision: bool = False,
    min_context: int | None = None,
    provider: str | None = None,
    limit: int | None = None,
) -> list[dict[str, Any]]:
    """The list, filtered as asked; `limit` 0 or None = all."""
    catalog = catalog_of(state.settings)
    if provider is not None and provider not in catalog.provider_ids():
        raise NotFound(_no_provider(provider, catalog), param="provider")
    entries = catalog.models(free_only=free, vision_only=vision, min_context=min_context)
    if provider is not None:
        entries = [e for e in entries if e.provider_id == provider]
    found = mark(catalog, await state.snapshot(), entries, await listed_endpoints(state))
    tiers = free_tiers_of(state.settings)
    return [found_public(f, tiers) for f in (found[:limit] if limit else found)]


async def listed_endpoints(state: BenchState) -> frozenset[str]:
    """Endpoints whose listing was read: refreshed, and the last refresh did not fail."""
    async with state.read() as conn:
        rows = await roster.list_endpoints(conn)
    return frozenset(r["name"] for r in rows if r["refreshed_at"] and not r["refresh_error"])


def _no_provider(provider: str, catalog: ModelsDev) -> str:
    hint = close_matches(provider, catalog.provider_ids())
    return f"models.dev has no provider {provider!r}." + (f" Did you mean {', '.join(hint)}?" if hint else "")


def _how_to_reach(provider: str, catalog: ModelsDev) -> str:
    preset = for_provider(provider)
    if preset is not None:
        return f"benchwarmers endpoint add {preset.name} --preset {preset.name}"
    entry = next((p for p in catalog.providers() if p.provider_id == provider), None)
    base = entry.api_base if entry and entry.api_base else "BASE_URL"
    env = f" --api-key-env {entry.env[0]}" if entry and entry.env else ""
    return f"benchwarmers endpoint add {provider} --base-url {base}{env}"


async def add(state: BenchState, target: str, *, actor: str | None = None, probe: bool = True) -> dict[str, Any]:
    """Put PROVIDER/MODEL on the roster through the endpoint that reaches PROVIDER, then probe it
    (`check`: what the probe found)."""
    provider, _, model_id = target.strip().partition("/")
    if not provider or not model_id:
        raise InvalidRequest(f"{target!r} is not PROVIDER/MODEL, e.g. openrouter/qwen/qwen3-coder:free", param="model")
    catalog = catalog_of(state.settings)
    if provider not in catalog.provider_ids():
        raise NotFound(_no_provider(provider, catalog), param="model")
    match = catalog.match(model_id, provider)
    if match is None or match.how != "provider":
        ids = [e.model_id for e in catalog.models(include_deprecated=True) if e.provider_id == provider]
        hint = close_matches(model_id, ids)
        raise NotFound(
            f"models.dev lists no {model_id!r} under {provider}."
            + (f" Did you mean {', '.join(f'{provider}/{h}' for h in hint)}?" if hint else ""),
            param="model",
        )
    model_id = match.model_id
    snapshot = await state.snapshot()
    found = mark(catalog, snapshot, [_entry(catalog, provider, model_id)], await listed_endpoints(state))[0]
    if found.on_bench:
        raise Conflict(f"{provider}/{model_id} is on the bench already as {found.on_bench}", param="model")
    if found.unlisted:
        raise InvalidRequest(
            f"{provider}/{model_id} is not reachable: {found.unlisted} serves {provider}, but its listing does not "
            f"carry {model_id}, so it would answer 404. Refresh {found.unlisted} if it should "
            f"(benchwarmers endpoint refresh {found.unlisted}), or add an endpoint that lists it",
            param="model",
            code="not_listed",
        )
    if found.reachable is None:
        raise InvalidRequest(
            f"{provider}/{model_id} is not reachable: no endpoint of yours serves {provider}. "
            f"Add one first: {_how_to_reach(provider, catalog)}",
            param="model",
            code="not_reachable",
        )
    endpoint = snapshot.endpoints[found.reachable]
    alias = listed_alias(endpoint.name, model_id)
    known = catalog.lookup(model_id, provider)
    facts = listed_facts(known) if known is not None else {}
    tier_facts = free_tier_facts(free_tiers_of(state.settings), model_id, provider, endpoint.base_url)
    async with state.write() as conn:
        if await roster.get_model(conn, alias) is not None:
            raise Conflict(f"{alias} is on the roster already", param="model")
        pk = await roster.insert_model(conn, alias=alias, endpoint_id=endpoint.id, model_id=model_id)
        await roster.update_model(conn, pk, last_seen=None)  # never seen in a listing (see refresh)
        for fact, value in facts.items():
            await roster.set_fact(conn, pk, fact, "models.dev", value)
        for fact, value in tier_facts.items():
            await roster.set_fact(conn, pk, fact, "free_tier", value)
        await record_change(
            conn,
            actor=actor or state.actor,
            subject="model",
            name=alias,
            action="create",
            after={"from": f"{provider}/{model_id}", "endpoint": endpoint.name, "at": time.time(), **facts},
        )
    # Onboarding probes it like `benchwarmers check`, and records what it learns (a refused image).
    check = asdict(await probe_model(state, alias, per_call=ONBOARD_TIMEOUT)) if probe else None
    return {**await model_detail(state, alias), **({"check": check} if check else {})}


def _entry(catalog: ModelsDev, provider: str, model_id: str) -> DiscoverEntry:
    """A stand-in entry for marking one model (deprecated or not text-only models included)."""
    names = {p.provider_id: p for p in catalog.providers()}
    info = names[provider]
    known = catalog.lookup(model_id, provider)
    return DiscoverEntry(
        provider_id=provider,
        provider_name=info.name,
        api_base=info.api_base,
        env=info.env,
        model_id=model_id,
        name=(known.display_name if known else None) or model_id,
        family=known.family if known else None,
        context_window=known.context_window if known else None,
        vision=bool(known and known.vision),
        free=bool(known and known.free),
    )
