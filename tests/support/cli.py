"""`benchwarmers` commands run in this process, as the `cli` fixture (tests/conftest.py) gives them."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

import pytest
from typer.testing import CliRunner

from benchwarmers.cli.app import app


class Cli(Protocol):
    home: Path

    def __call__(self, *args: str, answers: str | None = None) -> tuple[int, str]: ...


def cli_in(home: Path, monkeypatch: pytest.MonkeyPatch) -> Cli:
    """`invoke(*args)` runs `benchwarmers ARGS...` on `home`, 200 columns wide, and returns (exit code, output);
    `answers` is typed at its prompts."""
    monkeypatch.setenv("BENCHWARMERS_HOME", str(home))
    monkeypatch.setenv("COLUMNS", "200")
    runner = CliRunner()

    def invoke(*args: str, answers: str | None = None) -> tuple[int, str]:
        result = runner.invoke(app, list(args), input=answers)
        return result.exit_code, result.output

    invoke.home = home  # type: ignore[attr-defined]
    return invoke  # type: ignore[return-value]
