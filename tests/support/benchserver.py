"""A real `benchwarmers` server on 127.0.0.1 for end-to-end tests, and set-up helpers.

The server runs uvicorn in its own thread and event loop, exactly as `benchwarmers serve` builds
it (`create_app(settings)`, `uvicorn_config`); tests talk to it over real HTTP. Set-up goes through a separate
`Bench` on the same database, as the CLI would (the server sees it via the changes log).
`ServeProcess` is `benchwarmers serve` itself, in a process of its own, for tests where the
server must not share an interpreter with the test (timing, several servers).
"""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import httpx2
import uvicorn

from benchwarmers.bench.services import Bench
from benchwarmers.server.app import create_app
from benchwarmers.server.listen import uvicorn_config
from benchwarmers.settings import Settings

T = TypeVar("T")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class BenchServer:
    """`listen` passes options to `uvicorn_config` (shorter read deadlines, say)."""

    def __init__(self, home: Path, *, listen: dict[str, Any] | None = None, **env: Any) -> None:
        self.port = free_port()
        self.settings = Settings(home=home, bind=f"127.0.0.1:{self.port}", **env)
        self.url = f"http://127.0.0.1:{self.port}"
        self.listen = listen or {}
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def v1(self) -> str:
        return f"{self.url}/v1"

    def start(self) -> BenchServer:
        config = uvicorn_config(
            create_app(self.settings), self.settings, lifespan="on", timeout_graceful_shutdown=2, **self.listen
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, name="bench-server", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + 15
        while not self._server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError("bench server did not start")
            time.sleep(0.02)
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=15)

    def dashboard_token(self) -> str | None:
        """What opens `/api` and the pages here: the admin token, else with keys required the token
        file the server made in its home (bench/admin/dashboard_token.py), else None (open)."""
        if self.settings.admin_token is not None:
            return self.settings.admin_token
        if self.settings.require_keys:
            return (self.settings.home / "dashboard-token").read_text().strip()
        return None

    def admin_headers(self) -> dict[str, str]:
        """`Authorization` for `/api` as a script sends it: the dashboard's token, when one is needed."""
        token = self.dashboard_token()
        return {"authorization": f"Bearer {token}"} if token else {}

    @property
    def bench(self) -> Bench:
        """The server's own Bench (read its state; don't call it from the test thread's loop)."""
        assert self._server is not None
        return self._server.config.app.state.bench  # type: ignore[no-any-return]

    def admin(self, action: Callable[[Bench], Awaitable[T]]) -> T:
        """Run `action(bench)` on a separate Bench over the same database, like the CLI does."""

        async def main() -> T:
            async with Bench(self.settings, actor="test") as bench:
                return await action(bench)

        return asyncio.run(main())


class ServeProcess(BenchServer):
    """`benchwarmers serve` in its own process, on the same kind of home as a BenchServer."""

    _process: subprocess.Popen[bytes] | None = None
    _log: Any = None
    workers = 1

    @property
    def pid(self) -> int:
        assert self._process is not None, "not started"
        return self._process.pid

    def start(self) -> ServeProcess:
        self.settings.ensure_home()
        env = {**os.environ, "BENCHWARMERS_HOME": str(self.settings.home)}
        if self.settings.redis_url:
            env["BENCHWARMERS_REDIS_URL"] = self.settings.redis_url
        if self.settings.database_url:
            env["BENCHWARMERS_DATABASE_URL"] = self.settings.database_url
        if self.settings.admin_token:
            env["BENCHWARMERS_ADMIN_TOKEN"] = self.settings.admin_token
        for name in ("body_memory_budget", "body_memory_wait", "body_deadline"):
            if name in self.settings.model_fields_set:
                alias = Settings.model_fields[name].validation_alias
                env[str(alias.choices[0])] = str(getattr(self.settings, name))  # type: ignore[union-attr]
        self._log = log = (self.settings.home / f"serve-{self.port}.log").open("wb")
        command = [str(Path(sys.executable).with_name("benchwarmers")), "serve", "--bind", f"127.0.0.1:{self.port}"]
        if self.workers > 1:
            command += ["--workers", str(self.workers)]
        self._process = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx2.get(f"{self.url}/readyz").status_code == 200:
                    return self
            except httpx2.TransportError:
                pass
            if time.monotonic() > deadline or self._process.poll() is not None:
                raise RuntimeError(f"benchwarmers serve did not start (see {log.name})")
            time.sleep(0.05)

    def stop(self) -> None:
        if self._process is not None:
            self._process.terminate()
            self._process.wait(timeout=30)
        if self._log is not None:
            self._log.close()

    @property
    def bench(self) -> Bench:
        raise TypeError("a serve process's Bench is in another process; use admin()")


def add_fake_endpoint(
    server: BenchServer,
    fake: Any,
    name: str = "fake",
    *,
    models: list[dict[str, Any]],
    free_tier: bool = True,
    api_key: str | None = "sk-test-fake-provider-key-0001",
) -> None:
    """Register the fake provider, serve `models` as its OpenRouter-style listing, and refresh it."""
    fake.listing("/v1/models", {"object": "list", "data": models})

    async def setup(bench: Bench) -> None:
        await bench.endpoints.add_endpoint(name, fake.base_url, "openrouter", api_key=api_key, free_tier=free_tier)
        await bench.endpoints.refresh_endpoint(name)

    server.admin(setup)


def listed(model_id: str, window: int | None = 32_000, *, vision: bool = False, free: bool = True) -> dict[str, Any]:
    """One OpenRouter-style listing entry."""
    entry: dict[str, Any] = {
        "id": model_id,
        "name": model_id,
        "architecture": {
            "input_modalities": ["text", "image"] if vision else ["text"],
            "output_modalities": ["text"],
        },
        "pricing": {"prompt": "0" if free else "0.000001", "completion": "0" if free else "0.000002"},
    }
    if window is not None:
        entry["context_length"] = window
    return entry
