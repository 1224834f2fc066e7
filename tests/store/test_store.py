"""The store: migrations from empty and again, settings, stored keys unreadable on disk."""

from __future__ import annotations

import asyncio
import os
import sqlite3
import stat
from collections.abc import Iterator

import pytest
from alembic.script import ScriptDirectory
from sqlalchemy import inspect

from benchwarmers.bench.admin import alerts as bench_alerts
from benchwarmers.bench.services import Bench
from benchwarmers.settings import Settings, parse_bind
from benchwarmers.store.db import SCHEMA_REVISION, alembic_config, create_engine, migrate

TABLES = {
    "alembic_version",
    "alerts",
    "changes",
    "collections",
    "decision_models",
    "endpoints",
    "gateway_keys",
    "model_facts",
    "models",
    "notify_deliveries",
    "notify_targets",
    "panels",
    "roles",
    "seats",
    "settings",
    "suite_results",
    "suite_runs",
    "verdicts",
}


def table_names(url: str) -> set[str]:
    async def main() -> set[str]:
        engine = create_engine(url)
        await migrate(engine)
        await migrate(engine)  # a second run is a no-op
        async with engine.connect() as conn:
            names = await conn.run_sync(lambda c: set(inspect(c).get_table_names()))
            version = (await conn.exec_driver_sql("SELECT version_num FROM alembic_version")).scalar()
        await engine.dispose()
        assert version == ScriptDirectory.from_config(alembic_config()).get_current_head()
        return names

    return asyncio.run(main())


@pytest.fixture
def empty_url(store, tmp_path, request) -> Iterator[str]:
    """A database with no schema yet, on this test's store."""
    if store == "sqlite":
        yield f"sqlite+aiosqlite:///{tmp_path / 'bench.db'}"
        return
    cluster = request.getfixturevalue("pg_cluster")
    url = cluster.empty_database()
    try:
        yield url
    finally:
        cluster.drop(url)


def alembic_to(url: str, revision: str, *, down: bool = False, then=None) -> None:
    """Upgrade (or downgrade) the database at `url` to `revision` with Alembic; `then(connection)` after."""
    from alembic import command

    async def main() -> None:
        engine = create_engine(url)

        def move(connection):
            config = alembic_config()
            config.attributes["connection"] = connection
            (command.downgrade if down else command.upgrade)(config, revision)
            if then is not None:
                then(connection)

        async with engine.begin() as conn:
            await conn.run_sync(move)
        await engine.dispose()

    asyncio.run(main())


def schema_drift(url: str) -> list:
    """What differs between the database's schema and store/schema.py (nothing, after migrations)."""
    from alembic.autogenerate import compare_metadata
    from alembic.migration import MigrationContext

    from benchwarmers.store.schema import metadata

    async def main() -> list:
        engine = create_engine(url)
        async with engine.connect() as conn:
            found = await conn.run_sync(lambda c: compare_metadata(MigrationContext.configure(c), metadata))
        await engine.dispose()
        return found

    return asyncio.run(main())


def tables_now(url: str) -> set[str]:
    """The tables there are, without migrating."""

    async def main() -> set[str]:
        engine = create_engine(url)
        async with engine.connect() as conn:
            names = await conn.run_sync(lambda c: set(inspect(c).get_table_names()))
        await engine.dispose()
        return names

    return asyncio.run(main())


REVISIONS = [r.revision for r in reversed(list(ScriptDirectory.from_config(alembic_config()).walk_revisions()))]


@pytest.mark.parametrize("start", REVISIONS[:-1])
def test_every_earlier_revision_migrates_to_the_head_on_open(empty_url, start, tmp_path):
    alembic_to(empty_url, start)
    assert table_names(empty_url) == TABLES
    assert schema_drift(empty_url) == []


def test_the_head_downgrades_to_nothing_and_upgrades_again(empty_url):
    assert table_names(empty_url) == TABLES
    for revision in reversed(["base", *REVISIONS[:-1]]):
        alembic_to(empty_url, revision, down=True)
    assert tables_now(empty_url) == {"alembic_version"}
    assert table_names(empty_url) == TABLES
    assert schema_drift(empty_url) == []


def test_the_known_schema_revision_is_alembics_head():
    assert ScriptDirectory.from_config(alembic_config()).get_current_head() == SCHEMA_REVISION


def test_an_older_database_is_migrated_forward_on_open(tmp_path, empty_url):
    url = empty_url
    alembic_to(url, "0001")

    async def main() -> str:
        engine = create_engine(url)
        async with Bench(Settings(home=tmp_path, database_url=url)):
            pass
        async with engine.connect() as conn:
            version = (await conn.exec_driver_sql("SELECT version_num FROM alembic_version")).scalar()
        await engine.dispose()
        return version

    assert asyncio.run(main()) == SCHEMA_REVISION


def test_models_and_alerts_from_before_retirement_migrate_as_not_retired_and_unresolved(tmp_path, empty_url):
    url = empty_url

    def rows(connection):
        connection.exec_driver_sql(
            "INSERT INTO endpoints (id, name, base_url, kind, free_tier, enabled, created_at) "
            "VALUES (1, 'p', 'https://example.invalid/v1', 'openai', true, true, 0)"
        )
        connection.exec_driver_sql(
            "INSERT INTO models (id, alias, endpoint_id, model_id, enabled, gone, first_seen, "
            "rate_limited_streak, failure_streak) VALUES (1, 'p/m', 1, 'm', true, false, 0, 0, 7)"
        )
        connection.exec_driver_sql(
            "INSERT INTO alerts (kind, subject, message, created_at) VALUES ('failing', 'p/m', 'old', 0)"
        )

    alembic_to(url, "0002", then=rows)

    async def main() -> tuple[dict, list[dict]]:
        async with Bench(Settings(home=tmp_path, database_url=url)) as bench:
            model = await bench.models.model("p/m")
            found = await bench_alerts.list_alerts(bench.state)
        return model, found

    model, found = asyncio.run(main())
    assert (model["status"], model["retired_at"], model["next_probe_at"]) == ("ok", None, None)
    assert [(a["kind"], a["acknowledged_at"], a["resolved_at"]) for a in found] == [("failing", None, None)]


def test_migrations_create_everything_and_rerun_cleanly(empty_url, store, tmp_path):
    assert table_names(empty_url) == TABLES
    assert table_names(empty_url) == TABLES
    if store != "sqlite":
        return
    with sqlite3.connect(tmp_path / "bench.db") as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


@pytest.mark.sqlite_only
def test_home_is_created_private_and_env_names_are_the_contract(tmp_path, monkeypatch):
    home = tmp_path / "data" / "bench"
    monkeypatch.setenv("BENCHWARMERS_HOME", str(home))
    monkeypatch.setenv("BENCH_BIND", "127.0.0.1:9000")
    monkeypatch.setenv("BENCHWARMERS_REQUIRE_KEYS", "1")
    monkeypatch.setenv("BENCH_ALLOWED_ORIGINS", "https://app.example, https://b.example/")
    monkeypatch.setenv("BENCHWARMERS_PUBLIC_URL", "https://bench.example/base")
    settings = Settings()
    assert settings.home == home
    assert settings.db_url == f"sqlite+aiosqlite:///{home / 'bench.db'}"
    assert settings.host_port() == ("127.0.0.1", 9000)
    assert settings.keys_required is True
    assert settings.origins == {"https://app.example", "https://b.example", "https://bench.example"}
    assert settings.client == "builtin"
    settings.ensure_home()
    assert stat.S_IMODE(os.stat(home).st_mode) == 0o700
    assert parse_bind("[::1]:8200") == ("::1", 8200)


def test_a_stored_api_key_is_not_readable_in_the_database_file(tmp_path):
    secret = "sk-canary-0123456789abcdefghijklmnop"

    async def main() -> None:
        async with Bench(Settings(home=tmp_path)) as bench:
            await bench.endpoints.add_endpoint("p", "https://example.invalid/v1", api_key=secret)
            snapshot = await bench.state.snapshot()
            assert snapshot.endpoints["p"].ref.api_key == secret
            listed = await bench.endpoints.list_endpoints()
            assert listed[0]["api_key"] == "…mnop"

    asyncio.run(main())
    for name in os.listdir(tmp_path):
        path = tmp_path / name
        if path.is_file() and name != "secret.key":
            assert secret.encode() not in path.read_bytes(), name
    assert stat.S_IMODE(os.stat(tmp_path / "secret.key").st_mode) == 0o600
