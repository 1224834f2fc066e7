"""deploy/: the command line the Dockerfile runs (no Docker daemon on CI machines), and the
Grafana dashboard asks only for metrics the bench serves."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import time
from pathlib import Path

import httpx2

from tests.support.benchserver import free_port

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
ADMIN_TOKEN = "admin-token-for-the-container-0001"


def dockerfile() -> tuple[dict[str, str], list[str], list[str]]:
    """The final stage's ENV, CMD and HEALTHCHECK's CMD, as the Dockerfile says them."""
    text = (DEPLOY / "Dockerfile").read_text().replace("\\\n", " ")
    final = text.split("\nFROM ")[-1]
    env: dict[str, str] = {}
    for line in final.splitlines():
        if line.startswith("ENV "):
            env.update(dict(part.split("=", 1) for part in shlex.split(line[4:])))
    [command] = re.findall(r"^CMD (\[.*\])$", final, re.M)
    [health] = re.findall(r"^HEALTHCHECK .* CMD (\[.*\])$", final, re.M)
    return env, json.loads(command), json.loads(health)


def test_the_dockerfiles_command_serves_and_its_healthcheck_passes(tmp_path):
    env, command, health = dockerfile()
    assert command[:2] == ["benchwarmers", "serve"]
    assert env["BENCH_BIND"] == "0.0.0.0:8123"
    port = free_port()
    bin_dir = Path(sys.executable).parent
    run_env = {
        **os.environ,
        **env,
        "BENCHWARMERS_HOME": str(tmp_path / "data"),
        "BENCH_BIND": f"0.0.0.0:{port}",
        "BENCHWARMERS_ADMIN_TOKEN": ADMIN_TOKEN,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
    }
    process = subprocess.Popen(command, env=run_env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        check = [str(bin_dir / "python") if health[0] == "python" else health[0], *health[1:]]
        check = [part.replace(":8123/", f":{port}/") for part in check]
        deadline = time.monotonic() + 60
        while subprocess.run(check, capture_output=True).returncode != 0:
            assert process.poll() is None, process.stderr.read() if process.stderr else ""
            assert time.monotonic() < deadline, "the healthcheck never passed"
            time.sleep(0.2)
        # Listening beyond loopback, so the admin token guards the dashboard API and the metrics.
        assert httpx2.get(f"http://127.0.0.1:{port}/metrics").status_code == 401
        scraped = httpx2.get(f"http://127.0.0.1:{port}/metrics", headers={"authorization": f"Bearer {ADMIN_TOKEN}"})
        assert scraped.status_code == 200
    finally:
        process.terminate()
        assert process.wait(timeout=30) == 0


def test_the_grafana_dashboard_uses_only_metrics_the_bench_serves():
    from benchwarmers.bench.metrics import WORKER_FIGURES, Metrics

    suffixes = {"histogram": ["_bucket", "_sum", "_count"]}
    served = {
        name + suffix
        for name, kind in re.findall(r"^# TYPE (\S+) (\S+)$", Metrics().render(owed=0).decode(), re.M)
        for suffix in suffixes.get(kind, [""])
    }
    served |= {f"benchwarmers_worker_{name}" for name, _ in WORKER_FIGURES}  # with --workers only
    dashboard = json.loads((DEPLOY / "grafana-dashboard.json").read_text())
    asked = {
        name
        for panel in dashboard["panels"]
        for target in panel.get("targets", [])
        for name in re.findall(r"\b(benchwarmers_[a-z_]+|process_[a-z_]+)", target["expr"])
    }
    assert asked
    assert asked <= served, asked - served
