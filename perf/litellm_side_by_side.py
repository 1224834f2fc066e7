"""Side by side with LiteLLM's proxy: the same fake provider, the same load, alternating rounds.

LiteLLM runs from its own virtualenv (perf/.venv-litellm, never a project dependency) with one
model whose `api_base` is the fake provider; the bench serves a 1-member, 0-explorer collection on
a model of the same fake. Each concurrency runs A/B/A/B (`--rounds`), so drift on a shared machine
falls on both. Added latency = wall time − the fake's fixed latency for both, since LiteLLM reports
no seat times. Run it alone with `python perf/litellm_side_by_side.py` (same options as run.py).

    python3 -m venv perf/.venv-litellm
    perf/.venv-litellm/bin/pip install 'litellm[proxy]==1.108.7'
"""

from __future__ import annotations

import argparse
import secrets
import sys
import time
from pathlib import Path
from typing import Any

from driver import Load, chat_body, run_load
from fleet import Bench, Process, Usage, free_port, http_get, wait_for_port
from measure import Scenario, summarise

INSTALL = "python3 -m venv perf/.venv-litellm && perf/.venv-litellm/bin/pip install 'litellm[proxy]==1.108.7'"
MODEL_NAME = "fake-model"

RESULT_HEADERS = [
    "gateway",
    "conc",
    "mode",
    "requests/s",
    "added p50 ms",
    "p95",
    "p99",
    "CPU ms/request",
    "idle RSS MB",
    "errors",
]
RATIO_HEADERS = ["conc", "mode", "added p50 ours ÷ LiteLLM", "added p99 ours ÷ LiteLLM", "throughput ours ÷ LiteLLM"]


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
        self.idle_rss = 0

    def start(self, venv: Path) -> None:
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


def _combine(loads: list[Load]) -> Load:
    return Load(
        samples=[s for load in loads for s in load.samples],
        seconds=sum(load.seconds for load in loads),
        driver_cpu=sum(load.driver_cpu for load in loads),
    )


def _ratio(ours: float | None, theirs: float | None) -> float | None:
    return None if ours is None or not theirs else round(ours / theirs, 2)


def _count(concurrency: int, quick: bool) -> int:
    return min(max(4 * concurrency, 40), 512) if quick else min(max(12 * concurrency, 150), 1600)


async def side_by_side(
    args: argparse.Namespace, bench: Bench, fake_port: int, logs: Path, model_alias: str
) -> dict[str, Any]:
    """Alternate rounds against the bench (bench/solo) and LiteLLM; rows for the tables and the ratios."""
    venv: Path = args.litellm_venv
    if not (venv / "bin" / "litellm").exists():
        return {"skipped": f"{venv} has no litellm; create it with: {INSTALL}"}
    assert bench.process is not None
    endpoint, model_id = model_alias.split("/", 1)
    proxy = LiteLLM(fake_port, model_id, int(endpoint.removeprefix("e")), logs)
    try:
        proxy.start(venv)
    except (RuntimeError, OSError) as exc:
        tail = (logs / "litellm.log").read_text(errors="replace")[-1500:] if (logs / "litellm.log").exists() else ""
        proxy.stop()
        return {"skipped": f"LiteLLM's proxy did not start: {exc}\n{tail}"}
    assert proxy.process is not None
    await run_load(
        "127.0.0.1",
        proxy.port,
        "/v1/chat/completions",
        chat_body(MODEL_NAME),
        count=50,
        concurrency=4,
        headers={"authorization": f"Bearer {proxy.key}"},
    )
    idle = {"benchwarmers": bench.process.usage().rss, "LiteLLM": proxy.process.usage().rss}
    targets = {
        "benchwarmers": (bench.port, "bench/solo", bench.process, None),
        "LiteLLM": (proxy.port, MODEL_NAME, proxy.process, {"authorization": f"Bearer {proxy.key}"}),
    }
    rows, ratios, raw = [], [], []
    try:
        for mode in args.litellm_modes:
            stream = mode == "stream"
            for concurrency in args.litellm_concurrency:
                count = _count(concurrency, args.quick)
                loads: dict[str, list[Load]] = {name: [] for name in targets}
                cpu = dict.fromkeys(targets, 0.0)
                for port, model, _, headers in targets.values():  # warm-up, not counted
                    await run_load(
                        "127.0.0.1",
                        port,
                        "/v1/chat/completions",
                        chat_body(model, stream=stream),
                        count=max(2 * concurrency, 20),
                        concurrency=concurrency,
                        stream=stream,
                        headers=headers,
                        stagger=args.latency,
                    )
                for _ in range(args.rounds):
                    for name, (port, model, process, headers) in targets.items():
                        before = process.usage().cpu
                        loads[name].append(
                            await run_load(
                                "127.0.0.1",
                                port,
                                "/v1/chat/completions",
                                chat_body(model, stream=stream),
                                count=count,
                                concurrency=concurrency,
                                stream=stream,
                                headers=headers,
                                stagger=args.latency,
                            )
                        )
                        cpu[name] += process.usage().cpu - before
                summary = {}
                for name, (_, model, process, _) in targets.items():
                    load = _combine(loads[name])
                    scenario = Scenario(name, model, concurrency, len(load.samples), 0, stream)
                    now = process.usage()
                    usage = (process, Usage(0.0, 0, 0), Usage(cpu[name], now.rss, now.peak))
                    result = summarise(scenario, name, load, args.latency, usage, None)
                    summary[name] = result
                    raw.append(result.as_dict())
                    rows.append(
                        [
                            name,
                            concurrency,
                            mode,
                            f"{result.panels_per_s:,.1f}",
                            *(f"{result.added_ms.get(p) or 0:.2f}" for p in ("p50", "p95", "p99")),
                            f"{result.server_cpu_ms_per_panel:.2f}",
                            f"{idle[name] / 1e6:.1f}",
                            result.errors,
                        ]
                    )
                ours, theirs = summary["benchwarmers"], summary["LiteLLM"]
                ratio = {
                    "concurrency": concurrency,
                    "mode": mode,
                    "added_p50_ratio": _ratio(ours.added_ms.get("p50"), theirs.added_ms.get("p50")),
                    "added_p99_ratio": _ratio(ours.added_ms.get("p99"), theirs.added_ms.get("p99")),
                    "throughput_ratio": _ratio(ours.panels_per_s, theirs.panels_per_s),
                }
                ratios.append(ratio)
                print(
                    f"  side by side c={concurrency} {mode}: ours ÷ LiteLLM added p50 {ratio['added_p50_ratio']}, "
                    f"p99 {ratio['added_p99_ratio']}, throughput {ratio['throughput_ratio']}",
                    flush=True,
                )
    finally:
        proxy.stop()
    ratio_rows = [
        [r["concurrency"], r["mode"], r["added_p50_ratio"], r["added_p99_ratio"], r["throughput_ratio"]] for r in ratios
    ]
    return {
        "litellm_version": _version(venv),
        "headers": RESULT_HEADERS,
        "rows": rows,
        "ratio_headers": RATIO_HEADERS,
        "ratio_rows": ratio_rows,
        "ratios": ratios,
        "results": raw,
    }


def _version(venv: Path) -> str | None:
    found = sorted((venv / "lib").glob("python*/site-packages/litellm-*.dist-info"))
    return found[0].name.removeprefix("litellm-").removesuffix(".dist-info") if found else None


def main() -> None:
    """Only the side-by-side part: `python perf/litellm_side_by_side.py [--quick] [--markdown]`."""
    import run

    # A token load of our own (the tables need one), then the side-by-side rounds.
    token = "--collections solo --modes json --concurrency 1 --count 20 --image-mb 0 --no-driver-ceiling --litellm"
    run.main([*token.split(), *sys.argv[1:]])


if __name__ == "__main__":
    main()
