"""How long a run needs under the known rate limits: the `--dry-run` arithmetic. Pure functions."""

from __future__ import annotations

import math
from collections.abc import Sequence

from benchwarmers.catalog.pace import Limit


def tokens_for(prompt_chars: int, answer_tokens: int = 800) -> int:
    """A call's tokens as the pacer counts them: the prompt's estimate plus room for the answer."""
    return math.ceil(prompt_chars / 4 * 1.1) + answer_tokens


def seconds_needed(calls: int, tokens_per_call: int, limits: Sequence[Limit]) -> float | None:
    """The least time `calls` calls take under `limits` (0 when one window holds them all);
    None when a single call is larger than a token limit (it can never be made)."""
    worst = 0.0
    for limit in limits:
        cost = 1 if limit.kind == "requests" else max(1, tokens_per_call)
        per_window = limit.amount // cost
        if per_window == 0:
            return None
        windows = math.ceil(calls / per_window)
        worst = max(worst, float((windows - 1) * limit.period))
    return worst


def describe_seconds(seconds: float | None) -> str:
    if seconds is None:
        return "never (one call is larger than a token limit)"
    if seconds < 60:
        return "no wait" if seconds == 0 else f"{seconds:.0f} s"
    if seconds < 3600:
        return f"{seconds / 60:.0f} min"
    if seconds < 86400:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.1f} days"
