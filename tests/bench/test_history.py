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


def test_a_change_in_a_model_opens_an_epoch_that_seating_weighs_alone():
    history = SeatHistory()
    for i in range(100):
        history.judged("m", "code", useful=True, at=float(i))
    assert history.current[("m", "code")] == history.counts[("m", "code")] == (100, 0)
    for i in range(20):
        history.judged("m", "code", useful=False, at=100.0 + i)
    assert history.counts[("m", "code")] == (100, 20)
    # The last 10 of the first 105 (5/10) opened the epoch: 5 useful of the last 25.
    assert history.current[("m", "code")] == (5, 20)
    assert history.tracks[("m", "code")].changes[0].describe() == "recent 5/10 against 95/95 before"


def test_a_replaced_verdict_moves_the_current_count_and_asks_for_a_re_read():
    history = SeatHistory(loaded_at=100.0)
    history.judged("m", "code", useful=False, at=1.0)
    history.judged("m", "code", useful=True, replaced=False)
    assert history.current[("m", "code")] == history.counts[("m", "code")] == (1, 0)
    assert history.stale(now=101.0)
