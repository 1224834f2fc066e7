"""Portkey's open-source gateway as a peer in the side-by-side run (perf/side_by_side.py measures it).

`@portkey-ai/gateway` (Node, Hono) is installed with npm into perf/.portkey/ (gitignored, never a
project dependency) and runs offline, one Node process, no UI:

    node perf/.portkey/node_modules/@portkey-ai/gateway/build/start-server.js --port=N --headless

Requests name the provider and the fake provider's base URL in headers (`x-portkey-provider:
openai`, `x-portkey-custom-host: http://127.0.0.1:P/e1/v1`; loopback hosts are trusted by default)
and carry a bearer for the fake. The model is the fake's own id, as behind `bench/solo`.

One pin besides the gateway: `@hono/node-server` 1.14.1. The gateway asks for `^1.3.3`, and from
1.14.2 on that package's lightweight Response hands back the upstream `fetch` response's immutable
headers, so every streamed reply from an OpenAI-style provider fails with HTTP 500 ("TypeError:
immutable" in `updateHeaders`) on Node 20. 1.14.1 is the newest release without that change.

    python -m perf.portkey_side_by_side --install    # install only (a few seconds)
    python -m perf.portkey_side_by_side              # the side-by-side part alone (add --litellm for both)
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import time
from pathlib import Path

from perf.driver import chat_body, run_load
from perf.fleet import PERF, Process, free_port, http_get, wait_for_port
from perf.target import PATH, Target

VERSION = "1.15.2"
NODE_SERVER = "1.14.1"  # see the module's docstring
PREFIX = PERF / ".portkey"
PACKAGE = {
    "private": True,
    "dependencies": {"@portkey-ai/gateway": VERSION},
    "overrides": {"@hono/node-server": NODE_SERVER},
}
INSTALL = "python -m perf.portkey_side_by_side --install (npm install --prefix perf/.portkey, with its package.json)"
PROVIDER_KEY = "sk-fake-provider-key"


def entry(prefix: Path) -> Path:
    return prefix / "node_modules" / "@portkey-ai" / "gateway" / "build" / "start-server.js"


def installed_version(prefix: Path) -> str | None:
    manifest = prefix / "node_modules" / "@portkey-ai" / "gateway" / "package.json"
    if not manifest.exists():
        return None
    return str(json.loads(manifest.read_text()).get("version"))


def install(prefix: Path = PREFIX) -> str | None:
    """Install the pinned gateway into `prefix` unless it is there; None when ready, else why not."""
    if installed_version(prefix) == VERSION and entry(prefix).exists():
        return None
    npm = shutil.which("npm")
    if npm is None or shutil.which("node") is None:
        return "node and npm are needed for Portkey's gateway (apt-get install nodejs npm)"
    prefix.mkdir(parents=True, exist_ok=True)
    (prefix / "package.json").write_text(json.dumps(PACKAGE, indent=2) + "\n")
    print(f"installing @portkey-ai/gateway@{VERSION} into {prefix} ...", flush=True)
    done = subprocess.run(
        [npm, "install", "--prefix", str(prefix), "--no-audit", "--no-fund", "--loglevel", "error"],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    if done.returncode != 0 or not entry(prefix).exists():
        return f"npm install failed ({done.returncode}): {(done.stderr or done.stdout).strip()[-1500:]}"
    return None


class Portkey:
    def __init__(self, fake_port: int, model_id: str, endpoint: int, logs: Path, prefix: Path) -> None:
        self.base_url = f"http://127.0.0.1:{fake_port}/e{endpoint}/v1"
        self.model_id = model_id
        self.logs = logs
        self.prefix = prefix
        self.port = 0
        self.process: Process | None = None

    @property
    def headers(self) -> dict[str, str]:
        return {
            "x-portkey-provider": "openai",
            "x-portkey-custom-host": self.base_url,
            "authorization": f"Bearer {PROVIDER_KEY}",
        }

    def start(self) -> None:
        node = shutil.which("node") or "node"
        self.port = free_port()
        env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(self.logs)}
        argv = [node, str(entry(self.prefix)), f"--port={self.port}", "--headless"]
        self.process = Process("portkey", argv, env=env, log=self.logs / "portkey.log")
        wait_for_port(self.port, self.process.popen, "portkey", deadline=60)
        deadline = time.monotonic() + 30
        while http_get(self.port, "/")[0] != 200:  # "AI Gateway says hey!"
            if time.monotonic() > deadline:
                raise RuntimeError("portkey did not answer GET /")
            time.sleep(0.2)

    async def check(self) -> str | None:
        """One JSON and one streamed request through it; None when both answer 200."""
        for stream in (False, True):
            load = await run_load(
                "127.0.0.1",
                self.port,
                PATH,
                chat_body(self.model_id, stream=stream),
                count=1,
                concurrency=1,
                stream=stream,
                headers=self.headers,
            )
            if load.samples[0].error is not None:
                return f"{'streamed' if stream else 'JSON'} request failed: {load.samples[0].error}"
        return None

    def stop(self) -> None:
        if self.process is not None:
            self.process.stop()
            self.process = None

    def target(self) -> Target:
        assert self.process is not None
        version = installed_version(self.prefix)
        return Target("Portkey", self.port, self.model_id, self.process, self.headers, version=version)


async def start_portkey(args: argparse.Namespace, fake_port: int, logs: Path, model_alias: str) -> Portkey | str:
    """Portkey's gateway over the fake endpoint behind `model_alias`, checked; or why it could not start."""
    prefix: Path = args.portkey_prefix
    if args.portkey_install:
        problem = install(prefix)
        if problem:
            return problem
    elif installed_version(prefix) is None:
        return f"{prefix} has no @portkey-ai/gateway; install it with: {INSTALL}"
    endpoint, model_id = model_alias.split("/", 1)
    gateway = Portkey(fake_port, model_id, int(endpoint.removeprefix("e")), logs, prefix)
    try:
        gateway.start()
        problem = await gateway.check()
    except (RuntimeError, OSError) as exc:
        problem = f"Portkey's gateway did not start: {exc}"
    if problem:
        log = logs / "portkey.log"
        tail = log.read_text(errors="replace")[-1500:] if log.exists() else ""
        gateway.stop()
        return f"{problem}\n{tail}"
    return gateway
