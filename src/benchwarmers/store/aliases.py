"""Renaming aliases and endpoints in every table that names them, inside the caller's transaction.

An alias is stored as text wherever a model is named: the roster, collections (members, merger),
roles, decision models, seats (the evidence is read from them) and alerts (a went-paid alert keeps
a model out of explorer seats by its alias). Facts follow by the model's primary key. The changes
log and a panel's request, reply and skipped list are left as they were: they record what was sent.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import Column, Table, case, select
from sqlalchemy.ext.asyncio import AsyncConnection

from benchwarmers.store.schema import alerts, collections, decision_models, endpoints, models, roles, seats

CHUNK = 400  # aliases per statement: each costs three bound parameters, far below any driver's limit


async def _rewrite(conn: AsyncConnection, table: Table, column: Column[Any], renames: Mapping[str, str]) -> int:
    """Every `column` value that is a key of `renames` becomes its value; the rows changed."""
    changed = 0
    pairs = list(renames.items())
    for start in range(0, len(pairs), CHUNK):
        chunk = dict(pairs[start : start + CHUNK])
        result = await conn.execute(
            table.update().where(column.in_(list(chunk))).values({column.name: case(chunk, value=column)})
        )
        changed += result.rowcount
    return changed


async def _rename_in_collections(conn: AsyncConnection, renames: Mapping[str, str]) -> list[str]:
    """Members and mergers renamed in place (order kept); the names of the collections changed."""
    changed = []
    rows = await conn.execute(select(collections.c.name, collections.c.members, collections.c.merger))
    for name, members, merger in rows.all():
        new_members = [renames.get(m, m) for m in members]
        new_merger = renames.get(merger, merger) if merger is not None else None
        if new_members != members or new_merger != merger:
            await conn.execute(
                collections.update().where(collections.c.name == name).values(members=new_members, merger=new_merger)
            )
            changed.append(name)
    return sorted(changed)


async def rename_aliases(conn: AsyncConnection, renames: Mapping[str, str]) -> dict[str, Any]:
    """Give every model in `renames` (old alias → new alias) its new alias everywhere it is stored.

    The caller has checked that no new alias is taken and that none is also an old one. Returns what
    moved: the collections changed, and the rows rewritten per table.
    """
    if not renames:
        return {"collections": [], "roles": 0, "decision_models": 0, "seats": 0, "alerts": 0}
    await _rewrite(conn, models, models.c.alias, renames)
    return {
        "collections": await _rename_in_collections(conn, renames),
        "roles": await _rewrite(conn, roles, roles.c.alias, renames),
        "decision_models": await _rewrite(conn, decision_models, decision_models.c.alias, renames),
        "seats": await _rewrite(conn, seats, seats.c.alias, renames),
        "alerts": await _rewrite(conn, alerts, alerts.c.subject, renames),
    }


async def rename_endpoint(conn: AsyncConnection, endpoint_id: int, old: str, new: str) -> int:
    """The endpoint's new name, and on every seat recorded under its old one; the seats rewritten."""
    await conn.execute(endpoints.update().where(endpoints.c.id == endpoint_id).values(name=new))
    result = await conn.execute(seats.update().where(seats.c.endpoint == old).values(endpoint=new))
    return int(result.rowcount)


async def taken_aliases(conn: AsyncConnection, aliases: Sequence[str]) -> list[str]:
    """Which of `aliases` a model on the roster holds."""
    found: list[str] = []
    for start in range(0, len(aliases), CHUNK):
        chunk = list(aliases[start : start + CHUNK])
        found += (await conn.scalars(select(models.c.alias).where(models.c.alias.in_(chunk)))).all()
    return sorted(found)


async def under_prefix(conn: AsyncConnection, name: str, endpoint_id: int | None = None) -> list[str]:
    """Aliases that start with `name/` on models of endpoints other than `endpoint_id`."""
    prefix = f"{name}/"
    query = select(models.c.alias).where(models.c.alias.startswith(prefix, autoescape=True))
    if endpoint_id is not None:
        query = query.where(models.c.endpoint_id != endpoint_id)
    # SQLite's LIKE ignores case: the prefix must match exactly.
    return sorted(alias for alias in (await conn.scalars(query)).all() if alias.startswith(prefix))
