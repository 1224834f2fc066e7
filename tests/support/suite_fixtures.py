"""Fixtures for the suite's end-to-end tests: four scripted reviewers on the fake provider and a
fresh home with `bench/reviewers`, and the CLI run in-process."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING

import orjson
import pytest

from benchwarmers.bench.suite.tasks import load_tasks, select
from benchwarmers.settings import Settings
from tests.fakes import reviewers
from tests.fakes.upstream import FakeUpstream

# A plugin of every test module (tests/conftest.py): the bench and the CLI are imported where they are used,
# so that collecting a test that needs neither does not load them.
if TYPE_CHECKING:
    from benchwarmers.bench.services import Bench

REVIEWERS = reviewers.REVIEWERS
PAIRS = select(load_tasks(), ["rebench-*"])


def run(settings: Settings, action):
    from benchwarmers.bench.services import Bench

    async def main():
        async with Bench(settings, actor="test") as bench:
            return await action(bench)

    return asyncio.run(main())


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    monkeypatch.setenv("BENCHWARMERS_HOME", str(home))
    monkeypatch.setenv("COLUMNS", "200")
    return home


def reviewers_on_fake(home: Path, latency: float = 0.0):
    """A fresh home with four scripted reviewers on the fake provider and `bench/reviewers`."""
    from tests.support.benchserver import listed

    with FakeUpstream() as fake:
        for model, make in REVIEWERS.items():
            fake.script(model, respond=make(PAIRS), latency=latency)
        fake.listing("/v1/models", {"object": "list", "data": [listed(m, 128_000) for m in REVIEWERS]})
        settings = Settings(home=home)

        async def setup(bench: Bench) -> None:
            await bench.endpoints.add_endpoint("fake", fake.base_url, "openrouter", api_key="sk-fake-1", free_tier=True)
            await bench.endpoints.refresh_endpoint("fake")
            members = [f"fake/{m}" for m in REVIEWERS]
            await bench.collections.add_collection(
                {"name": "reviewers", "members": members, "description": "reviews", "tags": [], "max_explorers": 0}
            )

        run(settings, setup)
        yield settings, fake


@pytest.fixture
def reviewers_bench(home: Path):
    yield from reviewers_on_fake(home)


def cli(*args: str) -> tuple[int, str]:
    from typer.testing import CliRunner

    from benchwarmers.cli.app import app

    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.output


def report_json(run_id: str = "") -> dict:
    code, out = cli("suite", "report", *([run_id] if run_id else []), "--json")
    assert code == 0, out
    return orjson.loads(out)
