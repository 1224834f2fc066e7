"""The seal (tests/conftest.py): no test reads the caller's BENCH* variables, ~/.benchwarmers or their database."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from benchwarmers.settings import Settings

ROOT = Path(__file__).resolve().parent.parent
# What a developer might have exported: each would change what the suite's benches do.
HOSTILE = {
    "BENCHWARMERS_REQUIRE_KEYS": "1",
    "BENCHWARMERS_DATABASE_URL": "postgresql+asyncpg://nobody@127.0.0.1:1/x",
    "BENCH_BIND": "0.0.0.0:1",
    "BENCHWARMERS_ADMIN_TOKEN": "zzz",
    "BENCHWARMERS_HOME": str(Path.home() / ".benchwarmers"),
    "benchwarmers_key": "bwk_lower_case_counts_too",
    # Also read today, by field name (populate_by_name; see tests/e2e/test_docs_tables.py).
    "DATABASE_URL": "postgresql+asyncpg://nobody@127.0.0.1:1/y",
    "URL": "http://198.51.100.1:8123",
    "BENCHWARMERS_FREE_TIERS_URL": "https://198.51.100.1/free-tiers.json",
}


def visible() -> dict[str, str]:
    fields = {name.upper() for name in Settings.model_fields} - {"HOME"}
    return {k: v for k, v in os.environ.items() if k.upper().startswith("BENCH") or k.upper() in fields}


def test_a_test_sees_only_its_own_home(tmp_path_factory: pytest.TempPathFactory):
    home = Path(os.environ["BENCHWARMERS_HOME"])
    # The seal's own: a fresh home, and no free-tier file fetched from the internet (tests give their own URL).
    assert visible() == {"BENCHWARMERS_HOME": str(home), "BENCHWARMERS_FREE_TIERS_URL": ""}
    assert home.is_relative_to(tmp_path_factory.getbasetemp())
    assert not home.exists()  # fresh: nothing has used it yet
    settings = Settings()
    assert settings.home == home
    assert settings.db_url == f"sqlite+aiosqlite:///{home / 'bench.db'}"
    assert (settings.database_url, settings.admin_token, settings.require_keys) == (None, None, False)
    assert (settings.bind, settings.url, settings.key) == ("127.0.0.1:8123", "http://127.0.0.1:8123", None)


@pytest.fixture(scope="module")
def seen_by_a_module_fixture() -> dict[str, str]:
    return visible()


def test_module_scoped_fixtures_are_sealed_too(seen_by_a_module_fixture: dict[str, str]):
    assert sorted(seen_by_a_module_fixture) == ["BENCHWARMERS_FREE_TIERS_URL", "BENCHWARMERS_HOME"]
    home = Path(seen_by_a_module_fixture["BENCHWARMERS_HOME"])
    assert home != Path.home() / ".benchwarmers"
    assert home != Path(os.environ["BENCHWARMERS_HOME"])  # each test has its own


def test_the_seal_holds_against_exported_variables(tmp_path: Path):
    # A pytest run of the two tests above, with the caller's variables exported around it.
    inner = [
        f"{__file__}::test_a_test_sees_only_its_own_home",
        f"{__file__}::test_module_scoped_fixtures_are_sealed_too",
    ]
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--basetemp={tmp_path / 'run'}", *inner],
        env={**os.environ, **HOSTILE},
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "2 passed" in result.stdout
