"""LiteLLM's proxy as a peer in the side-by-side run (perf/side_by_side.py measures it).

LiteLLM runs from its own virtualenv (perf/.venv-litellm, never a project dependency) with one
model whose `api_base` is the fake provider; the bench serves a 1-member, 0-explorer collection on
a model of the same fake. Run the side-by-side part alone with `python -m perf.litellm_side_by_side`
(same options as run.py; add `--portkey` for Portkey in the same rounds).

    python3 -m venv perf/.venv-litellm
    perf/.venv-litellm/bin/pip install 'litellm[proxy]==1.108.7'
"""

from __future__ import annotations

import argparse
import secrets
import time
from pathlib import Path

from perf.fleet import Process, free_port, http_get, wait_for_port
from perf.target import Target

INSTALL = "python3 -m venv perf/.venv-litellm && perf/.venv-litellm/bin/pip install 'litellm[proxy]==1.108.7'"
MODEL_NAME = "fake-model"


def config(model_id: str, api_base: str, master_key: str) -> str:
    # No database, no callbacks: the proxy's request path and nothing else. Hugging Face tokenizer
    # downloads are off because this machine is offline (tiktoken's bundled encoding counts tokens).
    return f"""model_list:
  - model_name: {MODEL_NAME}
    litellm_params:
      model: openai/{model_id}
      api_base: {api_base}
      api_key: sk-fake-provider-key
litellm_settings:
  telemetry: false
  disable_hf_tokenizer_download: true
general_settings:
  master_key: {master_key}
"""


class LiteLLM:
    def __init__(self, fake_port: int, model_id: str, endpoint: int, logs: Path) -> None:
        self.key = "sk-perf-" + secrets.token_hex(16)  # a throwaway key for this run's local proxy
        self.config = logs / "litellm.yaml"
        self.config.write_text(config(model_id, f"http://127.0.0.1:{fake_port}/e{endpoint}/v1", self.key))
        self.logs = logs
        self.port = 0
        self.process: Process | None = None
        self.venv: Path | None = None

    def start(self, venv: Path) -> None:
        self.venv = venv
        executable = venv / "bin" / "litellm"
        self.port = free_port()
        env = {
            "PATH": f"{venv / 'bin'}:/usr/bin:/bin",
            "HOME": str(self.logs),
            "LITELLM_LOCAL_MODEL_COST_MAP": "True",  # never fetch the price list
            "HF_HUB_OFFLINE": "1",
            "LITELLM_LOG": "ERROR",
        }
        argv = [str(executable), "--config", str(self.config), "--port", str(self.port), "--num_workers", "1"]
        self.process = Process("litellm", argv, env=env, log=self.logs / "litellm.log")
        wait_for_port(self.port, self.process.popen, "litellm", deadline=120)
        deadline = time.monotonic() + 60
        while http_get(self.port, "/health/liveliness")[0] != 200:
            if time.monotonic() > deadline:
                raise RuntimeError("litellm did not become live")
            time.sleep(0.2)

    def stop(self) -> None:
        if self.process is not None:
            self.process.stop()
            self.process = None

    def target(self) -> Target:
        assert self.process is not None
        version = _version(self.venv) if self.venv else None
        headers = {"authorization": f"Bearer {self.key}"}
        return Target("LiteLLM", self.port, MODEL_NAME, self.process, headers, version=version)


def start_litellm(args: argparse.Namespace, fake_port: int, logs: Path, model_alias: str) -> LiteLLM | str:
    """LiteLLM's proxy over the fake endpoint behind `model_alias`, live; or why it could not start."""
    venv: Path = args.litellm_venv
    if not (venv / "bin" / "litellm").exists():
        return f"{venv} has no litellm; create it with: {INSTALL}"
    endpoint, model_id = model_alias.split("/", 1)
    proxy = LiteLLM(fake_port, model_id, int(endpoint.removeprefix("e")), logs)
    try:
        proxy.start(venv)
    except (RuntimeError, OSError) as exc:
        tail = (logs / "litellm.log").read_text(errors="replace")[-1500:] if (logs / "litellm.log").exists() else ""
        proxy.stop()
        return f"LiteLLM's proxy did not start: {exc}\n{tail}"
    return proxy


def _version(venv: Path) -> str | None:
    found = sorted((venv / "lib").glob("python*/site-packages/litellm-*.dist-info"))
    return found[0].name.removeprefix("litellm-").removesuffix(".dist-info") if found else None
