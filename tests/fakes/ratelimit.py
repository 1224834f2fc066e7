"""A provider's rate limit, as the fake provider enforces it."""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, field
from typing import Any

import orjson

from tests.fakes.behaviour import text_chars, tokens
from tests.fakes.wire import Response, default_error

DAY = 86400


@dataclass
class RateLimit:
    """A provider's moving window: at most `requests` calls and `tokens` tokens in any `period`
    seconds, counted when a call arrives (tokens: the prompt's characters ÷ 4 plus its
    max_tokens, as OpenAI counts them). A call beyond either gets a 429 with Retry-After.

    With `resets` (seconds after 00:00 UTC) it is a fixed daily allowance instead, as Gemini's
    and OpenRouter's free tiers count one: the calls since the last reset, on the fake's wall
    clock (injectable); a 429's Retry-After is the time to the next reset."""

    requests: int | None
    tokens: int | None
    period: float
    announce: bool  # send OpenAI-style x-ratelimit-{limit,remaining}-{requests,tokens} headers
    resets: int | None = None
    accepted: deque[tuple[float, int]] = field(default_factory=deque)  # (arrival, tokens)
    refused: int = 0

    def start(self, now: float) -> float:
        """Where the window begins: `period` before now, or the last daily reset."""
        if self.resets is None:
            return now - self.period
        reset = now - (now - self.resets) % DAY
        return reset - 1e-9  # a call at the reset itself is in the new day

    def used(self, now: float) -> tuple[int, int]:
        start = self.start(now)
        while self.accepted and self.accepted[0][0] <= start:
            self.accepted.popleft()
        return len(self.accepted), sum(tokens for _, tokens in self.accepted)

    def admits(self, now: float, tokens: int) -> bool:
        count, used = self.used(now)
        return (self.requests is None or count + 1 <= self.requests) and (
            self.tokens is None or used + tokens <= self.tokens
        )

    def retry_after(self, now: float) -> int:
        if self.resets is not None:
            return max(1, math.ceil(self.start(now) + DAY - now))
        oldest = self.accepted[0][0] if self.accepted else now
        return max(1, math.ceil(oldest + self.period - now))

    def headers(self, now: float) -> dict[str, str]:
        count, used = self.used(now)
        found: dict[str, str] = {}
        if self.requests is not None:
            found |= {"x-ratelimit-limit-requests": str(self.requests)}
            found |= {"x-ratelimit-remaining-requests": str(max(0, self.requests - count))}
        if self.tokens is not None:
            found |= {"x-ratelimit-limit-tokens": str(self.tokens)}
            found |= {"x-ratelimit-remaining-tokens": str(max(0, self.tokens - used))}
        return found


def admit(
    limits: list[RateLimit], model: str, data: dict[str, Any], now: float, wall: float
) -> tuple[Response | None, dict[str, str]]:
    """Count a call arriving at `now` (monotonic; `wall` on the fake's clock, for daily allowances)
    under the limits that apply to it: a 429 when one is used up, else the headers they announce."""
    if not limits:
        return None, {}
    cap = data.get("max_completion_tokens", data.get("max_tokens"))
    cost = tokens(text_chars(data)) + (cap if isinstance(cap, int) else 0)

    def at(limit: RateLimit) -> float:
        return wall if limit.resets is not None else now

    full = [limit for limit in limits if not limit.admits(at(limit), cost)]
    if full:
        for limit in full:
            limit.refused += 1
        headers = {"retry-after": str(max(limit.retry_after(at(limit)) for limit in full))}
        return Response(429, orjson.dumps(default_error(429, model, ""))), headers
    announced: dict[str, str] = {}
    for limit in limits:
        limit.accepted.append((at(limit), cost))
        if limit.announce:
            announced |= limit.headers(at(limit))
    return None, announced
