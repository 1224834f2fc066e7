"""docs/GATEWAY.md's settings table is the settings model written out: a change to a setting's
default, range or description that is not made in the docs too fails here, with the table to paste."""

from __future__ import annotations

from pathlib import Path

from benchwarmers.nouns import gateway as gateway_config
from benchwarmers.nouns.gateway import FIELDS, GATEWAY_DEFAULTS

GATEWAY_MD = Path(__file__).resolve().parents[2] / "docs" / "GATEWAY.md"


def settings_table() -> str:
    rows = [
        f"| `{name}` | {gateway_config.number(GATEWAY_DEFAULTS[name])} | {gateway_config.range_text(name, short=True)} "
        f"| {gateway_config.description(name)} |"
        for name in FIELDS
    ]
    return "\n".join(["| setting | default | range | what it does |", "|---|---|---|---|", *rows]) + "\n"


def test_the_settings_table_in_the_docs_is_the_model():
    text = GATEWAY_MD.read_text(encoding="utf-8")
    section = text[text.index("\n## Gateway settings\n") :].splitlines(keepends=True)
    start = next((i for i, line in enumerate(section) if line.startswith("|")), len(section))
    end = next((i for i in range(start, len(section)) if not section[i].startswith("|")), len(section))
    table = settings_table()
    assert "".join(section[start:end]) == table, f"docs/GATEWAY.md's settings table should be:\n\n{table}"
