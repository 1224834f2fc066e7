"""Keeping the catalog true: each endpoint's listing and models.dev, and what changed between refreshes.

A refresh records every listed model with each source's facts, writing only values that changed (so
a fact's `learned_at` says when that value was learned). A model missing from its listing is marked
gone, never deleted. A transition raises one alert: free → priced (`went_paid`), newly deprecated or
gone (`retiring`), a new `created`, fingerprint, window or price (`possibly_changed`). A source that
fails keeps its last good facts: a listing that cannot be read leaves the endpoint's facts as they
were; a failed models.dev fetch keeps the cached copy at
`$BENCHWARMERS_HOME/models-dev.json`, else the snapshot bundled with the `models-dev` package. The
providers' free tiers (catalog/free_tiers.py) are fetched beside models.dev and recorded with each listing
as the `free_tier` source; a failed fetch keeps `$BENCHWARMERS_HOME/free-tiers.json`, else the shipped file.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from sqlalchemy.ext.asyncio import AsyncConnection

from benchwarmers.bench.admin.aliases import listed_alias
from benchwarmers.bench.evidence.identity import identity_change, raise_change
from benchwarmers.bench.names import suggest
from benchwarmers.bench.providers import catalog_of, models_dev_cache
from benchwarmers.bench.snapshot import endpoint_key, key_refusal
from benchwarmers.catalog import free_tiers
from benchwarmers.catalog.facts import ListedModel, effective, listed_facts
from benchwarmers.catalog.modelsdev import MODELS_DEV_URL, fetch_live, load_catalog, provider_for
from benchwarmers.errors import InvalidRequest, NotFound
from benchwarmers.settings import Settings
from benchwarmers.store import alerts as alert_rows
from benchwarmers.store import gateway_settings as setting_rows
from benchwarmers.store import roster
from benchwarmers.store.changes import record_change
from benchwarmers.upstream.chat_wire import EndpointRef
from benchwarmers.upstream.failures import FailureKind, UpstreamFailure
from benchwarmers.upstream.kinds import endpoint_kind
from benchwarmers.upstream.listings import fetch_listing

if TYPE_CHECKING:
    from benchwarmers.bench.state import BenchState

log = logging.getLogger("benchwarmers.refresh")

FREE_TIERS_CACHE = "free-tiers.json"
FREE_TIERS_SOURCE = "free tiers"  # how a refresh names the free-tier file's fetch
LAST_RUN_KEY = "catalog_refresh"  # settings row: when the catalog was last refreshed, and what failed
# The sources a refresh owns; the user's overrides and learned facts are never touched here.
CATALOG_SOURCES = ("listing", "free_tier", "models.dev")
_MODELS_DEV_REF = "models.dev"
_WENT_PAID = "{alias} was free and now has a price; it leaves the explorer pool until you acknowledge this alert"
_SKIPPED = "explorers skip it, and collections that name it still call it"
_GONE = "{alias} is gone from {endpoint}'s listing; " + _SKIPPED
_DEPRECATED = "{alias} is deprecated ({when}); " + _SKIPPED

Progress = Callable[[str, "SourceResult | None"], None]


@dataclass(frozen=True)
class SourceResult:
    """How refreshing one source went: `source` is "models.dev" or an endpoint's name."""

    source: str
    ok: bool
    detail: str
    summary: dict[str, Any] | None = None


def free_tiers_of(settings: Settings) -> free_tiers.FreeTiers:
    """The free tiers in use: the fetched copy (else the shipped file), the user's own file over it."""
    try:
        return free_tiers.load(settings.home / FREE_TIERS_CACHE, settings.free_tiers_file)
    except free_tiers.FreeTierError as exc:
        raise InvalidRequest(f"{exc}. Fix the file or unset BENCHWARMERS_FREE_TIERS_FILE", param="free_tiers") from None


def endpoint_host(base_url: str) -> str | None:
    """An endpoint's host[:port], as a free-tier entry's `hosts` names it."""
    parts = urlsplit(base_url)
    if not parts.hostname:
        return None
    return f"{parts.hostname}:{parts.port}" if parts.port else parts.hostname


def free_tier_facts(tiers: free_tiers.FreeTiers, model_id: str, provider: str | None, base_url: str) -> dict[str, Any]:
    """What the `free_tier` source says of one model of an endpoint ({} when no entry covers it)."""
    tier = tiers.lookup(model_id, provider, endpoint_host(base_url))
    return tier.facts() if tier is not None else {}


def catalog_origin(settings: Settings) -> str:
    """ "cached" when the live copy is in use, "bundled" when it is missing or unreadable."""
    # load_catalog falls back to the one bundled instance, so identity tells which is in use.
    return "bundled" if catalog_of(settings) is load_catalog(None) else "cached"


# -- one endpoint --------------------------------------------------------------------------------


async def refresh_endpoint(state: BenchState, name: str, *, actor: str | None = None) -> dict[str, Any]:
    """Read the endpoint's listing (an `llm` endpoint's: the models llm's plugins reach) and record it.
    On failure the error is noted on the endpoint, its facts stay as they were, and an UpstreamFailure
    says why (an unreadable listing included)."""
    async with state.read() as conn:
        row = await roster.get_endpoint(conn, name)
        if row is None:
            names = [r["name"] for r in await roster.list_endpoints(conn)]
            raise NotFound(f"no endpoint named {name!r}.{suggest(name, names)}", param="name")
    allowed = state.settings.key_env_names
    refused = key_refusal(row, allowed)
    if refused:
        # An endpoint added before the rule: its variable is never read, nor the listing asked for without it.
        async with state.write() as conn:
            await roster.update_endpoint(conn, row["id"], refresh_error=refused[:500])
        raise InvalidRequest(refused, param="api_key_env", code="api_key_env_not_allowed")
    key = endpoint_key(row, state.secrets, allowed)
    ref = EndpointRef(name=name, base_url=row["base_url"], api_key=key, kind=row["kind"])

    async def fetch_json(method: str, url: str, body: Any | None) -> Any:
        return await state.upstream.request_json(ref, method, url, json=body)

    try:
        if not endpoint_kind(row["kind"]).at_url:
            listed = await state.clients.llm_listing()
        else:
            listed = await fetch_listing(row["kind"], row["base_url"], fetch_json)
    except Exception as exc:
        failure = (
            exc
            if isinstance(exc, UpstreamFailure)
            else UpstreamFailure(FailureKind.upstream_error, f"the model listing could not be read: {exc}")
        )
        async with state.write() as conn:
            await roster.update_endpoint(conn, row["id"], refresh_error=str(failure)[:500])
        raise failure from None
    return await record_listing(state, row, listed, actor=actor)


async def _write_source(
    conn: AsyncConnection, pk: int, source: str, old: Mapping[str, Any], new: Mapping[str, Any]
) -> None:
    """Make one source's stored facts equal `new`, touching only what differs."""
    for fact in old.keys() - new.keys():
        await roster.clear_fact(conn, pk, fact, source)
    for fact, value in new.items():
        if fact not in old or old[fact] != value:
            await roster.set_fact(conn, pk, fact, source, value)


def _catalog_view(facts: Mapping[str, Mapping[str, Any]], fact: str) -> Any:
    """What the listing and models.dev together say of a fact (the user's override left out)."""
    found = effective({s: facts.get(s, {}) for s in CATALOG_SOURCES}).get(fact)
    return found[0] if found else None


async def record_listing(
    state: BenchState, endpoint: dict[str, Any], listed: Iterable[ListedModel], *, actor: str | None = None
) -> dict[str, Any]:
    """Record a listing that was read: new models, facts per source, gone models, and alerts."""
    listed = list(listed)
    now = time.time()
    catalog = catalog_of(state.settings)
    tiers = free_tiers_of(state.settings)
    hint = provider_for(endpoint["kind"], endpoint["base_url"])
    counts = {"listed": len(listed), "added": 0, "gone": 0, "went_paid": 0, "retiring": 0, "possibly_changed": 0}
    name = endpoint["name"]
    async with state.write() as conn:
        # Windows learned from errors expire: the listing is read again, and a poisoned or stale value
        # must not outlive it (a real limit is learned again from the next real error).
        await roster.clear_learned(conn, endpoint["id"], "context_window")
        existing = {m["model_id"]: m for m in await roster.models_of_endpoint(conn, endpoint["id"])}
        stored = await roster.stored_facts(conn, endpoint["id"])
        by_id = {m.model_id: m for m in listed}
        for model_id in [*by_id, *(mid for mid in existing if mid not in by_id)]:
            row = existing.get(model_id)
            model = by_id.get(model_id)
            if row is None:
                # Its alias is ENDPOINT/ID (a file path's readable stem), unless the user gave it to another model.
                alias = await roster.free_alias(conn, listed_alias(name, model_id))
                pk = await roster.insert_model(conn, alias=alias, endpoint_id=endpoint["id"], model_id=model_id)
                counts["added"] += 1
            else:
                pk = row["id"]
                if model is not None:
                    await roster.update_model(conn, pk, gone=False, last_seen=now)
                # A model added by hand (`discover add`, never seen listed) is not gone when unlisted.
                elif not row["gone"] and row["last_seen"] is not None:
                    await roster.update_model(conn, pk, gone=True)
                    counts["gone"] += 1
                    message = _GONE.format(alias=row["alias"], endpoint=name)
                    if await _alert(conn, "retiring", row["alias"], now, message):
                        counts["retiring"] += 1
            before = stored.get(pk, {})
            known = catalog.lookup(model_id, hint)
            after = {
                "listing": listed_facts(model) if model is not None else dict(before.get("listing", {})),
                "free_tier": free_tier_facts(tiers, model_id, hint, endpoint["base_url"]),
                "models.dev": listed_facts(known) if known is not None else {},
            }
            for source in CATALOG_SOURCES:
                await _write_source(conn, pk, source, before.get(source, {}), after[source])
            if row is None:
                continue  # a new model has no earlier state to move away from
            alias = row["alias"]
            changed = identity_change(before.get("listing", {}), after["listing"]) if model is not None else None
            if changed:
                await raise_change(conn, alias, changed, now)
                log.info("listing changed: %s: %s", alias, changed)
                counts["possibly_changed"] += 1
            # A free-tier endpoint costs nothing whatever its listing says, so its models never go paid.
            if (
                not endpoint["free_tier"]
                and _catalog_view(before, "free") is True
                and _catalog_view(after, "free") is False
                and await _alert(conn, "went_paid", alias, now, _WENT_PAID.format(alias=alias))
            ):
                counts["went_paid"] += 1
            deprecated = _catalog_view(after, "deprecated")
            if (
                deprecated
                and not _catalog_view(before, "deprecated")
                and await _alert(conn, "retiring", alias, now, _DEPRECATED.format(alias=alias, when=deprecated))
            ):
                counts["retiring"] += 1
        await roster.update_endpoint(conn, endpoint["id"], refreshed_at=now, refresh_error=None)
        await record_change(
            conn, actor=actor or state.actor, subject="endpoint", name=name, action="refresh", after=counts
        )
    return counts


async def _alert(conn: AsyncConnection, kind: str, subject: str, now: float, message: str) -> bool:
    raised = await alert_rows.raise_alert(conn, kind=kind, subject=subject, message=message, now=now) is not None
    if raised:
        log.info("alert %s: %s", kind, subject)
    return raised


# -- models.dev ---------------------------------------------------------------------------------


async def refresh_models_dev(state: BenchState, url: str = MODELS_DEV_URL) -> str:
    """Fetch models.dev's live catalog into the cache: "live" when saved, else what is in use instead
    ("cached" or "bundled"). The next endpoint refresh records its facts."""
    ref = EndpointRef(name=_MODELS_DEV_REF, base_url=url, api_key=None)

    async def fetch_json(method: str, _official_url: str, body: Any | None) -> Any:
        # fetch_live asks for models.dev's own URL; a mirror (or a test server) may stand in for it.
        return await state.upstream.request_json(ref, method, url, json=body, timeout=60.0)

    try:
        saved = await fetch_live(fetch_json, models_dev_cache(state.settings))
    finally:
        state.upstream.forget(_MODELS_DEV_REF)  # once a day: no idle connection kept for it
    return "live" if saved else catalog_origin(state.settings)


async def refresh_free_tiers(state: BenchState, url: str) -> bool:
    """Fetch the free-tier file into the cache (validated first): True when saved. The next endpoint
    refresh records its facts."""
    ref = EndpointRef(name=FREE_TIERS_SOURCE, base_url=url, api_key=None)

    async def fetch_json(method: str, _url: str, body: Any | None) -> Any:
        return await state.upstream.request_json(ref, method, url, json=body, timeout=30.0)

    try:
        return await free_tiers.fetch_live(fetch_json, url, state.settings.home / FREE_TIERS_CACHE)
    finally:
        state.upstream.forget(FREE_TIERS_SOURCE)


# -- everything ---------------------------------------------------------------------------------


async def refresh_all(
    state: BenchState,
    *,
    models_dev_url: str | None = MODELS_DEV_URL,
    only: Iterable[str] | None = None,
    actor: str | None = None,
    progress: Progress | None = None,
) -> list[SourceResult]:
    """models.dev first (its facts are recorded with each listing), then every enabled endpoint (or
    those in `only`). One failed source never stops the others; `models_dev_url=None` skips the
    live fetch and uses the cached or bundled catalog."""
    results: list[SourceResult] = []

    def report(result: SourceResult) -> None:
        results.append(result)
        if progress is not None:
            progress(result.source, result)

    if progress is not None:
        progress("models.dev", None)
    if models_dev_url:
        origin = await refresh_models_dev(state, models_dev_url)
        detail = "live catalog saved" if origin == "live" else f"could not be fetched; using the {origin} catalog"
        report(SourceResult("models.dev", origin == "live", detail))
        # Online: the free-tier file too (BENCHWARMERS_FREE_TIERS_URL; empty = never fetched).
        if state.settings.free_tiers_url:
            if progress is not None:
                progress(FREE_TIERS_SOURCE, None)
            saved = await refresh_free_tiers(state, state.settings.free_tiers_url)
            kept = "the fetched copy" if (state.settings.home / FREE_TIERS_CACHE).exists() else "the shipped file"
            report(SourceResult(FREE_TIERS_SOURCE, saved, "saved" if saved else f"could not be fetched; using {kept}"))
    else:
        report(SourceResult("models.dev", True, f"not fetched; using the {catalog_origin(state.settings)} catalog"))
    if only is None:
        async with state.read() as conn:
            names = [e["name"] for e in await roster.list_endpoints(conn) if e["enabled"]]
    else:
        names = list(only)
    for name in names:
        if progress is not None:
            progress(name, None)
        try:
            summary = await refresh_endpoint(state, name, actor=actor)
        except Exception as exc:  # one source failing keeps its last good facts; the rest go on
            log.warning("refresh of %s failed: %s", name, exc)
            report(SourceResult(name, False, str(exc) or type(exc).__name__))
        else:
            report(SourceResult(name, True, describe(summary), summary))
    await _remember_run(state, results)
    return results


def describe(summary: Mapping[str, Any]) -> str:
    text = f"{summary['listed']} models listed, {summary['added']} new, {summary['gone']} gone"
    labels = (("went_paid", "went paid"), ("retiring", "retiring"), ("possibly_changed", "possibly changed"))
    extra = [f"{summary[k]} {label}" for k, label in labels if summary.get(k)]
    return ", ".join([text, *extra])


async def _remember_run(state: BenchState, results: list[SourceResult]) -> None:
    # Bookkeeping for the scheduler, not configuration: no change record (no snapshot reload).
    value = {"at": time.time(), "failed": [r.source for r in results if not r.ok]}
    async with state.write() as conn:
        await setting_rows.put_setting(conn, LAST_RUN_KEY, value)


async def last_refresh(conn: AsyncConnection) -> float | None:
    """When the catalog was last refreshed: a full refresh, or failing that the newest endpoint refresh."""
    stored = await setting_rows.get_setting(conn, LAST_RUN_KEY, {})
    newest = await roster.newest_endpoint_refresh(conn)
    known = [t for t in ((stored or {}).get("at"), newest) if t is not None]
    return max(known) if known else None
