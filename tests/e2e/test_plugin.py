"""The Claude Code plugin in plugin/: its JSON loads, its server command is real, its paths exist."""

from __future__ import annotations

import json
import re
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from benchwarmers import __version__
from benchwarmers.cli.app import app
from benchwarmers.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
PLUGIN = ROOT / "plugin"
# Manifest keys that name files or folders inside the plugin (each a path or a list of paths).
PATH_KEYS = ("commands", "agents", "skills", "hooks", "mcpServers", "outputStyles", "lspServers")
PLUGIN_ROOT_PATH = re.compile(r"\$\{CLAUDE_PLUGIN_ROOT\}/([^\s\"'`]+)")


def load(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def frontmatter(path: Path) -> dict[str, Any]:
    text = path.read_text(encoding="utf-8")
    assert text.startswith("---\n"), f"{path} has no frontmatter"
    head, _, body = text[4:].partition("\n---\n")
    assert body.strip(), f"{path} has no body"
    return yaml.safe_load(head)


def expand(value: str, env: dict[str, str]) -> str:
    """Claude Code's `${VAR}` / `${VAR:-default}` expansion in .mcp.json."""

    def one(match: re.Match[str]) -> str:
        name, _, default = match.group(1).partition(":-")
        return env.get(name) or default

    return re.sub(r"\$\{([^}]+)\}", one, value)


def test_the_manifest_names_the_plugin_and_every_path_it_lists_exists():
    manifest = load(PLUGIN / ".claude-plugin" / "plugin.json")
    assert manifest["name"] == "benchwarmers"
    assert manifest["version"] == __version__
    assert manifest["description"]
    for key in PATH_KEYS:
        value = manifest.get(key)
        if isinstance(value, str | list):
            for path in [value] if isinstance(value, str) else value:
                assert path.startswith("./"), f"{key}: {path} must be relative to the plugin root"
                assert (PLUGIN / path).exists(), f"{key}: {path} does not exist"


def test_the_marketplace_offers_this_plugin():
    market = load(PLUGIN / ".claude-plugin" / "marketplace.json")
    [entry] = market["plugins"]
    assert entry["name"] == "benchwarmers"
    assert load(PLUGIN / entry["source"] / ".claude-plugin" / "plugin.json")["name"] == entry["name"]


def test_the_mcp_server_runs_benchwarmers_mcp_against_the_local_bench_by_default(monkeypatch):
    [(name, server)] = load(PLUGIN / ".mcp.json")["mcpServers"].items()
    assert name == "benchwarmers"
    assert (server["command"], server["args"]) == ("benchwarmers", ["mcp"])
    # The command is the package's console script, installed next to the interpreter ...
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["benchwarmers"] == "benchwarmers.cli.app:main"
    assert (Path(sys.executable).parent / "benchwarmers").exists()
    # ... and `mcp` is one of its commands.
    assert CliRunner().invoke(app, [*server["args"], "--help"]).exit_code == 0
    # With nothing set, the server asks the bench on its default address, with no key.
    env = {key: expand(value, {}) for key, value in server["env"].items()}
    assert env == {"BENCHWARMERS_URL": "http://127.0.0.1:8123", "BENCHWARMERS_KEY": ""}
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    settings = Settings()
    assert (settings.url, settings.key) == ("http://127.0.0.1:8123", None)
    assert settings.url == Settings.model_fields["url"].default
    # Set by the user, both pass through.
    user = {"BENCHWARMERS_URL": "http://bench.lan:8123", "BENCHWARMERS_KEY": "bwk_x"}
    assert {key: expand(value, user) for key, value in server["env"].items()} == user


@pytest.mark.parametrize("path", sorted(PLUGIN.glob("commands/*.md")), ids=lambda p: p.name)
def test_each_command_describes_itself_and_uses_the_three_tools(path: Path):
    meta = frontmatter(path)
    assert meta["description"]
    body = path.read_text(encoding="utf-8")
    assert "$ARGUMENTS" in body
    for tool in ("list_collections", "ask", "verdict"):
        assert f"`{tool}`" in body


def test_the_skill_folder_and_name_agree():
    skills = sorted(PLUGIN.glob("skills/*/SKILL.md"))
    assert [p.parent.name for p in skills] == ["bench-method"]
    meta = frontmatter(skills[0])
    assert meta["name"] == "bench-method"
    assert "verdict" in meta["description"] and len(meta["description"]) <= 1024


def test_every_plugin_root_path_in_the_plugin_exists():
    for path in PLUGIN.rglob("*"):
        if path.is_file():
            for relative in PLUGIN_ROOT_PATH.findall(path.read_text(encoding="utf-8")):
                assert (PLUGIN / relative).exists(), f"{path}: ${{CLAUDE_PLUGIN_ROOT}}/{relative} does not exist"


def test_the_readme_snippet_for_other_clients_is_the_same_server():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("\n## MCP\n") :]
    snippet = json.loads(section.split("```json\n", 1)[1].split("```", 1)[0])
    server = snippet["mcpServers"]["benchwarmers"]
    assert (server["command"], server["args"]) == ("benchwarmers", ["mcp"])
    assert server["env"] == {"BENCHWARMERS_URL": "http://127.0.0.1:8123"}


def test_the_docs_this_plugin_points_to_exist():
    for doc in (ROOT / "AGENTS.md", PLUGIN / "skills" / "bench-method" / "SKILL.md"):
        for link in re.findall(r"\]\(([^)#]+)\)", doc.read_text(encoding="utf-8")):
            if not link.startswith("http"):
                assert (doc.parent / link).exists(), f"{doc.name} links to {link}, which does not exist"
