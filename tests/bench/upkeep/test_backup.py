"""Backups while serving, restore, and moving a whole bench from SQLite to PostgreSQL."""

from __future__ import annotations

from pathlib import Path

import httpx2
import orjson
import pytest
from typer.testing import CliRunner

from benchwarmers.cli.app import app
from tests.support.benchserver import BenchServer, add_fake_endpoint, listed
from tests.support.panels import collection

PROVIDER_KEY = "sk-test-fake-provider-key-0001"  # add_fake_endpoint's


def run_cli(home: Path, *args: str, database_url: str | None = None) -> tuple[int, str]:
    env = {"BENCHWARMERS_HOME": str(home), "COLUMNS": "200"}
    if database_url:
        env["BENCHWARMERS_DATABASE_URL"] = database_url
    result = CliRunner().invoke(app, list(args), env=env)
    return result.exit_code, result.output


def ask(server: BenchServer, text: str) -> dict:
    body = {"model": "bench/pair", "messages": [{"role": "user", "content": text}]}
    reply = httpx2.post(f"{server.v1}/chat/completions", json=body, timeout=30)
    assert reply.status_code == 200, reply.text
    return reply.json()


def panel_ids(server: BenchServer) -> list[str]:
    return [p["id"] for p in httpx2.get(f"{server.url}/bench/panels?limit=100").json()["data"]]


@pytest.fixture
def pair(server: BenchServer, fake) -> BenchServer:
    add_fake_endpoint(server, fake, models=[listed("llama-3.3-70b"), listed("qwen3-32b"), listed("phi-4")])
    collection(server, "pair", ["llama-3.3-70b", "qwen3-32b"], max_explorers=0)
    return server


@pytest.mark.sqlite_only
def test_backup_while_serving_and_restore_into_the_running_bench(pair, tmp_path):
    home = pair.settings.home
    kept = [ask(pair, f"before {i}")["bench"]["panel"] for i in range(3)]
    target = tmp_path / "bench-backup.db"
    code, output = run_cli(home, "backup", str(target))
    assert code == 0, output
    assert output.startswith(f"backed up {home / 'bench.db'} to {target} (")
    assert oct(target.stat().st_mode & 0o777) == "0o600"
    later = ask(pair, "after the backup")["bench"]["panel"]
    assert set(panel_ids(pair)) == {*kept, later}

    code, output = run_cli(home, "restore", str(target))
    assert (code, output) == (0, f"restored {target} (schema 0016, migrated to the newest)\n")
    # The running server reads the restored database at its next request: no restart.
    assert set(panel_ids(pair)) == set(kept)
    assert ask(pair, "after the restore")["bench"]["seats"][0]["status"] == "ok"

    code, output = run_cli(home, "restore", str(tmp_path / "missing.db"))
    assert (code, output) == (
        1,
        f"error: {tmp_path / 'missing.db'} is not a Benchwarmers database backup (no such file, or no schema in it)\n",
    )


@pytest.mark.postgres_only
def test_backup_on_postgresql_says_to_use_pg_dump(server, store, tmp_path):
    assert store == "postgres"
    code, output = run_cli(server.settings.home, "backup", str(tmp_path / "x.db"))
    assert code == 1
    assert output.startswith("error: the bench's database is PostgreSQL: back it up with pg_dump, ")


@pytest.mark.sqlite_only
def test_a_whole_bench_moves_from_sqlite_to_postgresql(pair, fake, pg_cluster, tmp_path):
    home = pair.settings.home
    pair.admin(lambda bench: bench.models.set_model("fake/phi-4", limits={"requests-minute": 7}))
    seats = [ask(pair, f"q{i}")["bench"]["seats"] for i in range(3)]
    verdict = {"call": seats[0][0]["call"], "useful": True, "note": "held", "real": ["a claim"]}
    assert httpx2.post(f"{pair.url}/bench/verdict", json=verdict).status_code == 200
    pair.admin(lambda bench: bench.keys.create("ci", rpm=5))
    export = tmp_path / "bench.jsonl"
    code, output = run_cli(home, "export", "bench", "-o", str(export))
    assert code == 0, output
    lines = [orjson.loads(line) for line in export.read_bytes().splitlines()]
    assert lines[0] == {"kind": "benchwarmers-bench", "version": lines[0]["version"], "schema": "0016"}
    assert PROVIDER_KEY.encode() not in export.read_bytes()
    assert {line["table"] for line in lines[1:]} >= {"endpoints", "models", "collections", "panels", "seats"}
    assert "gateway_keys" not in {line.get("table") for line in lines}

    url = pg_cluster.new_database()
    new_home = tmp_path / "new-home"
    code, output = run_cli(new_home, "import", str(export), database_url=url)
    assert code == 0, output
    assert output.startswith("imported ") and "3 panels" in output
    code, output = run_cli(new_home, "import", str(export), database_url=url)
    assert code == 1 and output.startswith("error: this database already holds a bench")

    moved = BenchServer(new_home, database_url=url).start()
    try:
        for path in ("/bench/panels?limit=100", "/api/collections", "/api/leaderboard", "/api/models/fake/phi-4"):
            assert httpx2.get(f"{moved.url}{path}").json() == httpx2.get(f"{pair.url}{path}").json(), path
        [endpoint] = httpx2.get(f"{moved.url}/api/endpoints").json()["data"]
        assert endpoint["api_key"] is None  # set it again on the new bench
        # New rows go after the imported ones (PostgreSQL's id sequences were moved on).
        assert httpx2.post(f"{moved.url}/bench/verdict", json={**verdict, "useful": False}).status_code == 200
    finally:
        moved.stop()
        pg_cluster.drop(url)
