"""The CLI starts without loading what a command does not use (perf/startup.py measures the time).

Each command runs in a fresh interpreter as `python -m benchwarmers ...`; at exit the interpreter
writes the names in `sys.modules` to a file, and the test holds those names to what the command needs:
`--version` and `--help` load none of the bench's store, clients or server, a listing opens the store
but loads no HTTP client, no server and no libcst."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import typer

from benchwarmers import __version__
from benchwarmers.cli.app import app

ROOT = Path(__file__).resolve().parents[2]

RECORD = """
import atexit, json, os, runpy, sys
atexit.register(lambda: open(os.environ["MODULES_OUT"], "w").write(json.dumps(sorted(sys.modules))))
sys.argv = ["benchwarmers", *json.loads(os.environ["BENCH_ARGS"])]
runpy.run_module("benchwarmers", run_name="__main__", alter_sys=True)
"""

# What a command that calls no provider and serves nothing never needs.
SERVER_AND_CLIENTS = ("aiohttp", "httpx", "httpx2", "openai", "fastapi", "starlette", "uvicorn", "jinja2", "libcst")
# ... and what only a command that opens the bench needs.
THE_BENCH = ("sqlalchemy", "alembic", "pydantic_settings", "jsonschema", "limits", "benchwarmers.bench.services")


def run_cli(args: list[str], tmp_path: Path) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    out = tmp_path / "modules.json"
    env = {
        **os.environ,
        "BENCH_ARGS": json.dumps(args),
        "MODULES_OUT": str(out),
        "BENCHWARMERS_HOME": str(tmp_path / "home"),
        "COLUMNS": "200",
    }
    done = subprocess.run(
        [sys.executable, "-c", RECORD], env=env, cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    return done, set(json.loads(out.read_text()))


def loaded(modules: set[str], packages: tuple[str, ...]) -> list[str]:
    return sorted(p for p in packages if p in modules)


def test_version_loads_neither_the_bench_nor_any_client(tmp_path):
    done, modules = run_cli(["--version"], tmp_path)
    assert (done.returncode, done.stdout, done.stderr) == (0, f"{__version__}\n", "")
    assert loaded(modules, (*SERVER_AND_CLIENTS, *THE_BENCH, "pydantic", "rich.progress")) == []


def test_help_lists_every_command_without_loading_the_bench(tmp_path):
    done, modules = run_cli(["--help"], tmp_path)
    assert done.returncode == 0, done.stderr
    group = typer.main.get_command(app)
    names = group.list_commands(typer.Context(group))  # type: ignore[attr-defined]
    assert len(names) > 25
    lines = [line.strip("│ ") for line in done.stdout.splitlines()]
    for name in names:
        command = group.get_command(typer.Context(group), name)  # type: ignore[attr-defined]
        short = command.get_short_help_str(limit=60)[:20]
        assert any(line.startswith(f"{name} ") and short in line for line in lines), (name, short)
    assert loaded(modules, SERVER_AND_CLIENTS + THE_BENCH) == []


def test_gateway_set_still_has_its_options_when_asked_for(tmp_path):
    # `set` joins the gateway group lazily (its options come from the settings model).
    done, modules = run_cli(["gateway", "set", "--help"], tmp_path)
    assert done.returncode == 0, done.stderr
    assert "--ping-interval" in done.stdout
    assert "--retention-days" in done.stdout
    assert "benchwarmers.nouns.gateway" in modules


@pytest.mark.parametrize("group", ["collection", "model", "endpoint"])
def test_a_listing_opens_the_store_but_loads_no_client_server_or_libcst(tmp_path, group):
    done, modules = run_cli([group, "list", "--json"], tmp_path)
    assert (done.returncode, done.stdout, done.stderr) == (0, "[]\n", "")
    assert "sqlalchemy" in modules  # it did open the bench
    assert loaded(modules, (*SERVER_AND_CLIENTS, "jsonschema", "limits")) == []
