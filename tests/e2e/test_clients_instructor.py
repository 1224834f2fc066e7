"""The client matrix, instructor: unmodified, pinned, in its own virtualenv (instructor 1.17.0 pins
rich<15 and jiter<0.15, which cannot live beside the project's rich>=15 and openai 3.5x), against a
real bench on loopback, in its tools and JSON modes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.support.agents_fixtures import CITY, agents_bench  # noqa: F401

PINS = ["instructor==1.17.0", "openai==3.3.0"]
VENV = Path(__file__).parent.parent / ".venv-instructor"  # gitignored; made on first use
SCRIPT = Path(__file__).parent.parent / "clients_isolated" / "instructor_client.py"


def python() -> Path:
    executable = VENV / "bin" / "python"
    marker = VENV / "pins.txt"
    if not (marker.exists() and marker.read_text() == "\n".join(PINS)):
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(VENV)], check=True, timeout=120)
        subprocess.run(
            [str(executable), "-m", "pip", "install", "--quiet", *PINS], check=True, capture_output=True, timeout=600
        )
        marker.write_text("\n".join(PINS))
    return executable


def test_instructor_tools_and_json_modes(agents_bench):  # noqa: F811
    _fake, server = agents_bench
    done = subprocess.run(
        [str(python()), str(SCRIPT), server.v1], capture_output=True, text=True, timeout=120, check=True
    )
    assert json.loads(done.stdout) == {"tool_call": CITY, "json_mode": CITY}
