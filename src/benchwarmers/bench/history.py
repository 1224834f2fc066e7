"""What seating needs from the call log, kept in memory: when each model last sat on each shape,
its verdict counts (all-time, and the current epoch's: bench/core/epochs.py), and which models
are on a failure streak.

Every rule that changes these lives here (a seat taken, a verdict given or replaced, a streak
started or ended), so the panel path, the verdict path and the recorder agree on them. Other
processes write to the same database, so the whole history is re-read every `TTL` seconds.

Staleness cannot wait that long: several workers (or hosts) seating from their own view would
each pick the same stalest explorer. So who sat when is caught up with every process's seats at
most every `CATCH_UP` seconds (one indexed query), and so is the set of models on a failure
streak (a model that answers here must end a streak another process started; a streak started in
the last second elsewhere may go on one failure longer). Verdict counts move slowly and only
shift rankings a little, so they wait for the full re-read.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass, field

from sqlalchemy.ext.asyncio import AsyncConnection

from benchwarmers.bench.core.epochs import Track
from benchwarmers.store import calls, roster

TTL = 30.0  # seconds before the history is re-read (picks up other processes' panels)
CATCH_UP = 1.0  # seconds between catching up with the seats other processes recorded
# Seconds read again at each catch-up: a seat is stamped before its batch commits, milliseconds
# later. A commit held up longer (another process's write lock) is picked up by the re-read, at
# most TTL seconds on. Every seat in the window is read each second: at 4,000 seats a second, 10 s
# of them took ~20 ms of a reader's CPU per catch-up.
OVERLAP = 2.0

Key = tuple[str, str]  # (alias, shape)


@dataclass
class SeatHistory:
    last_seated: dict[Key, float] = field(default_factory=dict)
    counts: dict[Key, tuple[int, int]] = field(default_factory=dict)  # (useful, not useful), all-time
    # The current epoch's (useful, not useful): what seating weighs. Human and suite verdicts count alike.
    current: dict[Key, tuple[int, int]] = field(default_factory=dict)
    tracks: dict[Key, Track] = field(default_factory=dict)  # verdicts in time order, for the change detector
    streaking: set[int] = field(default_factory=set)  # model pks whose failure streak is above zero
    answered: dict[str, int] = field(default_factory=dict)  # alias → largest prompt answered (tokens)
    loaded_at: float = 0.0
    caught_up_at: float = 0.0

    @classmethod
    async def load(cls, conn: AsyncConnection) -> SeatHistory:
        now = time.time()
        tracks: dict[Key, Track] = {}
        for alias, shape, useful, _source, at in await calls.verdict_sequence(conn):
            track = tracks.get((alias, shape))
            if track is None:
                track = tracks[(alias, shape)] = Track()
            track.add(useful, at)
        return cls(
            last_seated=await calls.last_seated(conn),
            counts={key: track.all_time for key, track in tracks.items()},
            current={key: track.current for key, track in tracks.items()},
            tracks=tracks,
            streaking=await roster.streaking_models(conn),
            answered=await roster.largest_answered(conn),
            loaded_at=now,
            caught_up_at=now,
        )

    def behind(self, now: float) -> bool:
        return now - self.caught_up_at > CATCH_UP

    async def catch_up(self, conn: AsyncConnection, now: float) -> None:
        """Take in the seats every process recorded since the last look."""
        for key, at in (await calls.seated_since(conn, self.caught_up_at - OVERLAP)).items():
            if at > self.last_seated.get(key, 0.0):
                self.last_seated[key] = at
        # Streaks other processes started: a model that answers here must end them too.
        self.streaking = await roster.streaking_models(conn)
        self.caught_up_at = now

    def stale(self, now: float | None = None) -> bool:
        return (now if now is not None else time.time()) - self.loaded_at > TTL

    def expire(self) -> None:
        """Re-read on the next use (a model was renamed: the counts are kept under its old alias)."""
        self.loaded_at = 0.0

    def seated(self, alias: str, shape: str, at: float) -> None:
        """A model sat a seat on this shape (staleness starts again)."""
        self.last_seated[(alias, shape)] = at

    def judged(
        self, alias: str, shape: str, useful: bool, replaced: bool | None = None, at: float | None = None
    ) -> None:
        """A verdict on a seated seat; `replaced` is the useful flag of the verdict it replaces."""
        key = (alias, shape)
        if replaced is not None:
            # Swapped in place until the re-read, which replays the sequence with the new verdict in it.
            for counts in (self.counts, self.current):
                good, bad = counts.get(key, (0, 0))
                if (good if replaced else bad) > 0:
                    good, bad = (good - 1, bad) if replaced else (good, bad - 1)
                counts[key] = (good + 1, bad) if useful else (good, bad + 1)
            self.expire()
            return
        track = self.tracks.get(key)
        if track is None:
            track = self.tracks[key] = Track()
        track.add(useful, at if at is not None else time.time())
        self.counts[key] = track.all_time
        self.current[key] = track.current

    def streak_started(self, model_pk: int) -> None:
        self.streaking.add(model_pk)

    def streaks_ended(self, answered: Iterable[int]) -> list[int]:
        """Models that answered: those known to be on a streak, whose streak must be reset in the
        database (the others need no write, which spares one on every panel)."""
        ended = [pk for pk in answered if pk in self.streaking]
        self.streaking.difference_update(ended)
        return ended
