"""`benchwarmers serve` as a real subprocess, for tests that need a whole process: its own log, a
second server on the same home, or a `kill -9`.

Set-up goes through a `Bench` on the same home in the test process, as the CLI would; the server
sees it through the changes log. Stopped by its own pid, never by name.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import httpx2

from benchwarmers.bench.services import Bench
from benchwarmers.settings import Settings
from tests.fakes.upstream import FakeUpstream
from tests.support.benchserver import free_port, listed

T = TypeVar("T")

FAKE_KEY = "sk-test-fault-key-0001"
BENCHWARMERS = str(Path(sys.executable).with_name("benchwarmers"))


class ServeProcess:
    """One `benchwarmers serve` on 127.0.0.1, its stdout and stderr in `log`."""

    def __init__(self, home: Path, log: Path, **env: str) -> None:
        self.home = home
        self.log = log
        self.env = {**os.environ, "BENCHWARMERS_HOME": str(home), **env}
        self.port = 0
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, deadline: float = 30.0) -> ServeProcess:
        self.port = free_port()
        with self.log.open("ab") as out:
            self.process = subprocess.Popen(
                [BENCHWARMERS, "serve", "--bind", f"127.0.0.1:{self.port}"],
                env=self.env,
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
            )
        end = time.monotonic() + deadline
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(f"serve exited with {self.process.returncode}:\n{self.log_text()}")
            try:
                if httpx2.get(f"{self.url}/readyz", timeout=2).status_code == 200:
                    return self
            except httpx2.TransportError:
                pass
            if time.monotonic() > end:
                raise RuntimeError(f"serve was not ready within {deadline:.0f} s:\n{self.log_text()}")
            time.sleep(0.05)

    def stop(self) -> None:
        """SIGTERM, and SIGKILL if it has not exited within 15 s."""
        if self.process is None:
            return
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=5)
        self.process = None

    def kill(self) -> None:
        """`kill -9`: no shutdown, no flush, no goodbye."""
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=10)
        self.process = None

    def log_text(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""

    def settings(self) -> Settings:
        return Settings(home=self.home)

    def admin(self, action: Callable[[Bench], Awaitable[T]]) -> T:
        """Run `action(bench)` on a Bench over the same home, like the CLI does."""
        return run_admin(self.home, action)


def run_admin(home: Path, action: Callable[[Bench], Awaitable[T]]) -> T:
    async def main() -> T:
        async with Bench(Settings(home=home), actor="test") as bench:
            return await action(bench)

    return asyncio.run(main())


def problems_in_log(text: str) -> list[str]:
    """Lines of a server log that must never be there: tracebacks and logged errors."""
    markers = ("Traceback (most recent call last)", "Exception in ASGI application", "unhandled ", "ERROR")
    return [line for line in text.splitlines() if any(marker in line for marker in markers)]


def fake_endpoint(home: Path, fake: FakeUpstream, models: list[str], name: str = "fake") -> None:
    """List `models` (free) on the fake provider, register it as endpoint `name` and refresh it."""
    fake.listing("/v1/models", {"object": "list", "data": [listed(model) for model in models]})

    async def setup(bench: Bench) -> dict[str, Any]:
        await bench.endpoints.add_endpoint(name, fake.base_url, "openrouter", api_key=FAKE_KEY, free_tier=True)
        return await bench.endpoints.refresh_endpoint(name)

    run_admin(home, setup)
