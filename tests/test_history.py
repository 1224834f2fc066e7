"""The seat history's rules, directly: seated, judged, a verdict replaced, streaks started and ended."""

from __future__ import annotations

from benchwarmers.bench.history import SeatHistory


def test_seated_moves_staleness_for_that_shape_only():
    history = SeatHistory()
    history.seated("m", "review", 10.0)
    history.seated("m", "review", 20.0)
    assert history.last_seated == {("m", "review"): 20.0}


def test_judged_counts_and_a_replaced_verdict_moves_one_count_across():
    history = SeatHistory()
    history.judged("m", "code", useful=True)
    history.judged("m", "code", useful=False)
    assert history.counts[("m", "code")] == (1, 1)
    history.judged("m", "code", useful=True, replaced=False)  # not useful → useful
    assert history.counts[("m", "code")] == (2, 0)
    history.judged("m", "code", useful=False, replaced=True)  # useful → not useful
    assert history.counts[("m", "code")] == (1, 1)


def test_streaks_end_only_for_models_known_to_be_on_one():
    history = SeatHistory(streaking={3})
    history.streak_started(7)
    assert history.streaks_ended([1, 3, 5]) == [3]
    assert history.streaking == {7}
    assert history.streaks_ended([7]) == [7]
    assert history.streaking == set()


def test_staleness_of_the_whole_history():
    history = SeatHistory(loaded_at=100.0)
    assert not history.stale(now=110.0)
    assert history.stale(now=131.0)
