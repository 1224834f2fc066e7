"""Each model's characters a token, learned from the prompt tokens its seats reported (the arithmetic
is bench/core/estimate.py): what a panel stores for it and what its seats teach (the reload at start
is bench/state.py's).

Kept in memory per process and read again from the seats at start; a panel's own seats teach this
process at once, other processes' seats at its next start (until then it errs high, by its margin).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from benchwarmers.bench.core.estimate import MIN_CHARS, Ratios
from benchwarmers.nouns.seats import SeatStatus
from benchwarmers.store.calls import SEATED_KINDS

if TYPE_CHECKING:
    from benchwarmers.bench.core.outcomes import SeatOutcome
    from benchwarmers.bench.panels.prepare import PreparedPanel


def teaches(panel: PreparedPanel) -> bool:
    """A prompt whose reported tokens are its text's: no images (their tokens are the provider's
    own) and no tool definitions (their tokens are not in the characters counted)."""
    return panel.content.images == 0 and "tools" not in panel.checks and panel.content.text_chars >= MIN_CHARS


def prompt_columns(panel: PreparedPanel) -> tuple[int | None, str | None]:
    """The panel row's prompt_chars and prompt_kind: set only when its seats' usage teaches a ratio."""
    if not teaches(panel):
        return None, None
    return panel.content.text_chars, panel.content.kind


def learn_ratios(ratios: Ratios, panel: PreparedPanel, outcomes: Sequence[SeatOutcome]) -> None:
    """What the panel's answered seats reported of the prompt, taken in (mergers and decision models
    were sent other prompts, so only seats teach)."""
    if not teaches(panel):
        return
    for outcome in outcomes:
        if outcome.seat in SEATED_KINDS and outcome.status == SeatStatus.ok and outcome.usage:
            ratios.observe(
                outcome.alias, panel.content.kind, panel.content.text_chars, outcome.usage.get("prompt_tokens")
            )
