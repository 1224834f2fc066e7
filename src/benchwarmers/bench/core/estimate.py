"""A prompt's size in tokens before any model is called, from its characters: by content kind (code
or prose) and, once a model's provider has reported enough prompt tokens, by that model's own
characters per token. Pure: the observations arrive as numbers, the store is read elsewhere.

The defaults were measured with SmolLM2-135M's tokenizer (perf/estimate_error.py, docs/BENCHMARKS.md
"Prompt estimate"): the suite's 29 code tasks take 2.72-3.54 characters a token (median 3.2), the
docs' technical prose 3.2-4.0 (median 3.6), plain English 4.7. A default ratio is divided by a 10%
margin, so on code the estimate is above the real count for every shipped task.
"""

from __future__ import annotations

import math
import statistics
from collections import deque
from dataclasses import dataclass, field

CODE, PROSE = "code", "prose"
KINDS = (CODE, PROSE)
DEFAULT_RATIO = {CODE: 3.0, PROSE: 3.6}  # characters a token before a model's usage is known
DEFAULT_MARGIN = 0.10  # the estimate errs high by this much on a default ratio ...
LEARNED_MARGIN = 0.05  # ... and by this much on a ratio learned from the model's reported usage
MIN_ANSWERS = 3  # observations of one model and kind before its own ratio is used
KEPT = 32  # the newest observations kept per model and kind; the ratio is their median
# A learned ratio above this many times the kind's default is not believed (a provider that reports
# too few tokens, or prompts of one odd kind): the estimate never drops below ~2/3 of the default's.
MAX_LEARNED = 1.5
# Prompts shorter than this teach nothing: the chat template's own tokens (a system line, role
# markers: 20-40 tokens) would dominate them and no window check is ever close at that size.
MIN_CHARS = 500
TOKENS_PER_IMAGE = 2_500

# Code is told from prose by how dense these characters are: the shipped tasks hold 3.6-6.7% of
# them, plain English none; technical prose (3-5%) counts as code, which only errs high.
CODE_SYMBOLS = "{}()[];=<>_\\|#*`"
CODE_DENSITY = 0.02
# Only this many characters of a long text are looked at, in evenly spaced slices: the classifier
# runs on every request, and a megabyte counted in full took 12 ms.
SLICE, SLICES = 2_048, 16


def symbol_count(text: str) -> tuple[int, int]:
    """(code symbols, characters looked at) in `text`, on a bounded sample of it."""
    if len(text) > SLICE * SLICES:
        step = len(text) // SLICES
        text = "".join(text[i * step : i * step + SLICE] for i in range(SLICES))
    return sum(text.count(c) for c in CODE_SYMBOLS), len(text)


def kind_of(symbols: int, looked_at: int) -> str:
    return CODE if looked_at and symbols / looked_at >= CODE_DENSITY else PROSE


@dataclass(frozen=True)
class Estimate:
    """A prompt's tokens as estimated for one model, and how (shown in a 413 and a skip)."""

    tokens: int
    kind: str
    ratio: float  # characters a token, before the margin
    margin: float
    answers: int = 0  # observations the ratio was learned from; 0 = the kind's default
    alias: str = ""
    images: int = 0

    def describe(self) -> str:
        if self.answers:
            how = (
                f"{self.kind}, {self.ratio:.1f} characters a token learned from {self.answers} answers of "
                f"{self.alias}; margin {self.margin:.0%}"
            )
        else:
            how = f"{self.kind}, default {self.ratio:.1f} characters a token + {self.margin:.0%}"
            how += " until the model's usage is known"
        if self.images:
            how += f"; {TOKENS_PER_IMAGE:,} per image"
        return how


def estimate(chars: int, images: int, kind: str, learned: tuple[float, int] | None = None, alias: str = "") -> Estimate:
    """Tokens for `chars` characters of `kind` and `images` images: the learned (ratio, answers)
    when there is one, else the kind's default; either way divided by its margin (errs high)."""
    ratio, answers = learned if learned is not None else (DEFAULT_RATIO[kind], 0)
    margin = LEARNED_MARGIN if answers else DEFAULT_MARGIN
    tokens = math.ceil(chars / ratio * (1 + margin)) + TOKENS_PER_IMAGE * images
    return Estimate(tokens, kind, ratio, margin, answers, alias if answers else "", images)


def learnable(chars: int, prompt_tokens: object) -> bool:
    """Whether a seat's reported prompt tokens say something about its model's characters a token."""
    return (
        chars >= MIN_CHARS
        and isinstance(prompt_tokens, int)
        and not isinstance(prompt_tokens, bool)
        and prompt_tokens > 0
    )


@dataclass
class Ratios:
    """Each model's characters a token per kind, learned from the prompt tokens its provider reported.

    The ratio in use is the median of the newest `KEPT` observations, so one wild report moves it
    little, and it is capped at `MAX_LEARNED` times the default, so no run of them makes the estimate
    dangerously low."""

    seen: dict[tuple[str, str], deque[float]] = field(default_factory=dict)
    _learned: dict[tuple[str, str], tuple[float, int]] = field(default_factory=dict)

    def observe(self, alias: str, kind: str, chars: int, prompt_tokens: object) -> None:
        if not learnable(chars, prompt_tokens) or kind not in DEFAULT_RATIO:
            return
        assert isinstance(prompt_tokens, int)
        key = (alias, kind)
        found = self.seen.setdefault(key, deque(maxlen=KEPT))
        found.append(chars / prompt_tokens)
        if len(found) >= MIN_ANSWERS:
            ratio = min(statistics.median(found), DEFAULT_RATIO[kind] * MAX_LEARNED)
            self._learned[key] = (ratio, len(found))

    def learned(self, alias: str, kind: str) -> tuple[float, int] | None:
        """(ratio, observations) once there are enough of them, else None (the default applies)."""
        return self._learned.get((alias, kind))

    def estimate(self, alias: str, chars: int, images: int, kind: str) -> Estimate:
        return estimate(chars, images, kind, self.learned(alias, kind), alias)


@dataclass(frozen=True)
class PromptSize:
    """One request's prompt, estimated per model: its own learned ratio, else the panel's default."""

    chars: int
    images: int
    kind: str
    default: Estimate
    ratios: Ratios | None = None

    @classmethod
    def of(cls, chars: int, images: int, kind: str, default_tokens: int, ratios: Ratios | None) -> PromptSize:
        default = Estimate(default_tokens, kind, DEFAULT_RATIO[kind], DEFAULT_MARGIN, images=images)
        return cls(chars, images, kind, default, ratios)

    def tokens_for(self, alias: str) -> int:
        """`for_model(alias).tokens` without building the Estimate: run for every model in the pool."""
        learned = self.ratios.learned(alias, self.kind) if self.ratios is not None else None
        if learned is None:
            return self.default.tokens
        return math.ceil(self.chars / learned[0] * (1 + LEARNED_MARGIN)) + TOKENS_PER_IMAGE * self.images

    def for_model(self, alias: str) -> Estimate:
        learned = self.ratios.learned(alias, self.kind) if self.ratios is not None else None
        return self.default if learned is None else estimate(self.chars, self.images, self.kind, learned, alias)
