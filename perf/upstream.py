"""The fixed-latency fake provider for load runs, in its own process, with a roster to list.

`tests/fakes/upstream.py` answers every model after a fixed latency; this wrapper adds a listing per
endpoint so `benchwarmers endpoint refresh` finds models whose window, images and price are known:

    python -m perf.upstream --port 9001 --latency 0.05 --endpoints 8

serves endpoint i (1-based) at `http://127.0.0.1:9001/e<i>/v1`, listing every model whose index is
i modulo the endpoint count. Each model lives on its own endpoint by default, so the bench's
per-endpoint cap on calls in flight does not stand in front of its own cost (see docs/BENCHMARKS.md).
"""

from __future__ import annotations

import argparse
from typing import Any

from tests.fakes.upstream import FakeUpstream, run_forever

# Eight families, so a 3-member collection can seat two explorers of families of their own.
MODELS = (
    "llama-3.3-70b",
    "qwen3-32b",
    "gemma-3-27b",
    "mistral-small",
    "deepseek-v3",
    "phi-4",
    "glm-4.5-air",
    "kimi-k2",
)


def endpoint_models(endpoint: int, endpoints: int) -> list[str]:
    """The models endpoint `endpoint` (1-based) lists when the roster is spread over `endpoints`."""
    return [model for index, model in enumerate(MODELS) if index % endpoints == endpoint - 1]


# 2^20 tokens: the bench refuses a prompt above a member's window (characters ÷ 4 + 10%), and the
# scaling scenarios send 1 MB prompts (about 275,000 tokens by that estimate).
WINDOW = 1_048_576


def listing(models: list[str]) -> dict[str, Any]:
    """An OpenRouter-style listing: free, a 1M-token window, takes images (the 15 MB image case needs it)."""
    return {
        "object": "list",
        "data": [
            {
                "id": model,
                "name": model,
                "context_length": WINDOW,
                "architecture": {"input_modalities": ["text", "image"], "output_modalities": ["text"]},
                "pricing": {"prompt": "0", "completion": "0"},
            }
            for model in models
        ],
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--latency", type=float, default=0.05, help="seconds before every answer")
    parser.add_argument("--endpoints", type=int, default=len(MODELS), help="endpoints the roster is spread over")
    parser.add_argument(
        "--jitter", type=float, default=0.0, help="each answer's latency drawn from latency × (1 ± jitter) (0: fixed)"
    )
    args = parser.parse_args(argv)
    spread = (args.latency * (1 - args.jitter), args.latency * (1 + args.jitter))
    fake = FakeUpstream(args.port, default_latency=spread if args.jitter else args.latency, record=False)
    for endpoint in range(1, args.endpoints + 1):
        fake.listing(f"/e{endpoint}/v1/models", listing(endpoint_models(endpoint, args.endpoints)))
    run_forever(fake)


if __name__ == "__main__":
    main()
