"""README's two set-up commands: the test command is scripts/test, the script .ci/run calls too,
and that script installs only what is missing (apt-get update first, npm only when nodejs brings
none), shown by its --dry-run on a PATH of stub commands. No apt-get is ever run here."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "test"
HAS_POSTGRES = any(Path("/usr/lib/postgresql").glob("*/bin/initdb"))
# What the script itself calls besides the commands it looks for.
TOOLS = ("dirname", "ls", "env")


def setup_commands() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Set-up: two commands", 1)[1].split("\n## ", 1)[0]
    return [block.strip() for block in re.findall(r"```bash\n(.*?)```", section, re.DOTALL)]


def test_readme_has_two_setup_commands_and_the_second_is_the_script():
    serve, tests = setup_commands()
    assert serve == "python3 -m venv .venv && . .venv/bin/activate && pip install -e . && benchwarmers serve"
    assert tests == "scripts/test"
    assert os.access(ROOT / tests, os.X_OK)


def test_ci_calls_exactly_the_script_the_readme_names():
    _, tests = setup_commands()
    lines = [line for line in (ROOT / ".ci" / "run").read_text().splitlines() if line and not line.startswith("#")]
    calls = [line for line in lines if "scripts/" in line]
    assert calls == [f"BENCH_VENV=.venv-ci exec {tests}"]
    assert not any(word in line for line in lines for word in ("apt-get", "pytest", "pip ", "npm "))


def test_the_script_has_every_step():
    text = SCRIPT.read_text()
    code = [line.strip() for line in text.splitlines() if not line.strip().startswith("#")]
    assert code[0] == "set -euo pipefail"
    update = text.index("apt-get update -qq")
    install = text.index("apt-get install -y -qq")
    assert update < install
    # npm is asked for only where node is present without it, or nodejs brought none.
    assert "missing+=(nodejs)\nelif ! command -v npm >/dev/null 2>&1; then\n  missing+=(npm)" in text
    assert "(cd tests/node_clients && npm ci --no-audit --no-fund --silent)" in code
    assert 'pip install --quiet -e ".[test]"' in code
    assert code[-1] == (
        "ruff check src tests perf tools && ruff format --check src tests perf tools && lint-imports "
        "&& python scripts/import_cycles.py && mypy && pytest -q -p no:cacheprovider"
    )


def stub_path(tmp_path: Path, present: tuple[str, ...], uid: int = 0) -> dict[str, str]:
    """An environment whose PATH holds only `present` (stubs), the tools the script uses, and `id`."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in TOOLS:
        found = shutil.which(tool)
        assert found is not None, tool
        (bin_dir / tool).symlink_to(found)
    for name in (*present, "id"):
        stub = bin_dir / name
        stub.write_text(f"#!/bin/sh\necho {uid}\n" if name == "id" else "#!/bin/sh\nexit 0\n")
        stub.chmod(0o755)
    return {"PATH": str(bin_dir), "HOME": str(tmp_path)}


def dry_run(tmp_path: Path, present: tuple[str, ...], uid: int = 0) -> list[str]:
    bash = shutil.which("bash")
    assert bash is not None
    done = subprocess.run(
        [bash, str(SCRIPT), "--dry-run"],
        env=stub_path(tmp_path, present, uid),
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert (done.returncode, done.stderr) == (0, "")
    return done.stdout.splitlines()


POSTGRES = [] if HAS_POSTGRES else ["postgresql"]
INSTALL = "env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq"


def test_nothing_missing_installs_nothing(tmp_path):
    if not HAS_POSTGRES:
        pytest.skip("postgresql is not installed here: the script would rightly install it")
    assert dry_run(tmp_path, ("chromium", "redis-server", "node", "npm")) == []


def test_a_fresh_machine_updates_first_then_installs_the_rest_then_npm_only_if_nodejs_brought_none(tmp_path):
    assert dry_run(tmp_path, ()) == [
        "apt-get update -qq",
        " ".join([INSTALL, "chromium", "redis-server", *POSTGRES, "nodejs"]),
        f"{INSTALL} npm",  # the stubs' nodejs brought no npm (Debian's does not)
    ]


def test_nodejs_with_its_own_npm_gets_no_debian_npm(tmp_path):
    assert dry_run(tmp_path, ("node", "npm", "redis-server")) == [
        "apt-get update -qq",
        " ".join([INSTALL, "chromium", *POSTGRES]),
    ]


def test_node_without_npm_gets_npm_alone(tmp_path):
    assert dry_run(tmp_path, ("chromium", "redis-server", "node")) == [
        "apt-get update -qq",
        " ".join([INSTALL, *POSTGRES, "npm"]),
    ]


def test_not_root_with_sudo_prefixes_apt_get(tmp_path):
    assert dry_run(tmp_path, ("chromium", "node", "npm", "sudo"), uid=1000) == [
        "sudo apt-get update -qq",
        " ".join(["sudo", INSTALL, "redis-server", *POSTGRES]),
    ]


def test_not_root_without_sudo_calls_apt_get_itself(tmp_path):
    assert dry_run(tmp_path, ("chromium", "node", "npm"), uid=1000) == [
        "apt-get update -qq",
        " ".join([INSTALL, "redis-server", *POSTGRES]),
    ]
