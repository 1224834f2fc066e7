"""Roles: the models a user pins by hand, beside what the evidence picks. Every change is logged.

- `primary`, per shape: the router's model for that shape while it can sit (the leaderboard's
  "best for", the merger's third rule), instead of the evidence's pick.
- `merger`, per shape or for every shape (`*`): the merger of a merged reply when the collection
  names none; it comes before the evidence's rules (the member with the most useful verdicts, the
  router's best, the first member that fits).
- `decision`, no shape: the decision model asked first to label a request. It must be one of the
  decision models (`benchwarmers decision add` checks that it answers with a shape); the others are
  asked, in their order, when it is gone or cooling down. Removing it as a decision model clears it.

A roles file (TOML or JSON, see examples/roles.toml) holds them all; importing one applies it in one
transaction, and export writes one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import orjson

from benchwarmers.bench.bounds import DECISION, MERGER, PRIMARY
from benchwarmers.bench.evidence.board import check_shape
from benchwarmers.bench.names import suggest
from benchwarmers.bench.snapshot import EVERY_SHAPE, Snapshot
from benchwarmers.errors import InvalidRequest, NotFound
from benchwarmers.store import evidence as store
from benchwarmers.store.changes import record_change

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncConnection

    from benchwarmers.bench.state import BenchState

ROLES = (PRIMARY, MERGER, DECISION)
_AFTER_CLEAR = {
    PRIMARY: "the evidence decides again",
    MERGER: "the merge rules decide again",
    DECISION: "the decision models are asked in their order",
}

Pin = tuple[str, str, str]  # (role, shape, alias)


def role_label(role: str, shape: str) -> str:
    """How a pin is named in messages: "primary for review", "merger for every shape", "decision model"."""
    if role == DECISION:
        return "decision model"
    return f"{role} for {'every shape' if shape == EVERY_SHAPE else shape}"


def _pinned_where(role: str, shape: str) -> str:
    if role == DECISION:
        return "decision model is pinned"
    return f"{role} is pinned " + ("for every shape" if shape == EVERY_SHAPE else f"for shape {shape!r}")


def after_clear(role: str) -> str:
    return _AFTER_CLEAR[role]


def role_shape(role: str, shape: str | None) -> str:
    """The shape a pin of `role` is stored under; refused when the role does not take that shape."""
    if role not in ROLES:
        raise InvalidRequest(f"role {role!r} is not known; roles are: {', '.join(ROLES)}", param="role")
    if role == DECISION:
        if shape not in (None, EVERY_SHAPE):
            raise InvalidRequest(
                "the decision role has no shape: its model is what labels a request's shape "
                "(benchwarmers role set decision ALIAS)",
                param="shape",
            )
        return EVERY_SHAPE
    if role == PRIMARY and shape in (None, EVERY_SHAPE):
        raise InvalidRequest(
            "the primary role is pinned per shape: give one (benchwarmers role set primary SHAPE ALIAS)",
            param="shape",
        )
    return shape or EVERY_SHAPE


def check_pin(snapshot: Snapshot, role: str, shape: str | None, alias: str) -> Pin:
    """A pin as given, checked against the configuration: (role, stored shape, alias)."""
    stored = role_shape(role, shape)
    if stored != EVERY_SHAPE:
        check_shape(snapshot, stored)
    if alias not in snapshot.models:
        raise NotFound(f"no model {alias!r} on the roster.{suggest(alias, snapshot.models)}", param="alias")
    if role == DECISION and alias not in {row["alias"] for row in snapshot.decision_models}:
        raise InvalidRequest(
            f"{alias} is not a decision model; add it first with `benchwarmers decision add {alias}` "
            "(that checks it answers with a shape)",
            param="alias",
            code="not_a_decision_model",
        )
    return role, stored, alias


async def _put(conn: AsyncConnection, actor: str, pin: Pin, before: str | None) -> None:
    role, shape, alias = pin
    await store.put_role(conn, role, shape, alias)
    await record_change(
        conn,
        actor=actor,
        subject="role",
        name=f"{role}/{shape}",
        action="create" if before is None else "update",
        before=None if before is None else {"alias": before},
        after={"alias": alias},
    )


async def _delete(conn: AsyncConnection, actor: str, role: str, shape: str, before: str) -> None:
    await store.delete_role(conn, role, shape)
    await record_change(
        conn, actor=actor, subject="role", name=f"{role}/{shape}", action="delete", before={"alias": before}
    )


async def set_role(state: BenchState, role: str, shape: str | None, alias: str) -> dict[str, Any]:
    """Pin `alias` as the `role` for `shape` (None: every shape for a merger; none for decision)."""
    pin = check_pin(await state.snapshot(), role, shape, alias)
    stored = pin[1]
    async with state.write() as conn:
        before = await store.get_role(conn, role, stored)
        changed = before != alias
        if changed:
            await _put(conn, state.actor, pin, before)
    return {"role": role, "shape": stored, "alias": alias, "before": before, "changed": changed}


async def clear_role(state: BenchState, role: str, shape: str | None = None) -> dict[str, Any]:
    """Unpin the `role` for `shape` (a shape since removed included)."""
    stored = role_shape(role, shape)
    async with state.write() as conn:
        before = await store.get_role(conn, role, stored)
        if before is None:
            raise NotFound(f"no {_pinned_where(role, stored)}", param="shape", code="role_not_found")
        await _delete(conn, state.actor, role, stored, before)
    return {"role": role, "shape": stored, "alias": before}


async def list_roles(state: BenchState) -> list[dict[str, Any]]:
    async with state.read() as conn:
        return await store.list_roles(conn)


# -- the roles file -------------------------------------------------------------------------------


def read_roles(data: Any) -> list[tuple[str, str | None, str]]:
    """The pins a roles file holds, as given: {"decision": ALIAS, "primary": {SHAPE: ALIAS},
    "merger": {SHAPE or "*": ALIAS}}. Refused, naming the key, when it holds anything else."""
    if not isinstance(data, Mapping):
        raise InvalidRequest("a roles file holds one table: decision, primary and merger", param="file")
    pins: list[tuple[str, str | None, str]] = []
    for key, value in data.items():
        if key == DECISION:
            if not isinstance(value, str):
                raise InvalidRequest("decision must be one alias (a string)", param=DECISION)
            pins.append((DECISION, None, value))
        elif key in (PRIMARY, MERGER):
            if not isinstance(value, Mapping) or not all(isinstance(v, str) for v in value.values()):
                raise InvalidRequest(f"{key} must be a table of shape = alias", param=key)
            pins += [(key, str(shape), alias) for shape, alias in value.items()]
        else:
            raise InvalidRequest(
                f"{key!r} is not a role; a roles file holds {', '.join(ROLES)}", param=str(key), code="unknown_role"
            )
    return pins


async def import_roles(state: BenchState, data: Any, *, replace: bool = False) -> dict[str, int]:
    """Pin every role the file names, all or nothing; with `replace`, unpin those it does not name."""
    snapshot = await state.snapshot()
    pins = [check_pin(snapshot, role, shape, alias) for role, shape, alias in read_roles(data)]
    counts = {"created": 0, "updated": 0, "unchanged": 0, "cleared": 0}
    async with state.write() as conn:
        stored = {(r["role"], r["shape"]): r["alias"] for r in await store.list_roles(conn)}
        for pin in pins:
            before = stored.get(pin[:2])
            if before == pin[2]:
                counts["unchanged"] += 1
                continue
            await _put(conn, state.actor, pin, before)
            counts["created" if before is None else "updated"] += 1
        if replace:
            named = {pin[:2] for pin in pins}
            for (role, shape), alias in sorted(stored.items()):
                if (role, shape) not in named:
                    await _delete(conn, state.actor, role, shape, alias)
                    counts["cleared"] += 1
    return counts


async def export_roles(state: BenchState) -> dict[str, Any]:
    """Every pin as a roles file holds it (what `import_roles` reads back)."""
    found: dict[str, Any] = {}
    by_role: dict[str, dict[str, str]] = {PRIMARY: {}, MERGER: {}}
    for row in await list_roles(state):
        if row["role"] == DECISION:
            found[DECISION] = row["alias"]
        elif row["role"] in by_role:
            by_role[row["role"]][row["shape"]] = row["alias"]
    return {**found, **by_role}


def roles_toml(data: Mapping[str, Any]) -> str:
    """A roles file as TOML. JSON strings are TOML basic strings (orjson never writes `\\/`)."""

    def text(value: str) -> str:
        return orjson.dumps(value).decode()

    def key(name: str) -> str:
        return name if name.replace("-", "").replace("_", "").isalnum() and name.isascii() else text(name)

    lines = ["# Roles pinned on this bench: `benchwarmers role import FILE` reads this back."]
    if DECISION in data:
        lines += ["", f"{DECISION} = {text(data[DECISION])}"]
    for role in (PRIMARY, MERGER):
        lines += ["", f"[{role}]"]
        lines += [f"{key(shape)} = {text(alias)}" for shape, alias in data.get(role, {}).items()]
    return "\n".join(lines) + "\n"
