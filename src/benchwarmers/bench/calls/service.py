"""`ModelCaller`: every model call the bench makes (seats, the merger, the suite's judge, probes,
checks, decision models) goes through it. It takes the call's slot (bench/pacing.py), calls the
model through its endpoint kind's client, classifies a failure as a status, and scrubs what came
back of every secret the bench knows before anything reads it. Built once, in `BenchState`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence

import orjson

from benchwarmers.bench.calls.call import Pace, call_model, used_tokens
from benchwarmers.bench.clients import SeatClients
from benchwarmers.bench.core.outcomes import SeatOutcome
from benchwarmers.bench.pacing import Pacer, Refusal, scopes_of
from benchwarmers.bench.snapshot import Snapshot
from benchwarmers.redaction import scrub_answer, scrub_text
from benchwarmers.upstream.failures import FailureKind, UpstreamFailure


class NoSlot(Exception):
    """The decision model has no free slot under its rate limits: it was not asked."""

    def __init__(self, refusal: Refusal) -> None:
        super().__init__(refusal.why)
        self.refusal = refusal


def scrub_outcome(outcome: SeatOutcome, secrets: Sequence[str]) -> None:
    """Remove every secret the bench knows from what a call gave back, before it is used, kept or shown."""
    outcome.answer = scrub_answer(outcome.answer, secrets)
    for call in outcome.tool_calls:
        # A tool call is an answer: its arguments are scrubbed like text (its name is the caller's own).
        call["function"]["arguments"] = scrub_answer(call["function"]["arguments"], secrets)
    if outcome.error:
        outcome.error = scrub_text(outcome.error, secrets)


class ModelCaller:
    """Paces, calls, classifies and scrubs: the one way the bench calls a model."""

    def __init__(
        self,
        clients: SeatClients,
        pacer: Pacer,
        snapshot: Callable[[], Awaitable[Snapshot]],
        admin_token: str | None = None,
    ) -> None:
        self.clients = clients
        self.pacer = pacer
        self._snapshot = snapshot
        self._admin_token = admin_token

    def secrets(self, snapshot: Snapshot) -> list[str]:
        """Every secret the bench knows: the endpoints' provider keys (and those llm keeps for its
        plugins) and the admin token. (Gateway keys are stored only hashed; anything shaped like one
        is scrubbed by its form.)"""
        found = [e.ref.api_key for e in snapshot.endpoints.values() if e.ref.api_key]
        found += self.clients.secrets()
        if self._admin_token:
            found.append(self._admin_token)
        return found

    async def call(
        self,
        snapshot: Snapshot | None = None,
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
        hidden: Sequence[str] = (),
    ) -> SeatOutcome:
        """One model call as a recorded outcome, scrubbed (failures are statuses, never exceptions).

        `snapshot` is the config the call runs with (the current one when not given); `pace` a slot
        (or refusal) already taken for it, else it takes its own, waiting up to `seat_timeout` when
        `wait`; `hidden` more secrets to scrub (what a request's image URLs carried)."""
        snapshot = snapshot if snapshot is not None else await self._snapshot()
        outcome = await call_model(
            self.clients,
            self.pacer,
            snapshot,
            alias=alias,
            call=call,
            kind=kind,
            body=body,
            seat_timeout=seat_timeout,
            tokens=tokens,
            pace=pace,
            wait=wait,
            stands_in_for=stands_in_for,
        )
        scrub_outcome(outcome, [*self.secrets(snapshot), *hidden])
        return outcome

    async def ask(self, snapshot: Snapshot, alias: str, body: bytes, *, tokens: int, url: str | None = None) -> str:
        """One question a decision model must answer now: its answer as text, scrubbed (with `url`, the
        JSON a native decision API returned there). It never waits: with no slot free it raises
        NoSlot (not asked); a failed call raises its UpstreamFailure, its message scrubbed."""
        model = snapshot.models[alias]
        view = snapshot.endpoints[model.endpoint]
        if view.key_refused:
            raise UpstreamFailure(FailureKind.auth, view.key_refused)
        slot = await self.pacer.take(scopes_of(snapshot, alias), tokens)
        if isinstance(slot, Refusal):
            raise NoSlot(slot)
        secrets = self.secrets(snapshot)
        try:
            if url is not None:
                data = await self.clients.pool.request_json(view.ref, "POST", url, json=orjson.Fragment(body))
                return scrub_answer(orjson.dumps(data).decode(), secrets)
            result = await self.clients.chat(view, body, snapshot.gateway.decision_timeout)
        except UpstreamFailure as failure:
            failure.message = scrub_text(failure.message, secrets)
            raise
        await self.pacer.settle(slot, used_tokens(result.usage))
        await self.pacer.align(alias, result.headers, model.limits)
        return scrub_answer(result.answer, secrets)
