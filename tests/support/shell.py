"""`benchwarmers` behind a real shell pipe, as scripts run it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

BENCHWARMERS = str(Path(sys.executable).parent / "benchwarmers")


def shell(command: str, server, stdin: str | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "BENCHWARMERS_HOME": str(server.settings.home), "BENCHWARMERS_URL": server.url}
    return subprocess.run(
        command, shell=True, input=stdin, capture_output=True, text=True, env=env, timeout=120, check=False
    )
