"""What seating needs from the call log, kept in memory: when each model last sat on each shape,
its verdict counts, and which models are on a failure streak.

Every rule that changes these lives here (a seat taken, a verdict given or replaced, a streak
started or ended), so the panel path, the verdict path and the recorder agree on them. Other
processes write to the same database, so the whole history is re-read every `TTL` seconds.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass, field

from sqlalchemy.ext.asyncio import AsyncConnection

from benchwarmers.store import calls, roster

TTL = 30.0  # seconds before the history is re-read (picks up other processes' panels)

Key = tuple[str, str]  # (alias, shape)


@dataclass
class SeatHistory:
    last_seated: dict[Key, float] = field(default_factory=dict)
    counts: dict[Key, tuple[int, int]] = field(default_factory=dict)  # (useful, not useful)
    streaking: set[int] = field(default_factory=set)  # model pks whose failure streak is above zero
    answered: dict[str, int] = field(default_factory=dict)  # alias → largest prompt answered (tokens)
    loaded_at: float = 0.0

    @classmethod
    async def load(cls, conn: AsyncConnection) -> SeatHistory:
        return cls(
            last_seated=await calls.last_seated(conn),
            counts=await calls.verdict_counts(conn),
            streaking=await roster.streaking_models(conn),
            answered=await roster.largest_answered(conn),
            loaded_at=time.time(),
        )

    def stale(self, now: float | None = None) -> bool:
        return (now if now is not None else time.time()) - self.loaded_at > TTL

    def expire(self) -> None:
        """Re-read on the next use (a model was renamed: the counts are kept under its old alias)."""
        self.loaded_at = 0.0

    def seated(self, alias: str, shape: str, at: float) -> None:
        """A model sat a seat on this shape (staleness starts again)."""
        self.last_seated[(alias, shape)] = at

    def judged(self, alias: str, shape: str, useful: bool, replaced: bool | None = None) -> None:
        """A verdict on a seated seat; `replaced` is the useful flag of the verdict it replaces."""
        good, bad = self.counts.get((alias, shape), (0, 0))
        if replaced is not None:
            good, bad = (good - 1, bad) if replaced else (good, bad - 1)
        self.counts[(alias, shape)] = (good + 1, bad) if useful else (good, bad + 1)

    def streak_started(self, model_pk: int) -> None:
        self.streaking.add(model_pk)

    def streaks_ended(self, answered: Iterable[int]) -> list[int]:
        """Models that answered: those known to be on a streak, whose streak must be reset in the
        database (the others need no write, which spares one on every panel)."""
        ended = [pk for pk in answered if pk in self.streaking]
        self.streaking.difference_update(ended)
        return ended
