"""The pacer on its own: rate-limit windows as providers and users name them, and slots taken,
refused, waited for, settled and aligned with what a provider says is left (in memory; Redis is
driven end to end in tests/bench/test_pacing.py)."""

from __future__ import annotations

import time

import pytest

from benchwarmers.bench.pacing import Pacer, Refusal, Scope, Slot, guard
from benchwarmers.catalog.pace import Limit, check_windows, known_limits, limits_of, parse_window, updated_windows


def test_windows_as_providers_name_them():
    assert parse_window("requests") == ("requests", 60)  # OpenAI, Groq, OpenRouter's bare window: a minute
    assert parse_window("tokens") == ("tokens", 60)
    assert parse_window("requests-day") == ("requests", 86400)  # Cerebras
    assert parse_window("tokens-minute") == ("tokens", 60)
    assert parse_window("req-minute") == ("requests", 60)  # Mistral
    assert parse_window("requests-second") == ("requests", 1)
    assert parse_window("requests-10s") == ("requests", 10)  # any whole number of seconds, up to a day
    assert parse_window("requests-86401s") is None
    assert parse_window("input-tokens") is None  # Anthropic's split windows are not paced
    assert parse_window("tokens-query-cost") is None
    assert parse_window("requests-fortnight") is None


def test_the_users_limits_replace_the_announced_ones_of_the_same_window():
    announced = {"requests": 1000, "tokens": 12000, "tokens-query-cost": 32}
    override = {"requests-minute": 30, "requests-day": 14400}
    assert known_limits(announced, override) == (
        Limit("requests", 60, 30),
        Limit("requests", 86400, 14400),
        Limit("tokens", 60, 12000),
    )
    assert known_limits(None, None) == ()
    # Two names for one window: the tighter counts.
    assert limits_of({"requests": 50, "requests-minute": 40}) == {("requests", 60): Limit("requests", 60, 40)}
    assert Limit("requests", 1, 1).describe() == "1 request a second"
    assert Limit("tokens", 86400, 1_000_000).describe() == "1,000,000 tokens a day"
    assert (Limit("requests", 3, 20).window, Limit("requests", 3, 20).describe()) == (
        "requests-3s",
        "20 requests every 3 seconds",
    )


def test_windows_the_user_gives_are_checked_and_zero_removes_one():
    assert check_windows({"requests": 20, "tokens-minute": 0}) == {"requests-minute": 20, "tokens-minute": 0}
    with pytest.raises(ValueError, match="'requests-week' is not a rate-limit window"):
        check_windows({"requests-week": 3})
    with pytest.raises(ValueError, match="requests-minute must be a whole number of requests, 0 to remove it"):
        check_windows({"requests-minute": -1})
    current = {"requests-minute": 20, "tokens-minute": 6000}
    assert updated_windows(current, {"tokens-minute": 0, "requests-day": 500}) == {
        "requests-day": 500,
        "requests-minute": 20,
    }
    assert updated_windows(None, {"requests-minute": 0}) == {}


def test_the_guard_is_two_percent_of_the_period_from_a_quarter_second_to_a_second():
    assert guard(1) == 0.25
    assert guard(30) == 0.6
    assert guard(60) == 1.0
    assert guard(86400) == 1.0


MODEL = Scope("model", "fake/m", (Limit("requests", 1, 3),))
ENDPOINT = Scope("endpoint", "fake", (Limit("requests", 1, 2),))
TOKENS = Scope("model", "fake/t", (Limit("tokens", 1, 1000),))


async def test_a_slot_is_refused_once_a_window_is_used_up_and_says_when_it_frees():
    pacer = Pacer()
    before = time.time()
    slots = [await pacer.take([MODEL], 0) for _ in range(3)]
    after = time.time()
    assert all(isinstance(slot, Slot) for slot in slots)
    refused = await pacer.take([MODEL], 0)
    assert isinstance(refused, Refusal)
    assert refused.why == "model fake/m's 3 requests a second are used up"
    # The oldest call leaves the window one period and the guard after it was taken.
    assert refused.frees_at is not None
    assert before + 1.25 <= refused.frees_at <= after + 1.25
    assert await pacer.take([], 0) == Slot()  # a model without known limits is never paced


async def test_every_limit_of_a_call_or_none():
    pacer = Pacer()
    assert isinstance(await pacer.take([ENDPOINT, MODEL], 0), Slot)
    assert isinstance(await pacer.take([ENDPOINT, MODEL], 0), Slot)
    refused = await pacer.take([ENDPOINT, MODEL], 0)
    assert isinstance(refused, Refusal)
    assert refused.why == "endpoint fake's 2 requests a second are used up"
    # The refused call took nothing from the model's own window: one slot is left there.
    assert isinstance(await pacer.take([MODEL], 0), Slot)
    assert isinstance(await pacer.take([MODEL], 0), Refusal)


async def test_tokens_are_reserved_settled_from_usage_and_a_call_over_the_limit_never_fits():
    pacer = Pacer()
    never = await pacer.take([TOKENS], 1001)
    assert never == Refusal("the request's ~1,001 tokens are more than model fake/t's 1,000 tokens a second", None)
    slot = await pacer.take([TOKENS], 100)
    assert isinstance(slot, Slot)
    await pacer.settle(slot, 600)  # the reply used 600: 500 more than reserved
    assert isinstance(await pacer.take([TOKENS], 401), Refusal)
    assert isinstance(await pacer.take([TOKENS], 400), Slot)


async def test_what_a_provider_says_is_left_is_believed_when_it_is_less():
    pacer = Pacer()
    scope = Scope("model", "fake/h", (Limit("requests", 60, 5),))
    # Three calls the bench did not count (made before the limit was known, or by another client).
    await pacer.align("fake/h", {"x-ratelimit-limit-requests": "5", "x-ratelimit-remaining-requests": "2"})
    assert [isinstance(await pacer.take([scope], 0), Slot) for _ in range(3)] == [True, True, False]
    # More left than the bench counts changes nothing.
    await pacer.align("fake/h", {"x-ratelimit-limit-requests": "5", "x-ratelimit-remaining-requests": "5"})
    assert isinstance(await pacer.take([scope], 0), Refusal)


async def test_waiting_gets_the_next_slot_or_gives_up_when_it_frees_too_late():
    pacer = Pacer()
    one = Scope("model", "fake/w", (Limit("requests", 1, 1),))
    first = await pacer.take([one], 0)
    assert isinstance(first, Slot) and first.waited == 0.0
    too_late = await pacer.wait([one], 0, deadline=time.time() + 0.5)
    assert isinstance(too_late, Refusal)  # the slot frees 1.25 s after the first: past the deadline
    waited = await pacer.wait([one], 0, deadline=time.time() + 5)
    assert isinstance(waited, Slot)
    assert waited.waited > 0
