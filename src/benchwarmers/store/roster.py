"""Endpoints, models and their facts: the rows behind the roster and the catalog."""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from typing import Any

from sqlalchemy import delete, func, or_, select
from sqlalchemy.ext.asyncio import AsyncConnection

from benchwarmers.store.db import inserted_id
from benchwarmers.store.schema import endpoints, model_facts, models


async def list_endpoints(conn: AsyncConnection) -> list[dict[str, Any]]:
    rows = await conn.execute(select(endpoints).order_by(endpoints.c.name))
    return [dict(r._mapping) for r in rows]


async def get_endpoint(conn: AsyncConnection, name: str) -> dict[str, Any] | None:
    row = (await conn.execute(select(endpoints).where(endpoints.c.name == name))).first()
    return dict(row._mapping) if row else None


async def insert_endpoint(conn: AsyncConnection, **values: Any) -> int:
    result = await conn.execute(endpoints.insert().values(created_at=time.time(), **values))
    return inserted_id(result)


async def update_endpoint(conn: AsyncConnection, endpoint_id: int, **values: Any) -> None:
    await conn.execute(endpoints.update().where(endpoints.c.id == endpoint_id).values(**values))


async def delete_endpoint(conn: AsyncConnection, endpoint_id: int) -> None:
    # Models (and their facts) go with the endpoint; panels and seats keep the alias as text.
    model_ids = select(models.c.id).where(models.c.endpoint_id == endpoint_id)
    await conn.execute(delete(model_facts).where(model_facts.c.model_pk.in_(model_ids)))
    await conn.execute(delete(models).where(models.c.endpoint_id == endpoint_id))
    await conn.execute(delete(endpoints).where(endpoints.c.id == endpoint_id))


async def list_models(conn: AsyncConnection) -> list[dict[str, Any]]:
    query = (
        select(models, endpoints.c.name.label("endpoint"))
        .join(endpoints, endpoints.c.id == models.c.endpoint_id)
        .order_by(models.c.alias)
    )
    return [dict(r._mapping) for r in await conn.execute(query)]


async def get_model(conn: AsyncConnection, alias: str) -> dict[str, Any] | None:
    query = (
        select(models, endpoints.c.name.label("endpoint"))
        .join(endpoints, endpoints.c.id == models.c.endpoint_id)
        .where(models.c.alias == alias)
    )
    row = (await conn.execute(query)).first()
    return dict(row._mapping) if row else None


async def models_of_endpoint(conn: AsyncConnection, endpoint_id: int) -> list[dict[str, Any]]:
    rows = await conn.execute(select(models).where(models.c.endpoint_id == endpoint_id))
    return [dict(r._mapping) for r in rows]


async def streaking_models(conn: AsyncConnection) -> set[int]:
    """Models on a failure or rate-limit streak (their next answer resets it)."""
    query = select(models.c.id).where((models.c.failure_streak > 0) | (models.c.rate_limited_streak > 0))
    return {row[0] for row in await conn.execute(query)}


async def insert_model(conn: AsyncConnection, *, alias: str, endpoint_id: int, model_id: str) -> int:
    now = time.time()
    result = await conn.execute(
        models.insert().values(alias=alias, endpoint_id=endpoint_id, model_id=model_id, first_seen=now, last_seen=now)
    )
    return inserted_id(result)


async def free_alias(conn: AsyncConnection, wanted: str) -> str:
    """`wanted`, or `wanted~2`, `wanted~3`, ... when a model renamed by the user holds it."""
    taken = set(
        (await conn.scalars(select(models.c.alias).where(models.c.alias.startswith(wanted, autoescape=True)))).all()
    )
    alias, n = wanted, 1
    while alias in taken:
        n += 1
        alias = f"{wanted}~{n}"
    return alias


async def update_model(conn: AsyncConnection, model_pk: int, **values: Any) -> None:
    await conn.execute(models.update().where(models.c.id == model_pk).values(**values))


async def all_facts(conn: AsyncConnection) -> list[dict[str, Any]]:
    rows = await conn.execute(select(model_facts))
    return [dict(r._mapping) for r in rows]


async def facts_of(conn: AsyncConnection, model_pk: int) -> list[dict[str, Any]]:
    rows = await conn.execute(select(model_facts).where(model_facts.c.model_pk == model_pk))
    return [dict(r._mapping) for r in rows]


async def set_fact(conn: AsyncConnection, model_pk: int, fact: str, source: str, value: Any) -> None:
    """Write one fact from one source, replacing that source's older value (portable upsert)."""
    where = (model_facts.c.model_pk == model_pk) & (model_facts.c.fact == fact) & (model_facts.c.source == source)
    now = time.time()
    updated = await conn.execute(model_facts.update().where(where).values(value=value, learned_at=now))
    if updated.rowcount == 0:
        await conn.execute(
            model_facts.insert().values(model_pk=model_pk, fact=fact, source=source, value=value, learned_at=now)
        )


async def fact_value(conn: AsyncConnection, model_pk: int, fact: str, source: str) -> Any:
    """One source's value of one fact (None when that source says nothing)."""
    where = (model_facts.c.model_pk == model_pk) & (model_facts.c.fact == fact) & (model_facts.c.source == source)
    return await conn.scalar(select(model_facts.c.value).where(where))


async def clear_fact(conn: AsyncConnection, model_pk: int, fact: str, source: str) -> None:
    await conn.execute(
        delete(model_facts).where(
            (model_facts.c.model_pk == model_pk) & (model_facts.c.fact == fact) & (model_facts.c.source == source)
        )
    )


async def replace_source_facts(
    conn: AsyncConnection, model_pk: int, source: str, facts: dict[str, Any], keep: Sequence[str] = ()
) -> None:
    """Set every fact a source gave now; drop that source's facts it no longer gives."""
    existing = await facts_of(conn, model_pk)
    for row in existing:
        if row["source"] == source and row["fact"] not in facts and row["fact"] not in keep:
            await clear_fact(conn, model_pk, row["fact"], source)
    for fact, value in facts.items():
        await set_fact(conn, model_pk, fact, source, value)


def group_facts(rows: Iterable[dict[str, Any]]) -> dict[int, dict[str, dict[str, tuple[Any, float]]]]:
    """model pk → source → fact → (value, learned_at)."""
    grouped: dict[int, dict[str, dict[str, tuple[Any, float]]]] = {}
    for row in rows:
        by_source = grouped.setdefault(row["model_pk"], {})
        by_source.setdefault(row["source"], {})[row["fact"]] = (row["value"], row["learned_at"])
    return grouped


async def count_failure(conn: AsyncConnection, pk: int, error: str, rate_limited: bool) -> tuple[int, int]:
    """Add one to the model's failure streak (and its 429 streak); the new (failures, 429s) in a row."""
    values: dict[str, Any] = {"failure_streak": models.c.failure_streak + 1, "last_error": error or None}
    if rate_limited:
        values["rate_limited_streak"] = models.c.rate_limited_streak + 1
    query = (
        models.update()
        .where(models.c.id == pk)
        .values(**values)
        .returning(models.c.failure_streak, models.c.rate_limited_streak)
    )
    failures, limited = (await conn.execute(query)).one()
    return int(failures), int(limited)


async def end_streaks(conn: AsyncConnection, pks: Sequence[int]) -> None:
    """Models that answered: their streaks end (one statement, a no-op for models without one)."""
    if pks:
        await conn.execute(
            models.update()
            .where(models.c.id.in_(pks) & or_(models.c.failure_streak > 0, models.c.rate_limited_streak > 0))
            .values(failure_streak=0, rate_limited_streak=0)
        )


async def stored_facts(conn: AsyncConnection, endpoint_id: int) -> dict[int, dict[str, dict[str, Any]]]:
    """model pk → source → fact → value, for every model of one endpoint (one query)."""
    query = (
        select(model_facts.c.model_pk, model_facts.c.source, model_facts.c.fact, model_facts.c.value)
        .join(models, models.c.id == model_facts.c.model_pk)
        .where(models.c.endpoint_id == endpoint_id)
    )
    found: dict[int, dict[str, dict[str, Any]]] = {}
    for pk, source, fact, value in await conn.execute(query):
        found.setdefault(pk, {}).setdefault(source, {})[fact] = value
    return found


async def newest_endpoint_refresh(conn: AsyncConnection) -> float | None:
    newest: float | None = await conn.scalar(select(func.max(endpoints.c.refreshed_at)))
    return newest


async def largest_answered(conn: AsyncConnection) -> dict[str, int]:
    """alias → the largest prompt (estimated tokens) it has answered, as learned from its seats."""
    query = (
        select(models.c.alias, model_facts.c.value)
        .join(model_facts, model_facts.c.model_pk == models.c.id)
        .where((model_facts.c.fact == "answered_tokens") & (model_facts.c.source == "learned"))
    )
    return {alias: int(value) for alias, value in await conn.execute(query) if isinstance(value, int)}


async def clear_learned(conn: AsyncConnection, endpoint_id: int, fact: str) -> None:
    """Forget what errors taught about one fact for an endpoint's models (a refresh re-reads it)."""
    pks = select(models.c.id).where(models.c.endpoint_id == endpoint_id)
    await conn.execute(
        delete(model_facts).where(
            model_facts.c.model_pk.in_(pks) & (model_facts.c.fact == fact) & (model_facts.c.source == "learned")
        )
    )


# -- retirement: models that kept failing, and the probe that brings them back ----------------------


async def retire_model(conn: AsyncConnection, pk: int, *, now: float, next_probe_at: float) -> bool:
    """Retire a model (unless it already is); True when this call retired it."""
    result = await conn.execute(
        models.update()
        .where((models.c.id == pk) & models.c.retired_at.is_(None))
        .values(retired_at=now, next_probe_at=next_probe_at, probes=0)
    )
    return bool(result.rowcount)


async def restore_model(conn: AsyncConnection, pk: int) -> bool:
    """Bring a retired model back with a clean slate; True when it was retired."""
    result = await conn.execute(
        models.update()
        .where((models.c.id == pk) & models.c.retired_at.is_not(None))
        .values(retired_at=None, next_probe_at=None, probes=0, failure_streak=0, rate_limited_streak=0)
    )
    return bool(result.rowcount)


async def probe_failed(conn: AsyncConnection, pk: int, *, probes: int, next_probe_at: float, error: str) -> None:
    await conn.execute(
        models.update()
        .where((models.c.id == pk) & models.c.retired_at.is_not(None))
        .values(probes=probes, next_probe_at=next_probe_at, last_error=error or None)
    )


async def due_probes(conn: AsyncConnection, now: float) -> list[dict[str, Any]]:
    """Retired models whose next probe is due, the longest waiting first."""
    query = (
        select(models.c.id, models.c.alias, models.c.probes, models.c.next_probe_at, models.c.retired_at)
        .where(models.c.retired_at.is_not(None) & (models.c.next_probe_at <= now))
        .order_by(models.c.next_probe_at, models.c.alias)
    )
    return [dict(row._mapping) for row in await conn.execute(query)]


async def next_probe_at(conn: AsyncConnection) -> float | None:
    """When the soonest probe of a retired model is due; None when no model is retired."""
    soonest: float | None = await conn.scalar(
        select(func.min(models.c.next_probe_at)).where(models.c.retired_at.is_not(None))
    )
    return soonest
