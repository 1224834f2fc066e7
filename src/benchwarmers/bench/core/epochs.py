"""Evidence that ages: a change detector per model × shape that opens a new *epoch* when the
recent verdicts disagree with the rest of the epoch beyond chance.

Free models change under the same id (new weights, quantisation, a provider swap), so a model's
all-time record can describe a model that is gone. After every verdict the last 10, 20, 40, 80
and 160 verdicts (each window that leaves at least `MIN_BEFORE` verdicts before it) are compared
with the rest of the epoch by a likelihood-ratio (G) test on the 2×2 table (useful / not useful ×
recent / before). When the largest G is above `THRESHOLD` the window becomes the new epoch: its
verdicts are the model's current evidence, the older ones stay in the all-time record.

The threshold is set for scanning after every verdict over five windows: G > 22 (one test alone
would be p ≈ 3e-6) gave 0.8% false alarms over 500 stationary runs of 3,000 verdicts at rates from
0.2 to 0.8 (4% at G > 20, 31% at G > 15), and a swap from 0.8 to 0.3 after 200 verdicts opens an
epoch after a median of 20 verdicts (90% within 38). tests/bench/evidence/test_epochs.py measures both on seeded
sequences. A false alarm costs little: the epoch restarts from a window of honest verdicts.

Memory is bounded: a track keeps the last `max(WINDOWS)` verdicts and the epoch's totals.
Pure: verdicts in, counts out.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field

WINDOWS = (10, 20, 40, 80, 160)
MIN_BEFORE = 20  # verdicts the epoch must hold before a window for the comparison to mean anything
THRESHOLD = 22.0  # G above which the recent window opens a new epoch


def g_statistic(recent_good: int, recent_n: int, before_good: int, before_n: int) -> float:
    """The likelihood-ratio statistic of a 2×2 table: recent against before, useful against not."""
    total_n = recent_n + before_n
    total_good = recent_good + before_good
    if recent_n == 0 or before_n == 0 or total_good in (0, total_n):
        return 0.0
    g = 0.0
    for good, n in ((recent_good, recent_n), (before_good, before_n)):
        for observed, column in ((good, total_good), (n - good, total_n - total_good)):
            if observed:
                g += observed * math.log(observed * total_n / (n * column))
    return 2.0 * g


@dataclass(frozen=True)
class Change:
    """A new epoch opened: when its first verdict was given, and the evidence that opened it."""

    at: float  # the time of the new epoch's first verdict
    recent: tuple[int, int]  # (useful, verdicts) of the window that became the epoch
    before: tuple[int, int]  # (useful, verdicts) of the epoch it ended

    def describe(self) -> str:
        return f"recent {self.recent[0]}/{self.recent[1]} against {self.before[0]}/{self.before[1]} before"


@dataclass
class Track:
    """One model's verdicts on one shape in time order: all-time and current-epoch counts."""

    recent: deque[tuple[bool, float]] = field(default_factory=lambda: deque(maxlen=WINDOWS[-1]))
    good: int = 0  # the current epoch's useful verdicts
    n: int = 0  # the current epoch's verdicts
    all_good: int = 0
    all_n: int = 0
    changes: list[Change] = field(default_factory=list)
    sums: list[int] = field(default_factory=lambda: [0] * len(WINDOWS))  # useful among the last w, per window

    @property
    def current(self) -> tuple[int, int]:
        """The current epoch as (useful, not useful), as seating takes counts."""
        return self.good, self.n - self.good

    @property
    def all_time(self) -> tuple[int, int]:
        return self.all_good, self.all_n - self.all_good

    def add(self, useful: bool, at: float) -> Change | None:
        """Take one verdict; the change it revealed, if any."""
        recent, sums = self.recent, self.sums
        for i, w in enumerate(WINDOWS):
            if len(recent) >= w:
                sums[i] -= recent[-w][0]  # the verdict that leaves this window
            sums[i] += useful
        recent.append((useful, at))
        self.good += useful
        self.n += 1
        self.all_good += useful
        self.all_n += 1
        return self._scan()

    def _scan(self) -> Change | None:
        best_g, best_w, best_good = THRESHOLD, 0, 0
        for w, window_good in zip(WINDOWS, self.sums, strict=True):
            if w + MIN_BEFORE > self.n:
                break
            g = g_statistic(window_good, w, self.good - window_good, self.n - w)
            if g > best_g:
                best_g, best_w, best_good = g, w, window_good
        if not best_w:
            return None
        change = Change(
            at=self.recent[-best_w][1], recent=(best_good, best_w), before=(self.good - best_good, self.n - best_w)
        )
        self.good, self.n = best_good, best_w
        self.changes.append(change)
        return change


def replay(verdicts: Iterable[tuple[bool, float]]) -> Track:
    """A track built from (useful, time) verdicts in time order."""
    track = Track()
    for useful, at in verdicts:
        track.add(useful, at)
    return track
