"""Changing an endpoint in place: its base URL, its key (rotation: a new stored key, or a variable that
names one), its free tier; and testing its connection with one listing call, recording nothing.

Kept apart from `endpoints.py` (adding, removing, renaming, limits, refreshing): an edit keeps the name,
so every model alias, collection and seat stays as it is. The next panel uses the new URL or key (the
change moves the config version every process reloads on).
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from benchwarmers.bench.admin.checks import check_endpoint
from benchwarmers.bench.admin.endpoints import ENV_NAME, check_base_url, endpoint_public
from benchwarmers.bench.key_names import key_env_refusal
from benchwarmers.bench.state import BenchState
from benchwarmers.errors import InvalidRequest, NotFound
from benchwarmers.store import roster
from benchwarmers.store.changes import record_change
from benchwarmers.upstream.kinds import endpoint_kind

TEST_TIMEOUT = 15.0  # seconds the listing call of a connection test may take


async def edit_endpoint(
    state: BenchState,
    name: str,
    *,
    base_url: str | None = None,
    api_key_env: str | None = None,
    api_key: str | None = None,
    free_tier: bool | None = None,
    actor: str | None = None,
) -> dict[str, Any]:
    """Change what is given; a new `api_key` replaces the stored key (and the variable), a new
    `api_key_env` replaces the stored key by that variable."""
    if api_key_env and api_key:
        raise InvalidRequest("give either a key variable or a key, not both", param="api_key")
    if api_key_env is not None and not ENV_NAME.match(api_key_env):
        raise InvalidRequest(f"{api_key_env!r} is not an environment variable name", param="api_key_env")
    if api_key_env:
        refusal = key_env_refusal(api_key_env, state.settings.key_env_names)
        if refusal:
            raise InvalidRequest(refusal, param="api_key_env", code="api_key_env_not_allowed")
    async with state.write() as conn:
        row = await roster.get_endpoint(conn, name)
        if row is None:
            known = ", ".join(e["name"] for e in await roster.list_endpoints(conn)) or "none yet"
            raise NotFound(f"no endpoint {name!r}; endpoints: {known}", param="name", code="endpoint_not_found")
        values: dict[str, Any] = {}
        if base_url is not None:
            if not endpoint_kind(row["kind"]).at_url:
                raise InvalidRequest("an llm endpoint has no URL to change", param="base_url")
            values["base_url"] = check_base_url(base_url)
        if api_key:
            values |= {
                "api_key_enc": state.secrets.encrypt(api_key),
                "api_key_last4": api_key[-4:],
                "api_key_env": None,
            }
        elif api_key_env:
            values |= {"api_key_env": api_key_env, "api_key_enc": None, "api_key_last4": None}
        if free_tier is not None:
            values["free_tier"] = free_tier
        if not values:
            raise InvalidRequest("nothing to change: give base_url, api_key, api_key_env or free_tier")
        before = endpoint_public(row)
        await roster.update_endpoint(conn, row["id"], **values)
        after = endpoint_public({**row, **values})
        await record_change(
            conn,
            actor=actor or state.actor,
            subject="endpoint",
            name=name,
            action="edit",
            before={k: v for k, v in before.items() if after[k] != v},
            after={k: v for k, v in after.items() if before[k] != v},
        )
    return after


async def try_endpoint(state: BenchState, name: str) -> dict[str, Any]:
    """One listing call with the endpoint's current URL and key: reachable, key accepted, models listed,
    and what to do when not. Nothing is recorded (refreshing records the listing)."""
    snapshot = await state.snapshot()
    endpoint = snapshot.endpoints.get(name)
    if endpoint is None:
        known = ", ".join(sorted(snapshot.endpoints)) or "none yet"
        raise NotFound(f"no endpoint {name!r}; endpoints: {known}", param="name", code="endpoint_not_found")
    return asdict(await check_endpoint(state, endpoint, TEST_TIMEOUT))
