"""Endpoints: the providers the user registered, their keys (stored encrypted or named by an
environment variable) and their listings. Every change is logged.

An endpoint of kind `llm` is no URL: it stands for the models the `llm` library's plugins reach
(BENCH_CLIENT=llm), holds no key (the plugins use the keys llm keeps) and stores `llm:` as its base.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit

from benchwarmers.bench.admin import refresh
from benchwarmers.bench.admin.aliases import apply_renames, refuse_prefix_taken
from benchwarmers.bench.admin.models import check_limits
from benchwarmers.bench.bounds import KINDS
from benchwarmers.bench.key_names import key_env_refusal
from benchwarmers.bench.names import suggest
from benchwarmers.bench.state import BenchState
from benchwarmers.catalog.pace import updated_windows
from benchwarmers.errors import Conflict, InvalidRequest, NotFound, UpstreamRefused
from benchwarmers.redaction import without_query
from benchwarmers.store import aliases as alias_rows
from benchwarmers.store import collection_rows, roster
from benchwarmers.store.changes import record_change
from benchwarmers.store.records import CollectionFields
from benchwarmers.upstream.failures import UpstreamFailure
from benchwarmers.upstream.kinds import endpoint_kind
from benchwarmers.upstream.llm_client import LLM_BASE_URL

ENDPOINT_NAME = re.compile(r"^[a-z0-9][a-z0-9._-]{0,63}$")
ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def check_endpoint_name(name: str) -> None:
    if not ENDPOINT_NAME.match(name):
        raise InvalidRequest(
            f"endpoint name {name!r} is not valid: lower-case letters, digits, '.', '_' or '-'",
            param="name",
        )


def check_base_url(url: str) -> str:
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise InvalidRequest(
            f"base URL {url!r} is not an http(s) URL such as https://api.groq.com/openai/v1", param="base_url"
        )
    if parts.username or parts.password:
        raise InvalidRequest("base URL must not carry a user:password; use --api-key-env", param="base_url")
    if parts.query or parts.fragment or url.strip().endswith(("?", "#")):
        # Paths are appended to the base URL, and a query may hold a key that would be shown everywhere.
        raise InvalidRequest(
            "base URL must not carry a query string or fragment (?... or #...); a key goes in --api-key-env "
            "or --api-key",
            param="base_url",
        )
    return url.strip().rstrip("/")


def endpoint_public(row: dict[str, Any]) -> dict[str, Any]:
    """An endpoint as shown anywhere: the stored key only as its last four characters."""
    return {
        "name": row["name"],
        # Endpoints added before query strings were refused may carry one: never shown.
        "base_url": without_query(row["base_url"]),
        "kind": row["kind"],
        "api_key_env": row["api_key_env"],
        "api_key": f"…{row['api_key_last4']}" if row.get("api_key_last4") else None,
        "free_tier": bool(row["free_tier"]),
        "enabled": bool(row["enabled"]),
        "refreshed_at": row["refreshed_at"],
        "refresh_error": row["refresh_error"],
        "limits": row.get("rate_limits") or {},
    }


def seated_by(collections: Iterable[CollectionFields], aliases: set[str]) -> list[str]:
    """Each collection that seats one of `aliases`, with them: `bench/review (a, b as merger)`."""
    found = []
    for collection in sorted(collections, key=lambda c: c["name"]):
        named = [m for m in collection["members"] if m in aliases]
        merger = collection.get("merger")
        if merger in aliases:
            named.append(f"{merger} as merger")
        if named:
            found.append(f"bench/{collection['name']} ({', '.join(named)})")
    return found


class Endpoints:
    def __init__(self, state: BenchState) -> None:
        self.state = state

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
        check_endpoint_name(name)
        if kind not in KINDS:
            raise InvalidRequest(f"kind {kind!r} is not known; kinds are: {', '.join(KINDS)}", param="kind")
        url = check_base_url(base_url) if endpoint_kind(kind).at_url else self._llm_base(base_url, api_key_env, api_key)
        if api_key_env and api_key:
            raise InvalidRequest("give either --api-key-env or --api-key, not both", param="api_key")
        if api_key_env and not ENV_NAME.match(api_key_env):
            raise InvalidRequest(f"{api_key_env!r} is not an environment variable name", param="api_key_env")
        refusal = key_env_refusal(api_key_env, self.state.settings.key_env_names) if api_key_env else None
        if refusal:
            raise InvalidRequest(refusal, param="api_key_env", code="api_key_env_not_allowed")
        async with self.state.write() as conn:
            if await roster.get_endpoint(conn, name):
                raise Conflict(
                    f"endpoint {name!r} exists already; remove it first or pick another name",
                    param="name",
                    code="endpoint_exists",
                )
            await refuse_prefix_taken(conn, name)
            values = {
                "name": name,
                "base_url": url,
                "kind": kind,
                "api_key_env": api_key_env,
                "api_key_enc": self.state.secrets.encrypt(api_key) if api_key else None,
                "api_key_last4": api_key[-4:] if api_key else None,
                "free_tier": free_tier,
                "enabled": True,
            }
            await roster.insert_endpoint(conn, **values)
            row = await roster.get_endpoint(conn, name)
            assert row is not None
            await record_change(
                conn,
                actor=actor or self.state.actor,
                subject="endpoint",
                name=name,
                action="create",
                after=endpoint_public(row),
            )
        return endpoint_public(row)

    def _llm_base(self, base_url: str, api_key_env: str | None, api_key: str | None) -> str:
        """An `llm` endpoint's stored base. BENCH_CLIENT=llm is checked here, not only when seating:
        the plugins run inside this process, so they are an opt-in."""
        if self.state.settings.client != "llm":
            raise InvalidRequest(
                "an endpoint of kind llm reaches models through the llm library: run the bench with "
                "BENCH_CLIENT=llm (and pip install 'benchwarmers[llm]')",
                param="kind",
                code="llm_client_off",
            )
        if base_url.strip() not in ("", LLM_BASE_URL):
            raise InvalidRequest(
                f"an llm endpoint has no URL (its plugins know where they call): give {LLM_BASE_URL} "
                "or use --preset llm",
                param="base_url",
            )
        if api_key_env or api_key:
            raise InvalidRequest(
                "an llm endpoint holds no key: llm's plugins use the keys llm keeps (`llm keys set NAME`) "
                "or their own variables",
                param="api_key",
            )
        return LLM_BASE_URL

    async def list_endpoints(self) -> list[dict[str, Any]]:
        async with self.state.read() as conn:
            return [endpoint_public(r) for r in await roster.list_endpoints(conn)]

    async def _endpoint(self, conn: Any, name: str) -> dict[str, Any]:
        row = await roster.get_endpoint(conn, name)
        if row is None:
            names = [r["name"] for r in await roster.list_endpoints(conn)]
            raise NotFound(f"no endpoint named {name!r}.{suggest(name, names)}", param="name")
        return row

    async def remove_endpoint(self, name: str, *, force: bool = False, actor: str | None = None) -> None:
        """Remove an endpoint and its models. Refused while a collection seats one of its models
        (as a member or its merger), naming each, unless `force`: those seats are then skipped as
        "not on the roster any more" until the collections are edited."""
        async with self.state.write() as conn:
            row = await self._endpoint(conn, name)
            aliases = {m["alias"] for m in await roster.models_of_endpoint(conn, row["id"])}
            using = seated_by(await collection_rows.list_collections(conn), aliases)
            if using and not force:
                raise Conflict(
                    f"endpoint {name} has models that collections still seat: {'; '.join(using)}. Edit those "
                    "collections first, or remove it anyway with --force (API: ?force=true); their seats then "
                    "show as not on the roster",
                    param="name",
                    code="endpoint_in_use",
                )
            await roster.delete_endpoint(conn, row["id"])
            await record_change(
                conn,
                actor=actor or self.state.actor,
                subject="endpoint",
                name=name,
                action="delete",
                before=endpoint_public(row),
                after={"forced": using} if using else None,
            )
        self.state.upstream.forget(name)

    async def rename_endpoint(self, old: str, new: str, *, actor: str | None = None) -> dict[str, Any]:
        """Rename endpoint `old` to `new`, and each of its models' aliases under the prefix `old/` (an
        alias the user gave without that prefix stays). Seats recorded under either name follow."""
        async with self.state.write() as conn:
            row = await self._endpoint(conn, old)
            if new == old:
                return {"name": old, "before": old, "changed": False, "aliases": {}}
            check_endpoint_name(new)
            if await roster.get_endpoint(conn, new):
                raise Conflict(
                    f"endpoint {new!r} exists already; pick another name", param="name", code="endpoint_exists"
                )
            await refuse_prefix_taken(conn, new, row["id"])
            prefix = f"{old}/"
            renames = {
                m["alias"]: f"{new}/{m['alias'].removeprefix(prefix)}"
                for m in sorted(await roster.models_of_endpoint(conn, row["id"]), key=lambda m: m["alias"])
                if m["alias"].startswith(prefix)
            }
            moved = await apply_renames(conn, renames)
            moved["endpoint_seats"] = await alias_rows.rename_endpoint(conn, row["id"], old, new)
            await record_change(
                conn,
                actor=actor or self.state.actor,
                subject="endpoint",
                name=old,
                action="rename",
                before={"name": old},
                after={"name": new, "aliases": renames, **moved},
            )
        self.state.upstream.forget(old)
        await self.state.reload_history()
        return {"name": new, "before": old, "changed": True, "aliases": renames, **moved}

    async def set_limits(self, name: str, limits: Any, *, actor: str | None = None) -> dict[str, Any]:
        """Set the endpoint's own rate limits ({window: amount}, e.g. {"requests-minute": 20}), which
        all its models share; 0 removes a window, others are kept."""
        windows = check_limits(limits)
        if not windows:
            raise InvalidRequest('give at least one window, e.g. {"requests-minute": 20}', param="limits")
        async with self.state.write() as conn:
            row = await self._endpoint(conn, name)
            before = row.get("rate_limits") or {}
            after = updated_windows(before, windows)
            await roster.update_endpoint(conn, row["id"], rate_limits=after or None)
            await record_change(
                conn,
                actor=actor or self.state.actor,
                subject="endpoint",
                name=name,
                action="limits",
                before={"rate_limits": before},
                after={"rate_limits": after},
            )
            row = {**row, "rate_limits": after}
        return endpoint_public(row)

    async def refresh_endpoint(self, name: str, *, actor: str | None = None) -> dict[str, Any]:
        """Read the endpoint's listing and record what it says (see bench/admin/refresh.py)."""
        try:
            return await refresh.refresh_endpoint(self.state, name, actor=actor)
        except UpstreamFailure as exc:
            raise UpstreamRefused(f"refreshing {name} failed: {exc}", param="name") from None
