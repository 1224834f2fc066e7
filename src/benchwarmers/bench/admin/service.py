"""Changing the bench: endpoints, the roster's overrides, collections. Every change is logged."""

from __future__ import annotations

import re
import time
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from benchwarmers.bench.admin.collection_rules import suggest, validate_collection
from benchwarmers.bench.upkeep import refresh
from benchwarmers.errors import Conflict, InvalidRequest, NotFound
from benchwarmers.store import collection_rows as collection_rows
from benchwarmers.store import gateway_settings as setting_rows
from benchwarmers.store import roster
from benchwarmers.store.changes import record_change
from benchwarmers.upstream.listings import KINDS

if TYPE_CHECKING:
    from benchwarmers.bench.core import Bench

ENDPOINT_NAME = re.compile(r"^[a-z0-9][a-z0-9._-]{0,63}$")
ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
OVERRIDABLE = {"context": "context_window", "output": "output_cap", "family": "family", "free": "free"}


def check_base_url(url: str) -> str:
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise InvalidRequest(
            f"base URL {url!r} is not an http(s) URL such as https://api.groq.com/openai/v1", param="base_url"
        )
    if parts.username or parts.password:
        raise InvalidRequest("base URL must not carry a user:password; use --api-key-env", param="base_url")
    return url.strip().rstrip("/")


def endpoint_public(row: dict[str, Any]) -> dict[str, Any]:
    """An endpoint as shown anywhere: the stored key only as its last four characters."""
    return {
        "name": row["name"],
        "base_url": row["base_url"],
        "kind": row["kind"],
        "api_key_env": row["api_key_env"],
        "api_key": f"…{row['api_key_last4']}" if row.get("api_key_last4") else None,
        "free_tier": bool(row["free_tier"]),
        "enabled": bool(row["enabled"]),
        "refreshed_at": row["refreshed_at"],
        "refresh_error": row["refresh_error"],
    }


class Admin:
    def __init__(self, bench: Bench) -> None:
        self.bench = bench

    @property
    def actor(self) -> str:
        return self.bench.actor

    # -- endpoints -----------------------------------------------------------------------------

    async def add_endpoint(
        self,
        name: str,
        base_url: str,
        kind: str = "openai",
        *,
        api_key_env: str | None = None,
        api_key: str | None = None,
        free_tier: bool = False,
        actor: str | None = None,
    ) -> dict[str, Any]:
        if not ENDPOINT_NAME.match(name):
            raise InvalidRequest(
                f"endpoint name {name!r} is not valid: lower-case letters, digits, '.', '_' or '-'",
                param="name",
            )
        url = check_base_url(base_url)
        if kind not in KINDS:
            raise InvalidRequest(f"kind {kind!r} is not known; kinds are: {', '.join(KINDS)}", param="kind")
        if api_key_env and api_key:
            raise InvalidRequest("give either --api-key-env or --api-key, not both", param="api_key")
        if api_key_env and not ENV_NAME.match(api_key_env):
            raise InvalidRequest(f"{api_key_env!r} is not an environment variable name", param="api_key_env")
        async with self.bench.write() as conn:
            if await roster.get_endpoint(conn, name):
                raise Conflict(
                    f"endpoint {name!r} exists already; remove it first or pick another name",
                    param="name",
                    code="endpoint_exists",
                )
            values = {
                "name": name,
                "base_url": url,
                "kind": kind,
                "api_key_env": api_key_env,
                "api_key_enc": self.bench.secrets.encrypt(api_key) if api_key else None,
                "api_key_last4": api_key[-4:] if api_key else None,
                "free_tier": free_tier,
                "enabled": True,
            }
            await roster.insert_endpoint(conn, **values)
            row = await roster.get_endpoint(conn, name)
            assert row is not None
            await record_change(
                conn,
                actor=actor or self.actor,
                subject="endpoint",
                name=name,
                action="create",
                after=endpoint_public(row),
            )
        return endpoint_public(row)

    async def list_endpoints(self) -> list[dict[str, Any]]:
        async with self.bench.read() as conn:
            return [endpoint_public(r) for r in await roster.list_endpoints(conn)]

    async def _endpoint(self, conn: Any, name: str) -> dict[str, Any]:
        row = await roster.get_endpoint(conn, name)
        if row is None:
            names = [r["name"] for r in await roster.list_endpoints(conn)]
            raise NotFound(f"no endpoint named {name!r}.{suggest(name, names)}", param="name")
        return row

    async def remove_endpoint(self, name: str, *, actor: str | None = None) -> None:
        async with self.bench.write() as conn:
            row = await self._endpoint(conn, name)
            await roster.delete_endpoint(conn, row["id"])
            await record_change(
                conn,
                actor=actor or self.actor,
                subject="endpoint",
                name=name,
                action="delete",
                before=endpoint_public(row),
            )
        self.bench.upstream.forget(name)

    async def refresh_endpoint(self, name: str, *, actor: str | None = None) -> dict[str, Any]:
        """Read the endpoint's listing and record what it says (see bench/refresh.py)."""
        return await refresh.refresh_endpoint(self.bench, name, actor=actor)

    # -- models ----------------------------------------------------------------------------------

    async def list_models(self) -> list[dict[str, Any]]:
        snapshot = await self.bench.snapshot()
        now = time.time()
        return [model_public(m, now, snapshot.went_paid) for m in snapshot.models.values()]

    async def model(self, alias: str) -> dict[str, Any]:
        snapshot = await self.bench.snapshot()
        model = snapshot.models.get(alias)
        if model is None:
            raise NotFound(f"no model {alias!r} on the roster.{suggest(alias, snapshot.models)}", param="alias")
        async with self.bench.read() as conn:
            facts = await roster.facts_of(conn, model.pk)
        data = model_public(model, time.time(), snapshot.went_paid)
        data["sources"] = sorted(
            (
                {"fact": f["fact"], "source": f["source"], "value": f["value"], "learned_at": f["learned_at"]}
                for f in facts
            ),
            key=lambda f: (f["fact"], f["source"]),
        )
        return data

    async def set_model(self, alias: str, *, actor: str | None = None, **changes: Any) -> dict[str, Any]:
        """Apply the user's overrides (None = leave as is)."""
        before = await self.model(alias)
        snapshot = await self.bench.snapshot()
        model = snapshot.models[alias]
        async with self.bench.write() as conn:
            for option, fact in OVERRIDABLE.items():
                value = changes.get(option)
                if value is None:
                    continue
                if option in ("context", "output") and (not isinstance(value, int) or value <= 0):
                    raise InvalidRequest(f"--{option} must be a positive number of tokens", param=option)
                await roster.set_fact(conn, model.pk, fact, "override", value)
            if changes.get("vision") is not None:
                kinds = ["image", "text"] if changes["vision"] else ["text"]
                await roster.set_fact(conn, model.pk, "input_kinds", "override", kinds)
            if changes.get("enabled") is not None:
                await roster.update_model(conn, model.pk, enabled=bool(changes["enabled"]))
            after_facts = {k: v for k, v in changes.items() if v is not None}
            await record_change(
                conn,
                actor=actor or self.actor,
                subject="model",
                name=alias,
                action="update",
                before={k: before.get(k) for k in after_facts},
                after=after_facts,
            )
        return await self.model(alias)

    # -- collections --------------------------------------------------------------------------

    async def list_collections(self) -> list[dict[str, Any]]:
        async with self.bench.read() as conn:
            return await collection_rows.list_collections(conn)

    async def collection(self, name: str) -> dict[str, Any]:
        async with self.bench.read() as conn:
            found = await collection_rows.get_collection(conn, name)
            if found is None:
                names = [c["name"] for c in await collection_rows.list_collections(conn)]
                raise NotFound(f"no collection named {name!r}.{suggest(name, names)}", param="name")
            return found

    async def _validate(self, data: dict[str, Any]) -> dict[str, Any]:
        snapshot = await self.bench.snapshot()
        return validate_collection(data, snapshot.models, snapshot.shapes)

    async def add_collection(self, data: dict[str, Any], *, actor: str | None = None) -> dict[str, Any]:
        clean = await self._validate(data)
        async with self.bench.write() as conn:
            if await collection_rows.get_collection(conn, clean["name"]):
                raise Conflict(
                    f"collection {clean['name']!r} exists already; use `collection edit`",
                    param="name",
                    code="collection_exists",
                )
            await collection_rows.insert_collection(conn, clean)
            await record_change(
                conn, actor=actor or self.actor, subject="collection", name=clean["name"], action="create", after=clean
            )
        return clean

    async def edit_collection(
        self, name: str, changes: dict[str, Any], *, actor: str | None = None, replace: bool = False
    ) -> dict[str, Any]:
        """Change the fields given (None = leave as is); `replace` takes `changes` as the whole new
        collection instead, so a field left out or None is cleared (the dashboard's form)."""
        before = await self.collection(name)
        given = {k: v for k, v in changes.items() if v is not None}
        clean = await self._validate({**({} if replace else before), **given, "name": name})
        async with self.bench.write() as conn:
            await collection_rows.update_collection(conn, name, {k: v for k, v in clean.items() if k != "name"})
            await record_change(
                conn,
                actor=actor or self.actor,
                subject="collection",
                name=name,
                action="update",
                before=before,
                after=clean,
            )
        return clean

    async def remove_collection(self, name: str, *, actor: str | None = None) -> None:
        before = await self.collection(name)
        async with self.bench.write() as conn:
            await collection_rows.delete_collection(conn, name)
            await record_change(
                conn, actor=actor or self.actor, subject="collection", name=name, action="delete", before=before
            )

    async def import_collections(self, items: list[dict[str, Any]]) -> dict[str, int]:
        """Create or replace each collection; all or nothing."""
        snapshot = await self.bench.snapshot()
        clean = [validate_collection(item, snapshot.models, snapshot.shapes) for item in items]
        created = updated = 0
        async with self.bench.write() as conn:
            for item in clean:
                before = await collection_rows.get_collection(conn, item["name"])
                if before is None:
                    await collection_rows.insert_collection(conn, item)
                    created += 1
                elif {k: before[k] for k in item} != item:
                    await collection_rows.update_collection(
                        conn, item["name"], {k: v for k, v in item.items() if k != "name"}
                    )
                    updated += 1
                else:
                    continue
                await record_change(
                    conn,
                    actor=self.actor,
                    subject="collection",
                    name=item["name"],
                    action="create" if before is None else "update",
                    before=before,
                    after=item,
                )
        return {"created": created, "updated": updated, "unchanged": len(clean) - created - updated}

    # -- gateway settings ----------------------------------------------------------------------

    async def set_gateway(self, *, actor: str | None = None, **values: Any) -> dict[str, Any]:
        async with self.bench.write() as conn:
            before = await setting_rows.gateway_limits(conn)
            after = {**before, **{k: v for k, v in values.items() if v is not None}}
            unknown = set(after) - set(setting_rows.GATEWAY_DEFAULTS)
            if unknown:
                raise InvalidRequest(f"unknown gateway setting(s): {', '.join(sorted(unknown))}")
            for key, value in values.items():
                if value is not None:
                    check_gateway_value(key, value)
            await setting_rows.put_setting(conn, "gateway", after)
            await record_change(
                conn,
                actor=actor or self.actor,
                subject="setting",
                name="gateway",
                action="update",
                before=before,
                after=after,
            )
        return after


# Upper bounds where one matters (the seat counts match a collection's own override).
_GATEWAY_MAX = {"max_explorers": 20, "max_calls": 20, "epsilon": 1, "retention_days": 36_500}


def check_gateway_value(name: str, value: Any) -> None:
    """A gateway setting is a number of its default's kind: whole when the default is, never negative."""
    whole = isinstance(setting_rows.GATEWAY_DEFAULTS[name], int)
    if isinstance(value, bool) or not isinstance(value, int if whole else int | float):
        raise InvalidRequest(f"{name} must be a {'whole ' if whole else ''}number", param=name)
    top = _GATEWAY_MAX.get(name)
    if value < 0 or (top is not None and value > top):
        bounds = f"from 0 to {top}" if top is not None else "0 or more"
        raise InvalidRequest(f"{name} must be {bounds}", param=name)


def model_public(model: Any, now: float, went_paid: frozenset[str] | set[str] = frozenset()) -> dict[str, Any]:
    status = "ok"
    if model.gone:
        status = "gone"
    elif model.alias in went_paid:
        status = "went paid"
    elif model.retiring:
        status = "retiring"
    elif model.cooling(now):
        status = "cooldown"
    elif not model.enabled:
        status = "disabled"
    return {
        "alias": model.alias,
        "endpoint": model.endpoint,
        "model_id": model.model_id,
        "enabled": model.enabled,
        "status": status,
        "cooldown_until": model.cooldown_until,
        "context_window": model.window,
        "output_cap": model.output_cap,
        "vision": model.vision,
        "free": model.free,
        "family": model.family,
        "retiring": model.retiring,
        "facts": {name: {"value": value, "source": source} for name, (value, source) in model.facts.items()},
    }
