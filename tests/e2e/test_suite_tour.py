"""The README's suite tour, run as written (the fake provider on a free port instead of 8999)."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
import time
from pathlib import Path

import httpx2

from tests.support.benchserver import free_port
from tests.support.suite_fixtures import cli, report_json

README = Path(__file__).parents[2] / "README.md"


def tour() -> list[str]:
    text = README.read_text()
    block = text[text.index("### The suite, with no provider key") :]
    code = block[block.index("```bash\n") + 8 : block.index("\n```", block.index("```bash"))]
    return [line.split("  #")[0].strip() for line in code.replace("\\\n", " ").splitlines() if line.strip()]


def test_the_readme_suite_tour_runs_from_a_fresh_home(home):
    lines = tour()
    assert lines[0] == "python -m tests.fakes.upstream --port 8999 --reviewers &"
    assert lines[1] == "export BENCHWARMERS_HOME=$(mktemp -d)"  # the `home` fixture is that fresh home
    port = free_port()
    fake = subprocess.Popen(
        [sys.executable, "-m", "tests.fakes.upstream", "--port", str(port), "--reviewers"],
        cwd=README.parent,
        stdout=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                httpx2.get(f"http://127.0.0.1:{port}/v1/models", timeout=1)
                break
            except httpx2.TransportError:
                assert time.monotonic() < deadline, "the fake provider did not start"
                time.sleep(0.1)
        outputs = []
        for line in lines[2:]:
            args = shlex.split(line.replace("8999", str(port)))
            assert args[0] == "benchwarmers"
            code, out = cli(*args[1:])
            assert code == 0, f"{line}\n{out}"
            outputs.append(out)
    finally:
        fake.kill()
        fake.wait()
    assert all("fake/finder" in out for out in outputs[-2:])  # the report and the leaderboard
    # The report's table says how each pair went: flag-all flags both sides of every pair, flag-none
    # neither, wrong-line only the fix. (Its header and rows, as the terminal table draws them.)
    drawn = [line for line in outputs[-2].splitlines() if line.startswith(("┃", "│"))]
    table = [[cell.strip() for cell in re.split("[┃│]", line)[1:6]] for line in drawn]
    assert table == [
        ["model", "pairs correct", "both flagged", "neither", "reversed"],
        ["fake/finder", "100% (5/5)", "0", "0", "0"],
        ["fake/flag-all", "0% (0/5)", "5", "0", "0"],
        ["fake/flag-none", "0% (0/5)", "0", "5", "0"],
        ["fake/wrong-line", "0% (0/5)", "0", "0", "5"],
    ]
    models = {m["alias"]: m for m in report_json()["models"]}
    assert {alias: (m["correct"], m["hits"], m["pairs"]) for alias, m in models.items()} == {
        "fake/finder": (5, 5, 5),
        "fake/flag-all": (0, 5, 5),
        "fake/flag-none": (0, 0, 5),
        "fake/wrong-line": (0, 0, 5),
    }
    assert {alias: (m["both_flagged"], m["neither"], m["reversed"]) for alias, m in models.items()} == {
        "fake/finder": (0, 0, 0),
        "fake/flag-all": (5, 0, 0),
        "fake/flag-none": (0, 5, 0),
        "fake/wrong-line": (0, 0, 5),
    }
