"""Install paths: the npm launcher, packed with the wheel built from this tree and installed from the
tarball, makes a fresh virtualenv, installs the wheel there and runs the CLI; in that virtualenv the
package has every file it needs and `benchwarmers serve` answers /readyz. (One virtualenv for both:
installing the dependencies is most of the time these tests take. Without npm, pip makes it.)"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx2
import pytest

from benchwarmers import __version__
from tests.support.benchserver import free_port

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "src" / "benchwarmers"
CATALOG = "load_catalog().provider_ids()"


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    # The same backend `python -m build` runs (hatchling, from pyproject.toml), through pip.
    command = [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--wheel-dir", str(out), str(ROOT)]
    subprocess.run(command, check=True, capture_output=True, timeout=300)
    [built] = out.glob("benchwarmers-*.whl")
    return built


def venv_with(folder: Path, *packages: str) -> Path:
    """A fresh virtualenv with `packages` installed (dependencies from the package index); its python."""
    subprocess.run([sys.executable, "-m", "venv", str(folder)], check=True, timeout=120)
    python = folder / "bin" / "python"
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", *packages], check=True, timeout=900)
    return python


def wait_ready(url: str, process: subprocess.Popen[bytes]) -> dict:
    deadline = time.monotonic() + 60
    while True:
        try:
            reply = httpx2.get(f"{url}/readyz")
            if reply.status_code == 200:
                return reply.json()  # type: ignore[no-any-return]
        except httpx2.TransportError:
            pass
        assert process.poll() is None, "benchwarmers serve exited"
        assert time.monotonic() < deadline, "benchwarmers serve did not answer /readyz"
        time.sleep(0.1)


def package_files(root: Path) -> set[str]:
    return {
        str(path.relative_to(root))
        for path in root.rglob("*")
        if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc"
    }


@pytest.fixture
def serving(tmp_path: Path) -> Iterator[list[subprocess.Popen[bytes]]]:
    started: list[subprocess.Popen[bytes]] = []
    yield started
    for process in started:
        process.terminate()
        process.wait(timeout=30)


@dataclass
class Installed:
    venv: Path
    npm: dict | None = None  # what `npm pack --json` said, when the launcher made the venv
    runs: list[subprocess.CompletedProcess[str]] = field(default_factory=list)  # the launcher's runs


@pytest.fixture(scope="module")
def installed(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Installed:
    tmp_path = tmp_path_factory.mktemp("install")
    venv = tmp_path / "venv"
    npm = shutil.which("npm")
    if npm is None or shutil.which("node") is None:
        venv_with(venv, str(wheel))
        return Installed(venv)
    source = tmp_path / "npm"
    shutil.copytree(ROOT / "npm", source, ignore=shutil.ignore_patterns("wheels", "*.tgz", "node_modules"))
    (source / "wheels").mkdir()
    shutil.copy2(wheel, source / "wheels")
    packed = subprocess.run(
        [npm, "pack", "--json"], cwd=source, check=True, capture_output=True, text=True, timeout=120
    )
    [found] = json.loads(packed.stdout)
    prefix = tmp_path / "installed"
    subprocess.run(
        [npm, "install", "--no-audit", "--no-fund", "--prefix", str(prefix), str(source / found["filename"])],
        check=True,
        capture_output=True,
        timeout=300,
    )
    launcher = prefix / "node_modules" / ".bin" / "benchwarmers"
    env = {**os.environ, "BENCHWARMERS_NPM_VENV": str(venv)}
    runs = [
        subprocess.run([str(launcher), "version"], env=env, capture_output=True, text=True, timeout=900)
        for _ in range(2)
    ]
    return Installed(venv, found, runs)


def test_the_npm_launcher_packs_installs_and_runs_the_cli(installed, wheel):
    if installed.npm is None:
        pytest.skip("node and npm are not installed (apt-get install nodejs npm)")
    assert {f["path"] for f in installed.npm["files"]} == {
        "bin/benchwarmers.js",
        "package.json",
        "README.md",
        f"wheels/{wheel.name}",
    }
    first, again = installed.runs
    assert (first.returncode, first.stdout) == (0, f"{__version__}\n"), first.stderr
    assert f"installing {wheel.name}" in first.stderr
    assert (again.returncode, again.stdout, again.stderr) == (0, f"{__version__}\n", "")  # installed once


def test_the_wheel_installs_in_a_fresh_venv_with_its_files_and_serves(installed, tmp_path, serving):
    python = installed.venv / "bin" / "python"
    where = subprocess.run(
        [str(python), "-c", "import benchwarmers, os; print(os.path.dirname(benchwarmers.__file__))"],
        check=True,
        capture_output=True,
        text=True,
        cwd=tmp_path,  # not this tree: the installed package
    ).stdout.strip()
    package = Path(where)
    assert package.is_relative_to(installed.venv)
    # Every file of the package ships: templates, static files, migrations, the suite's tasks.
    assert package_files(PACKAGE) <= package_files(package)
    for needed in (
        "dashboard/templates/base.html",
        "dashboard/static/app.css",
        "store/migrations/env.py",
        "store/migrations/versions/0001_initial_schema.py",
        "bench/suite/__init__.py",
    ):
        assert (package / needed).is_file(), needed
    # libcst is the seeding tool's (tools/suite_seed.py, not in the wheel): a fresh install has none.
    assert not list(installed.venv.glob("lib/python*/site-packages/libcst")), "libcst was installed"
    # The models.dev snapshot comes with its package, a dependency.
    snapshot = subprocess.run(
        [str(python), "-c", f"from benchwarmers.catalog import modelsdev; print(len(modelsdev.{CATALOG}))"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert snapshot.returncode == 0 and int(snapshot.stdout) > 100, snapshot.stderr
    port = free_port()
    env = {**os.environ, "BENCHWARMERS_HOME": str(tmp_path / "home")}
    cli = installed.venv / "bin" / "benchwarmers"
    serving.append(subprocess.Popen([str(cli), "serve", "--bind", f"127.0.0.1:{port}"], env=env, cwd=tmp_path))
    assert wait_ready(f"http://127.0.0.1:{port}", serving[0]) == {"status": "ready", "database": "ok"}
