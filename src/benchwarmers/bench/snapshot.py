"""The bench's working copy of its configuration: endpoints, models with effective facts, collections.

Loaded once and reused for every request; reloaded only when the changes log has moved on
(a CLI edit, a dashboard edit, another process learning something).
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, cast

from sqlalchemy.ext.asyncio import AsyncConnection

from benchwarmers.bench.key_names import key_env_refusal
from benchwarmers.catalog.facts import effective
from benchwarmers.catalog.families import family_of
from benchwarmers.catalog.free_tiers import under_headers
from benchwarmers.catalog.pace import Limit, known_limits, limits_of
from benchwarmers.nouns.gateway import GatewaySettings, read_stored
from benchwarmers.store import collection_rows as collection_rows
from benchwarmers.store import decisions as decision_rows
from benchwarmers.store import evidence as evidence_rows
from benchwarmers.store import gateway_settings as setting_rows
from benchwarmers.store import roster
from benchwarmers.store.changes import config_version
from benchwarmers.store.records import Collection
from benchwarmers.store.secrets import SecretBox
from benchwarmers.upstream.chat_wire import EndpointRef
from benchwarmers.upstream.kinds import endpoint_kind

EVERY_SHAPE = "*"  # a role pinned for every shape (that has no pin of its own); never a shape's name


@dataclass(frozen=True)
class EndpointView:
    id: int
    name: str
    base_url: str
    kind: str
    free_tier: bool
    enabled: bool
    api_key_env: str | None
    api_key_last4: str | None
    ref: EndpointRef
    key_refused: str | None = None  # why its api_key_env is not read (an endpoint added before the rule)
    limits: tuple[Limit, ...] = ()  # the user's limits for the endpoint as a whole (all its models share them)


@dataclass(frozen=True)
class ModelView:
    pk: int
    alias: str
    endpoint: str
    model_id: str
    enabled: bool
    gone: bool
    cooldown_until: float | None
    failure_streak: int
    facts: dict[str, tuple[Any, str]]  # fact → (value, source), after the precedence rule
    free_tier_endpoint: bool = False
    retired_at: float | None = None  # retired for failing: not asked until a probe or the user restores it
    next_probe_at: float | None = None
    probes: int = 0  # probes that failed since it was retired
    # Reached through the llm library, which is sent text only: images go through the built-in client.
    text_only: bool = False
    # What the model is paced by: the limits its provider announced, with the user's in their place.
    limits: tuple[Limit, ...] = ()

    def fact(self, name: str) -> Any:
        found = self.facts.get(name)
        return found[0] if found else None

    @property
    def window(self) -> int | None:
        return cast("int | None", self.fact("context_window"))

    @property
    def output_cap(self) -> int | None:
        return cast("int | None", self.fact("output_cap"))

    @property
    def concurrency(self) -> int | None:
        """The user's bound on calls at once to this model (`model set --concurrency`), if any."""
        value = self.fact("concurrency")
        return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None

    @property
    def vision(self) -> bool | None:
        if self.text_only:
            return False
        kinds = self.fact("input_kinds")
        return None if kinds is None else "image" in kinds

    @property
    def free(self) -> bool | None:
        override = self.facts.get("free")
        if override and override[1] == "override":
            return bool(override[0])
        if self.free_tier_endpoint:
            return True
        return cast("bool | None", self.fact("free"))

    @property
    def family(self) -> str | None:
        return self.fact("family") or family_of(self.model_id)

    @property
    def tags(self) -> frozenset[str]:
        """Its provider's traits as tags (`trains-on-prompts`...): collections may require or exclude them."""
        value = self.fact("tags")
        return frozenset(str(t) for t in value) if isinstance(value, list) else frozenset()

    @property
    def retiring(self) -> bool:
        return self.gone or bool(self.fact("deprecated"))

    @property
    def retired(self) -> bool:
        return self.retired_at is not None

    def cooling(self, now: float) -> bool:
        return self.cooldown_until is not None and self.cooldown_until > now


@dataclass
class Snapshot:
    version: int
    endpoints: dict[str, EndpointView] = field(default_factory=dict)
    models: dict[str, ModelView] = field(default_factory=dict)
    collections: dict[str, Collection] = field(default_factory=dict)
    gateway: GatewaySettings = field(default_factory=GatewaySettings)
    shapes: dict[str, str] = field(default_factory=dict)
    went_paid: frozenset[str] = frozenset()
    decision_models: list[dict[str, Any]] = field(default_factory=list)
    roles: dict[str, dict[str, str]] = field(default_factory=dict)  # role → shape (or EVERY_SHAPE) → alias
    loaded_at: float = field(default_factory=time.time)

    def pinned(self, role: str, shape: str = EVERY_SHAPE) -> str | None:
        """The model pinned as `role` for `shape`, else the one pinned for every shape."""
        by_shape = self.roles.get(role, {})
        return by_shape.get(shape) or by_shape.get(EVERY_SHAPE)


def key_refusal(row: dict[str, Any], allowed: Iterable[str]) -> str | None:
    """Why the endpoint's key variable may not be read (see bench/key_names.py), or None."""
    return key_env_refusal(row["api_key_env"], allowed) if row.get("api_key_env") else None


def endpoint_key(row: dict[str, Any], secrets: SecretBox, allowed: Iterable[str]) -> str | None:
    """The endpoint's API key: from its environment variable (when the rule lets it be read), else the
    stored (encrypted) one."""
    if row.get("api_key_env"):
        if key_refusal(row, allowed):
            return None
        return os.environ.get(row["api_key_env"]) or None
    if row.get("api_key_enc"):
        return secrets.decrypt(row["api_key_enc"])
    return None


async def load_snapshot(conn: AsyncConnection, secrets: SecretBox, allowed_key_envs: Iterable[str]) -> Snapshot:
    version = await config_version(conn)
    snapshot = Snapshot(version=version)
    by_id: dict[int, EndpointView] = {}
    for row in await roster.list_endpoints(conn):
        view = EndpointView(
            id=row["id"],
            name=row["name"],
            base_url=row["base_url"],
            kind=row["kind"],
            free_tier=bool(row["free_tier"]),
            enabled=bool(row["enabled"]),
            api_key_env=row["api_key_env"],
            api_key_last4=row["api_key_last4"],
            ref=EndpointRef(
                name=row["name"],
                base_url=row["base_url"],
                api_key=endpoint_key(row, secrets, allowed_key_envs),
                kind=row["kind"],
            ),
            key_refused=key_refusal(row, allowed_key_envs),
            limits=tuple(sorted(limits_of(row.get("rate_limits")).values())),
        )
        snapshot.endpoints[view.name] = view
        by_id[view.id] = view
    facts = roster.group_facts(await roster.all_facts(conn))
    for row in await roster.list_models(conn):
        by_source = {
            source: {fact: value for fact, (value, _at) in values.items()}
            for source, values in facts.get(row["id"], {}).items()
        }
        endpoint = by_id[row["endpoint_id"]]
        snapshot.models[row["alias"]] = ModelView(
            pk=row["id"],
            alias=row["alias"],
            endpoint=endpoint.name,
            model_id=row["model_id"],
            enabled=bool(row["enabled"]) and endpoint.enabled,
            gone=bool(row["gone"]),
            cooldown_until=row["cooldown_until"],
            failure_streak=row["failure_streak"] or 0,
            facts=effective(by_source),
            free_tier_endpoint=endpoint.free_tier,
            retired_at=row["retired_at"],
            next_probe_at=row["next_probe_at"],
            probes=row["probes"] or 0,
            text_only=endpoint_kind(endpoint.kind).text_only,
            # Known before the first call: the free-tier file's limits, under the headers', under the user's.
            limits=known_limits(
                under_headers(
                    by_source.get("free_tier", {}).get("rate_limits"), by_source.get("headers", {}).get("rate_limits")
                ),
                by_source.get("override", {}).get("rate_limits"),
            ),
        )
    snapshot.collections = {c["name"]: c for c in await collection_rows.list_collections(conn)}
    snapshot.gateway = read_stored(await setting_rows.get_setting(conn, "gateway", {}))
    snapshot.shapes = await setting_rows.shapes(conn)
    snapshot.went_paid = frozenset(await setting_rows.unacknowledged_subjects(conn, "went_paid"))
    snapshot.decision_models = await decision_rows.list_decision_models(conn)
    for row in await evidence_rows.list_roles(conn):
        snapshot.roles.setdefault(row["role"], {})[row["shape"]] = row["alias"]
    return snapshot
