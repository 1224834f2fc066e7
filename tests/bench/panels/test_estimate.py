"""The prompt estimate (bench/core/estimate.py): code told from prose, defaults that err high, and
each model's characters a token learned from reported usage, robust to outliers."""

from __future__ import annotations

import math

from benchwarmers.bench.core import estimate as est
from benchwarmers.bench.core.estimate import CODE, PROSE, PromptSize, Ratios
from benchwarmers.bench.panels.parse import read_content
from benchwarmers.bench.suite.tasks import load_tasks

PROSE_TEXT = "The quick brown fox jumps over the lazy dog near the quiet river bank. " * 30
CODE_TEXT = "def f(x):\n    return {k: v for k, v in x.items() if v[0] == '_'}  # keep\n" * 30


def kind(text: str) -> str:
    return read_content([{"role": "user", "content": text}]).kind


def test_code_and_prose_are_told_apart_and_every_shipped_task_is_code():
    assert (kind(PROSE_TEXT), kind(CODE_TEXT)) == (PROSE, CODE)
    assert {kind(task.prompt()) for task in load_tasks()} == {CODE}
    # Counted over every text part of every message.
    parts = [{"type": "text", "text": PROSE_TEXT}, {"type": "text", "text": CODE_TEXT * 3}]
    assert read_content([{"role": "system", "content": PROSE_TEXT}, {"role": "user", "content": parts}]).kind == CODE


def test_a_megabyte_is_classified_from_a_bounded_sample():
    symbols, looked_at = est.symbol_count(PROSE_TEXT * 500 + CODE_TEXT * 500)
    assert looked_at == est.SLICE * est.SLICES
    assert est.kind_of(symbols, looked_at) == CODE
    assert est.symbol_count("a(b)") == (2, 4)


def test_the_default_estimate_errs_high_by_its_margin_per_kind():
    assert est.estimate(3_000, 0, CODE) == est.Estimate(1_100, CODE, 3.0, 0.10)
    assert est.estimate(3_600, 2, PROSE).tokens == 1_100 + 2 * 2_500
    assert est.estimate(3_600, 0, PROSE).describe() == (
        "prose, default 3.6 characters a token + 10% until the model's usage is known"
    )


def test_the_learned_ratio_is_used_after_enough_answers_and_converges_on_the_median():
    ratios = Ratios()
    ratios.observe("m", PROSE, 10_000, 2_000)  # 5.0
    ratios.observe("m", PROSE, 10_000, 2_500)  # 4.0
    assert ratios.learned("m", PROSE) is None  # two answers: still the default
    assert ratios.estimate("m", 10_000, 0, PROSE).tokens == math.ceil(10_000 / 3.6 * 1.1)
    for tokens in (2_100, 2_150, 2_200, 2_250, 2_100, 2_200, 2_300):  # 4.3-4.8: the median's is 2,200
        ratios.observe("m", PROSE, 10_000, tokens)
    ratio, answers = ratios.learned("m", PROSE) or (0.0, 0)
    assert (round(ratio, 3), answers) == (round(10_000 / 2_200, 3), 9)
    learned = ratios.estimate("m", 10_000, 0, PROSE)
    assert learned.tokens == math.ceil(10_000 / ratio * 1.05)
    assert learned.describe() == "prose, 4.5 characters a token learned from 9 answers of m; margin 5%"
    # Only the newest KEPT answers count: a model whose tokenizer changed is learned again.
    for _ in range(est.KEPT):
        ratios.observe("m", PROSE, 10_000, 2_000)
    assert ratios.learned("m", PROSE) == (5.0, est.KEPT)
    # Per model and per kind: code and other models keep the default.
    assert ratios.learned("m", CODE) is None and ratios.learned("other", PROSE) is None


def test_an_outlier_cannot_make_the_estimate_dangerously_low():
    ratios = Ratios()
    for _ in range(5):
        ratios.observe("m", CODE, 9_000, 3_000)  # 3.0
    ratios.observe("m", CODE, 9_000, 1)  # a provider reporting 1 prompt token: 9,000 characters a token
    assert ratios.learned("m", CODE) == (3.0, 6)
    # Even when every report is far too low, the ratio stops at 1.5 times the default.
    for _ in range(est.KEPT):
        ratios.observe("m", CODE, 9_000, 10)
    assert ratios.learned("m", CODE) == (3.0 * est.MAX_LEARNED, est.KEPT)
    assert ratios.estimate("m", 9_000, 0, CODE).tokens == math.ceil(9_000 / 4.5 * 1.05)


def test_short_prompts_and_missing_counts_teach_nothing():
    ratios = Ratios()
    for tokens in (30, None, 0, True, "12"):
        for _ in range(3):
            ratios.observe("m", PROSE, est.MIN_CHARS - 1 if tokens == 30 else 5_000, tokens)
    assert ratios.seen == {}


def test_a_prompt_size_gives_each_model_its_own_estimate_or_the_panels_default():
    ratios = Ratios()
    for _ in range(3):
        ratios.observe("fast", PROSE, 5_000, 1_000)
    size = PromptSize.of(5_000, 0, PROSE, 1_528, ratios)
    assert size.for_model("other") == est.Estimate(1_528, PROSE, 3.6, 0.10)
    assert size.for_model("fast") == est.Estimate(1_050, PROSE, 5.0, 0.05, 3, "fast")
    assert (size.tokens_for("other"), size.tokens_for("fast")) == (1_528, 1_050)
