"""The roster's models as the user sees and overrides them (window, output cap, family, free,
vision, enabled, rate limits), renames them, and restores a retired one. Every change is logged."""

from __future__ import annotations

import time
from typing import Any

from benchwarmers.bench.admin.aliases import apply_renames, check_alias
from benchwarmers.bench.admin.allowances import model_allowances
from benchwarmers.bench.evidence.retirement import restore
from benchwarmers.bench.names import suggest
from benchwarmers.bench.snapshot import ModelView, Snapshot
from benchwarmers.bench.state import BenchState
from benchwarmers.catalog.pace import check_windows, updated_windows, windows_of
from benchwarmers.errors import InvalidRequest, NotFound
from benchwarmers.store import roster
from benchwarmers.store.changes import record_change

OVERRIDABLE = {
    "context": "context_window",
    "output": "output_cap",
    "family": "family",
    "free": "free",
    "concurrency": "concurrency",
}


class Models:
    def __init__(self, state: BenchState) -> None:
        self.state = state

    async def list_models(self) -> list[dict[str, Any]]:
        snapshot = await self.state.snapshot()
        now = time.time()
        return [model_public(m, now, snapshot.went_paid) for m in snapshot.models.values()]

    async def model(self, alias: str) -> dict[str, Any]:
        return await model_detail(self.state, alias)

    async def set_model(self, alias: str, *, actor: str | None = None, **changes: Any) -> dict[str, Any]:
        """Apply the user's overrides (None = leave as is). `limits` ({window: amount}, e.g.
        {"requests-minute": 20}) replaces those windows of the model's rate limits; 0 removes one."""
        before = await self.model(alias)
        snapshot = await self.state.snapshot()
        model = snapshot.models[alias]
        windows = check_limits(changes.get("limits"))
        async with self.state.write() as conn:
            for option, fact in OVERRIDABLE.items():
                value = changes.get(option)
                if value is None:
                    continue
                if option in ("context", "output") and (not isinstance(value, int) or value <= 0):
                    raise InvalidRequest(f"--{option} must be a positive number of tokens", param=option)
                if option == "concurrency" and (not isinstance(value, int) or isinstance(value, bool) or value <= 0):
                    raise InvalidRequest("--concurrency must be a whole number of calls, 1 or more", param=option)
                await roster.set_fact(conn, model.pk, fact, "override", value)
            if changes.get("vision") is not None:
                kinds = ["image", "text"] if changes["vision"] else ["text"]
                await roster.set_fact(conn, model.pk, "input_kinds", "override", kinds)
            if changes.get("enabled") is not None:
                await roster.update_model(conn, model.pk, enabled=bool(changes["enabled"]))
            if windows:
                current = await roster.fact_value(conn, model.pk, "rate_limits", "override")
                stored = updated_windows(current, windows)
                if stored:
                    await roster.set_fact(conn, model.pk, "rate_limits", "override", stored)
                else:
                    await roster.clear_fact(conn, model.pk, "rate_limits", "override")
                changes = {**changes, "limits": windows}
            after_facts = {k: v for k, v in changes.items() if v is not None}
            await record_change(
                conn,
                actor=actor or self.state.actor,
                subject="model",
                name=alias,
                action="update",
                before={k: before.get(k) for k in after_facts},
                after=after_facts,
            )
        return await self.model(alias)

    async def rename(self, alias: str, new: str, *, actor: str | None = None) -> dict[str, Any]:
        """Give the model `alias` the alias `new` wherever it is stored (see bench/admin/aliases.py)."""
        async with self.state.write() as conn:
            model = await roster.get_model(conn, alias)
            if model is None:
                known = [m["alias"] for m in await roster.list_models(conn)]
                raise NotFound(f"no model {alias!r} on the roster.{suggest(alias, known)}", param="alias")
            if new == alias:
                return {"alias": alias, "before": alias, "changed": False}
            check_alias(new, model["endpoint"], [e["name"] for e in await roster.list_endpoints(conn)])
            moved = await apply_renames(conn, {alias: new})
            await record_change(
                conn,
                actor=actor or self.state.actor,
                subject="model",
                name=alias,
                action="rename",
                before={"alias": alias},
                after={"alias": new, **moved},
            )
        await self.state.reload_history()  # its seats count under the new alias from now on
        return {"alias": new, "before": alias, "changed": True, **moved}

    async def restore(self, alias: str, *, actor: str | None = None) -> dict[str, Any]:
        """Bring a retired model back now: asked again as a member, back in the explorer pool, its
        failure streak cleared and its failing alert resolved. A model not retired is left as it is."""
        model = roster_model(await self.state.snapshot(), alias)
        async with self.state.write() as conn:
            await restore(conn, model.pk, alias, actor=actor or self.state.actor, by="user", now=time.time())
        return await self.model(alias)


def check_limits(given: Any) -> dict[str, int | str]:
    """The user's rate-limit windows, checked ({} when none were given)."""
    if given is None:
        return {}
    if not isinstance(given, dict):
        raise InvalidRequest('limits is an object of windows, e.g. {"requests-minute": 20}', param="limits")
    try:
        return check_windows(given)
    except ValueError as exc:
        raise InvalidRequest(str(exc), param="limits") from None


def model_public(model: Any, now: float, went_paid: frozenset[str] | set[str] = frozenset()) -> dict[str, Any]:
    status = "ok"
    if model.gone:
        status = "gone"
    elif model.retired:
        status = "retired"
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
        "concurrency": model.concurrency,  # the user's bound on calls at once, if set (the llm client keeps it)
        "vision": model.vision,
        "free": model.free,
        "family": model.family,
        "retiring": model.retiring,
        "retired_at": model.retired_at,
        "next_probe_at": model.next_probe_at,
        # What calls to it are paced by: announced limits with the user's in their place (bench/pacing.py).
        "limits": windows_of(model.limits),
        # Its provider's free tier, from the free-tier file: summary, data use, source and the date checked.
        "free_tier": model.fact("free_tier"),
        "tags": sorted(model.tags),  # provider traits a collection may require or exclude
        "facts": {name: {"value": value, "source": source} for name, (value, source) in model.facts.items()},
    }


def roster_model(snapshot: Snapshot, alias: str) -> ModelView:
    """The model on the roster, or a refusal naming close matches."""
    model = snapshot.models.get(alias)
    if model is None:
        raise NotFound(f"no model {alias!r} on the roster.{suggest(alias, snapshot.models)}", param="alias")
    return model


async def model_detail(state: BenchState, alias: str) -> dict[str, Any]:
    """One model as shown anywhere, with every source of each fact."""
    snapshot = await state.snapshot()
    model = roster_model(snapshot, alias)
    async with state.read() as conn:
        facts = await roster.facts_of(conn, model.pk)
    data = model_public(model, time.time(), snapshot.went_paid)
    data["allowances"] = (await model_allowances(state, [alias])).get(alias, [])
    data["sources"] = sorted(
        ({"fact": f["fact"], "source": f["source"], "value": f["value"], "learned_at": f["learned_at"]} for f in facts),
        key=lambda f: (f["fact"], f["source"]),
    )
    return data
