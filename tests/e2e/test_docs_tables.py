"""The documentation's tables, checked against the code they describe.

README.md "Configuration" lists every environment variable `benchwarmers.settings.Settings` reads, with its
default. (docs/GATEWAY.md's gateway-settings table is not checked here yet.)
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from pydantic import AliasChoices

from benchwarmers.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
CODE = re.compile(r"`([^`]*)`")


def section_table(markdown: str, heading: str) -> list[list[str]]:
    """The first table under `heading`: its rows (header first, separator dropped), cells stripped."""
    lines = markdown.splitlines()
    start = lines.index(heading)
    rows: list[list[str]] = []
    for line in lines[start + 1 :]:
        if line.startswith("#"):
            break
        if line.startswith("|"):
            rows.append([cell.strip() for cell in line.strip().strip("|").split("|")])
        elif rows:
            break
    assert rows, f"no table under {heading!r}"
    return [row for row in rows if not set("".join(row)) <= set("-: ")]


def readme_variables() -> dict[str, str]:
    """README's configuration table as {variable: default cell}; a row may name several variables."""
    header, *rows = section_table((ROOT / "README.md").read_text(encoding="utf-8"), "## Configuration")
    assert header == ["variable", "default", "meaning"]
    found: dict[str, str] = {}
    for variables_cell, default_cell, _meaning in rows:
        names = CODE.findall(variables_cell)
        defaults = default_cell.split(", ") if len(names) > 1 else [default_cell]
        assert len(defaults) == len(names), f"one default per variable in {variables_cell!r}: {default_cell!r}"
        for name, default in zip(names, defaults, strict=True):
            assert name not in found, f"{name} is listed twice"
            found[name] = default
    return found


def settings_variables() -> dict[str, object]:
    """{variable: the field's default} for every variable name Settings reads by its validation alias."""
    found: dict[str, object] = {}
    for field_name, field in Settings.model_fields.items():
        alias = field.validation_alias
        choices = alias.choices if isinstance(alias, AliasChoices) else [alias]
        assert all(isinstance(choice, str) for choice in choices), f"{field_name}: alias {alias!r} is not a name"
        for choice in choices:
            found[str(choice)] = field.default
    return found


def test_the_configuration_table_lists_exactly_the_variables_settings_reads():
    assert set(readme_variables()) == set(settings_variables())


@pytest.mark.parametrize("variable", sorted(settings_variables()))
def test_each_default_in_the_table_is_the_codes(variable: str):
    default, cell = settings_variables()[variable], readme_variables()[variable]
    if default is None:
        # Unset, or a description of what happens then ("SQLite in the home folder"): never a value.
        assert not CODE.search(cell), f"{variable} has no default value, but the README shows {cell!r}"
    elif default is False or default == "":
        assert cell == "unset"
    else:
        assert cell == f"`{default}`"


def test_settings_reads_no_variable_beyond_the_table(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    as_installed = Settings()
    for name in Settings.model_fields:
        monkeypatch.setenv(name.upper(), {"require_keys": "1", "client": "llm", "bind": "192.0.2.1:1"}.get(name, "x"))
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("BENCHWARMERS_HOME")
    assert Settings().model_dump() == {**as_installed.model_dump(), "home": tmp_path / ".benchwarmers"}


def test_suite_md_lists_each_task_kinds_max_tokens():
    from benchwarmers.bench.suite.tasks import MAX_TOKENS

    header, *rows = section_table((ROOT / "docs" / "SUITE.md").read_text(encoding="utf-8"), "## Running")
    assert header == ["kind", "`max_tokens`"]
    assert {CODE.fullmatch(kind)[1]: int(tokens) for kind, tokens in rows} == MAX_TOKENS
