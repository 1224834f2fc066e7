"""The change detector (bench/core/epochs.py), pure: stationary evidence keeps one epoch, a
swap in a model's useful rate opens a new one within a few dozen verdicts."""

from __future__ import annotations

import random

import pytest

from benchwarmers.bench.core.epochs import MIN_BEFORE, Change, Track, g_statistic, replay


def test_g_statistic_is_zero_for_equal_rates_and_grows_with_the_gap():
    assert g_statistic(5, 10, 50, 100) == 0.0
    assert g_statistic(0, 10, 0, 100) == 0.0  # nothing useful anywhere: no evidence of a change
    assert g_statistic(3, 10, 80, 100) > g_statistic(4, 10, 80, 100) > 0.0
    # The textbook value for the table [[6, 14], [160, 40]]: 2 Σ O ln(O / E).
    assert g_statistic(6, 20, 160, 200) == pytest.approx(20.61, abs=0.01)


def test_a_track_counts_all_time_and_the_current_epoch():
    track = replay([(True, 1.0), (False, 2.0), (True, 3.0)])
    assert track.current == (2, 1)
    assert track.all_time == (2, 1)
    assert track.changes == []


def test_stationary_sequences_rarely_open_an_epoch():
    alarms = 0
    runs = 0
    for rate in (0.2, 0.5, 0.8):
        for seed in range(30):
            rng = random.Random(seed * 1000 + int(rate * 10))
            track = replay((rng.random() < rate, float(i)) for i in range(3000))
            alarms += bool(track.changes)
            runs += 1
    # Measured at 0.8% over 500 runs; 3 of 90 is the most a sound threshold leaves.
    assert alarms <= 3, f"{alarms} false alarms in {runs} stationary runs"


def test_a_swap_from_good_to_poor_opens_an_epoch_within_a_few_dozen_verdicts():
    delays = []
    for seed in range(40):
        rng = random.Random(seed)
        track = Track()
        for i in range(200):
            track.add(rng.random() < 0.8, float(i))
        assert not track.changes
        for k in range(1, 200):
            change = track.add(rng.random() < 0.3, 200.0 + k)
            if change is not None:
                delays.append(k)
                # The new epoch is the recent window (it may reach a little before the swap).
                assert track.current[0] / sum(track.current) < 0.6
                assert change.at >= 160.0 and change.before[1] + change.recent[1] == 200 + k
                break
        else:
            delays.append(10_000)
    delays.sort()
    assert delays[len(delays) // 2] <= 30, delays
    assert delays[int(len(delays) * 0.9)] <= 60, delays


def test_the_change_says_what_disagreed():
    track = replay([(True, float(i)) for i in range(100)] + [(False, 100.0 + i) for i in range(20)])
    # Five not-useful verdicts after 100 useful ones are enough: the last 10 (5/10) became the epoch.
    assert track.changes == [Change(at=95.0, recent=(5, 10), before=(95, 95))]
    assert track.changes[0].describe() == "recent 5/10 against 95/95 before"
    assert track.current == (5, 20)
    assert track.all_time == (100, 20)
    assert track.changes[0].before[1] >= MIN_BEFORE
