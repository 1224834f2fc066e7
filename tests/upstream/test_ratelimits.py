from email.utils import formatdate

import pytest

from benchwarmers.upstream.ratelimits import (
    RateLimitInfo,
    parse_duration,
    parse_rate_limits,
    retry_after_seconds,
)

NOW = 1_764_457_200.0


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("2m59.56s", 179.56),
        ("1h2m3s", 3723.0),
        ("120ms", 0.12),
        ("12.5", 12.5),
        ("12s", 12.0),
        ("7.66s", 7.66),
        ("1m", 60.0),
        (" 3 ", 3.0),
        ("0s", 0.0),
    ],
)
def test_parse_duration(text: str, seconds: float) -> None:
    assert parse_duration(text) == pytest.approx(seconds)


HUGE = "9" * 5000  # int() of it raises ValueError; float() reads inf, and int(inf) raises OverflowError


@pytest.mark.parametrize("text", ["", "soon", "-1", "12 parsecs", "1.2.3s", "m", HUGE, f"{HUGE}s", f"1m{HUGE}s"])
def test_parse_duration_rejects(text: str) -> None:
    assert parse_duration(text) is None


def test_retry_after_ms_wins() -> None:
    assert retry_after_seconds({"retry-after-ms": "1500", "retry-after": "9"}, NOW) == 1.5


def test_retry_after_seconds_and_case() -> None:
    assert retry_after_seconds({"Retry-After": "12"}, NOW) == 12.0


def test_retry_after_http_date() -> None:
    headers = {"retry-after": formatdate(NOW + 30, usegmt=True)}
    assert retry_after_seconds(headers, NOW) == 30.0


def test_retry_after_http_date_in_the_past_is_zero() -> None:
    assert retry_after_seconds({"retry-after": formatdate(NOW - 30, usegmt=True)}, NOW) == 0.0


def test_groq_reset_duration() -> None:
    assert retry_after_seconds({"x-ratelimit-reset-requests": "2m59.56s"}, NOW) == pytest.approx(179.56)


def test_openrouter_reset_epoch_millis() -> None:
    headers = {
        "x-ratelimit-limit": "20",
        "x-ratelimit-remaining": "0",
        "x-ratelimit-reset": str(int(NOW + 42) * 1000),
    }
    assert retry_after_seconds(headers, NOW) == 42.0


def test_exhausted_window_decides() -> None:
    # Cerebras: tokens per minute ran out; the daily request window did not.
    headers = {
        "x-ratelimit-remaining-requests-day": "14000",
        "x-ratelimit-reset-requests-day": "33011.5",
        "x-ratelimit-remaining-tokens-minute": "0",
        "x-ratelimit-reset-tokens-minute": "33.5",
    }
    assert retry_after_seconds(headers, NOW) == 33.5


def test_longest_of_several_exhausted_windows() -> None:
    headers = {
        "x-ratelimit-remaining-requests": "0",
        "x-ratelimit-reset-requests": "2m",
        "x-ratelimit-remaining-tokens": "0",
        "x-ratelimit-reset-tokens": "7.5s",
    }
    assert retry_after_seconds(headers, NOW) == 120.0


def test_soonest_reset_when_none_known_exhausted() -> None:
    headers = {"x-ratelimit-reset-requests": "2m", "x-ratelimit-reset-tokens": "7.5s"}
    assert retry_after_seconds(headers, NOW) == 7.5


def test_resets_can_be_ignored() -> None:
    headers = {"x-ratelimit-reset-requests": "2m"}
    assert retry_after_seconds(headers, NOW, include_resets=False) is None
    assert retry_after_seconds({}, NOW) is None
    assert retry_after_seconds({"retry-after": "whenever"}, NOW) is None


def test_parse_rate_limits_openrouter() -> None:
    info = parse_rate_limits({"X-RateLimit-Limit": "20", "X-RateLimit-Remaining": "3", "X-RateLimit-Reset": "1"})
    assert info == RateLimitInfo(limits={"requests": 20}, remaining={"requests": 3})


def test_parse_rate_limits_groq() -> None:
    info = parse_rate_limits(
        {
            "x-ratelimit-limit-requests": "1000",
            "x-ratelimit-limit-tokens": "12000",
            "x-ratelimit-remaining-requests": "999",
            "x-ratelimit-remaining-tokens": "11850",
            "x-ratelimit-reset-requests": "1m26.4s",
        }
    )
    assert info.limits == {"requests": 1000, "tokens": 12000}
    assert info.remaining == {"requests": 999, "tokens": 11850}


def test_parse_rate_limits_cerebras_and_mistral() -> None:
    info = parse_rate_limits(
        {
            "x-ratelimit-limit-requests-day": "14400",
            "x-ratelimit-remaining-requests-day": "14399",
            "x-ratelimit-limit-tokens-minute": "60000",
            "x-ratelimit-remaining-tokens-minute": "59000.0",
            "x-ratelimit-limit-req-minute": "60",
            "x-ratelimit-remaining-req-minute": "59",
            "x-ratelimit-tokens-query-cost": "123",
            "content-type": "application/json",
        }
    )
    assert info.limits == {"requests-day": 14400, "tokens-minute": 60000, "req-minute": 60}
    assert info.remaining == {"requests-day": 14399, "tokens-minute": 59000, "req-minute": 59}


def test_parse_rate_limits_anthropic_style_and_garbage() -> None:
    info = parse_rate_limits(
        {
            "anthropic-ratelimit-requests-limit": "50",
            "anthropic-ratelimit-requests-remaining": "49",
            "x-ratelimit-limit-tokens": "lots",
        }
    )
    assert info == RateLimitInfo(limits={"requests": 50}, remaining={"requests": 49})


def test_huge_numbers_in_a_providers_headers_are_ignored() -> None:
    headers = {
        "retry-after": HUGE,
        "x-ratelimit-limit-requests": HUGE,
        "x-ratelimit-remaining-requests": "0",
        "x-ratelimit-reset-requests": f"{HUGE}.5",
        "x-ratelimit-limit-tokens": "60000",
        "x-ratelimit-remaining-tokens": f"{HUGE};w=60",
    }
    assert parse_rate_limits(headers) == RateLimitInfo(limits={"tokens": 60000}, remaining={"requests": 0})
    assert retry_after_seconds(headers, NOW) is None
    assert retry_after_seconds({**headers, "x-ratelimit-reset-tokens": "7s"}, NOW) == 7.0
