"""One model call as a recorded outcome: the slot it is paced by (bench/pacing.py), the call, and
its failure classified as a status, never an exception. Only the model-calling service
(bench/calls/service.py) calls it: the service scrubs what comes back."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from typing import Any

from benchwarmers.bench.clients import SeatClients
from benchwarmers.bench.core.outcomes import SeatOutcome
from benchwarmers.bench.pacing import Pacer, Refusal, Slot, scopes_of
from benchwarmers.bench.snapshot import Snapshot
from benchwarmers.upstream.failures import FailureKind, UpstreamFailure

CANCELLED = "cancelled: client disconnected"


Pace = Slot | Refusal


def frees_in(frees_at: float | None, now: float) -> str:
    """`frees up in 4s (12:01:03 UTC)`: when a model that was not called may be called again."""
    if frees_at is None:
        return "no slot will fit it"
    clock = time.strftime("%H:%M:%S UTC", time.gmtime(frees_at))
    return f"frees up in {max(0.0, frees_at - now):.1f}s ({clock})"


def not_called(outcome: SeatOutcome, status: str, frees_at: float | None, why: str) -> SeatOutcome:
    """A seat whose model was not called: `paced` or `cooling`, and when it frees up."""
    outcome.status, outcome.frees_at = status, frees_at
    outcome.error = f"{why}; {frees_in(frees_at, time.time())}"
    return outcome


def used_tokens(usage: dict[str, Any] | None) -> int | None:
    """Tokens a reply says it used, if it says."""
    if not usage:
        return None
    total = usage.get("total_tokens")
    if isinstance(total, int):
        return total
    parts = [usage.get("prompt_tokens"), usage.get("completion_tokens")]
    return sum(p for p in parts if isinstance(p, int)) if any(isinstance(p, int) for p in parts) else None


async def call_model(
    clients: SeatClients,
    pacer: Pacer,
    snapshot: Snapshot,
    *,
    alias: str,
    call: str,
    kind: str,
    body: bytes | Sequence[bytes],
    seat_timeout: float,
    tokens: int,
    pace: Pace | None = None,
    wait: bool = True,
    stands_in_for: str | None = None,
) -> SeatOutcome:
    """One model call as a recorded outcome: failures become statuses, never exceptions.

    `pace` is a slot (or refusal) already taken for it; without one the call takes its own, waiting
    up to `seat_timeout` when `wait`. The wait counts towards the seat's timeout.
    """
    model = snapshot.models[alias]
    endpoint = snapshot.endpoints[model.endpoint]
    started = time.perf_counter()
    outcome = SeatOutcome(call=call, seat=kind, alias=alias, endpoint=endpoint.name, status="error", seconds=0.0)
    outcome.stands_in_for = stands_in_for
    if endpoint.key_refused:
        # Its key variable is not one the bench reads: the model is not asked without its key.
        failure = UpstreamFailure(FailureKind.auth, endpoint.key_refused)
        outcome.error, outcome.failure = str(failure), failure
        return outcome
    now = time.time()
    if model.cooling(now):
        return not_called(outcome, "cooling", model.cooldown_until, "cooling down after a rate limit (429)")
    try:
        if pace is None:
            scopes = scopes_of(snapshot, alias)
            pace = await (pacer.wait(scopes, tokens, now + seat_timeout) if wait else pacer.take(scopes, tokens))
        if isinstance(pace, Refusal):
            not_called(outcome, "paced", pace.frees_at, f"paced: {pace.why}")
            outcome.seconds = round(time.perf_counter() - started, 3)
            return outcome
        cap = snapshot.gateway.answer_cap_kb * 1024
        timeout = max(0.0, seat_timeout - pace.waited)
        result = await clients.chat(endpoint, body, timeout, cap, model.concurrency, model.output_cap)
    except UpstreamFailure as failure:
        outcome.error, outcome.failure, outcome.headers = str(failure), failure, failure.headers
        if failure.kind is FailureKind.timeout and isinstance(pace, Slot) and pace.waited > 0:
            outcome.error = f"timeout after {seat_timeout:g}s ({pace.waited:.1f}s of it waiting for a slot)"
    except asyncio.CancelledError:
        outcome.error = CANCELLED
        outcome.seconds = round(time.perf_counter() - started, 3)
        raise Cancelled(outcome) from None
    else:
        outcome.answer, outcome.usage, outcome.headers = result.answer, result.usage, result.headers
        outcome.tool_calls, outcome.finish_reason = result.tool_calls, result.finish_reason
        outcome.truncated_at = result.truncated_at
        # A tool call is an answer: a seat that only calls a tool answered.
        outcome.status = "ok" if result.answer.strip() or result.tool_calls else "empty"
        await pacer.settle(pace, used_tokens(result.usage))
    await pacer.align(alias, outcome.headers, model.limits)
    outcome.seconds = round(time.perf_counter() - started, 3)
    return outcome


class Cancelled(Exception):
    def __init__(self, outcome: SeatOutcome) -> None:
        super().__init__(outcome.call)
        self.outcome = outcome
