"""The gateway's work on one request: refuse early, run the panel, learn, record, reply; and verdicts."""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

import orjson

from benchwarmers.bench.bounds import MERGER
from benchwarmers.bench.budgets import panel_tokens
from benchwarmers.bench.caller import Caller
from benchwarmers.bench.core.outcomes import SeatOutcome
from benchwarmers.bench.evidence.posterior import from_history
from benchwarmers.bench.evidence.primary import Primary, primary_of
from benchwarmers.bench.panels.ids import PanelIds, seat_call
from benchwarmers.bench.panels.merge import merger_candidates, plan_merger
from benchwarmers.bench.panels.parse import PanelRequest, reply_mode, request_text
from benchwarmers.bench.panels.pick import Picked, pick_seat
from benchwarmers.bench.panels.prepare import (
    Draft,
    PreparedPanel,
    direct_collection,
    fixed_shape,
    read_request,
    refuse_nominees_beyond,
    resolve_collection,
    seat_panel,
)
from benchwarmers.bench.panels.prompt_ratios import learn_ratios, prompt_columns
from benchwarmers.bench.panels.record import Recorder
from benchwarmers.bench.panels.reply import (
    ChatCompletion,
    PublicMerger,
    ReplyBench,
    completion,
    cut_note,
    picked_message,
    render_markdown,
    render_merged,
    seat_public,
    sum_usage,
    truncated,
    verdict_hint,
)
from benchwarmers.bench.panels.reservations import Reservations, panel_bound
from benchwarmers.bench.panels.run import ClientGone, run_seats
from benchwarmers.bench.panels.shapes import ShapeDecider
from benchwarmers.bench.snapshot import Snapshot
from benchwarmers.errors import Forbidden, Unavailable, Unprocessable
from benchwarmers.nouns.seats import SeatStatus
from benchwarmers.redaction import scrub_text
from benchwarmers.store import calls
from benchwarmers.store.records import PanelRow, SeatRow, SkippedSeat

if TYPE_CHECKING:
    from benchwarmers.bench.state import BenchState


@dataclass
class Merged:
    """What merged mode produced: the merger's call (if one was made), the order it saw, a note."""

    outcome: SeatOutcome | None = None
    order: list[str] = field(default_factory=list)
    rule: str = ""
    note: str | None = None

    def public(self) -> PublicMerger | None:
        if self.outcome is None:
            return None
        return {**seat_public(self.outcome), "order": self.order, "chosen_as": self.rule}


INFLIGHT_POLL = 0.05  # seconds between looks at a panel another process is running
log = logging.getLogger("benchwarmers.panels")
RESERVE_TRIES = 5  # ids drawn before giving up (a second one is already a one-in-four-billion event)


def key_reused(idempotency_key: str | None, first_hash: str, body_hash: str, panel_id: str | None) -> None:
    """422 for an Idempotency-Key sent again with another body: as Stripe answers, the key names one
    request, so replaying the first panel would answer a question that was not asked."""
    if idempotency_key is None or first_hash == body_hash:
        return
    answered = f" (panel {panel_id})" if panel_id else " (its panel is still running)"
    raise Unprocessable(
        f"Idempotency-Key {idempotency_key!r} was already used with a different request body{answered}. "
        "Send a new key for a new request, or resend the first body unchanged to get its panel back.",
        code="idempotency_key_reused",
    )


class Panels:
    """Runs panels: refuse early, seat, run, merge, record, reply; and replays of recorded ones."""

    def __init__(self, state: BenchState, shapes: ShapeDecider) -> None:
        self.state = state
        self.ids = PanelIds()
        self.shapes = shapes
        self.recorder = Recorder(state)
        self.reservations = Reservations(state)
        self.rng = random.Random()
        self._background: set[asyncio.Future[Any]] = set()
        # (caller, Idempotency-Key or body hash) → (the body's hash, the reply it will have)
        self._inflight: dict[tuple[str, str], tuple[str, asyncio.Future[ChatCompletion]]] = {}

    def keep_until_done(self, task: asyncio.Future[Any]) -> None:
        """Hold a panel whose client left until it has recorded its seats (asyncio keeps weak refs)."""
        self._background.add(task)
        task.add_done_callback(self._background.discard)
        task.add_done_callback(lambda t: t.cancelled() or t.exception())

    def new_panel_id(self) -> str:
        return self.ids.new()

    async def client_gone(self, panel: PreparedPanel, replayable: bool) -> ClientGone:
        """What cancels a panel's seats when its client leaves: at once, or, for a request a retry may
        replay, once the replay window has passed (the retry attaches to the running panel and gets
        every seat's answer; docs/GATEWAY.md, "Replays")."""
        if not replayable:
            return ClientGone()
        snapshot = panel.snapshot or await self.state.snapshot()  # the config it was seated with
        return ClientGone(linger=snapshot.gateway.replay_window)

    async def prepare(
        self,
        body: dict[str, Any] | PanelRequest,
        body_hash: str,
        caller: Caller,
        panel_id: str,
        direct: str | None = None,
        without: Sequence[str] = (),
        admit: Callable[[], Awaitable[None]] | None = None,
    ) -> PreparedPanel:
        """Everything that can refuse a request happens here, before any seat is called.

        `direct` names one model to ask alone instead of the body's collection (the suite's `--model`);
        `without` names members of the body's collection to leave out (those the suite skips).
        `admit` runs once the request is one the caller may make, before any model is called: where a
        gateway key's requests a minute count it, so a refused request is not counted."""
        request = PanelRequest.of(body)  # read once, by every step below
        snapshot = await self.state.snapshot()
        collection = direct_collection(direct, snapshot) if direct else None
        if collection is None and without:
            named = resolve_collection(snapshot, request.body.get("model"))[0]
            collection = {**named, "members": [m for m in named["members"] if m not in without]}
        refuse_nominees_beyond(caller.collections, snapshot, request)
        draft = read_request(snapshot, request, collection, self.state.ratios)
        await self.state.pacer.ensure_shared()
        if caller.collections is not None and draft.collection["name"] not in caller.collections:
            raise Forbidden(
                f"this gateway key may not call bench/{draft.collection['name']}; it may call: "
                f"{', '.join('bench/' + c for c in sorted(caller.collections)) or 'nothing'}",
                param="model",
                code="collection_not_allowed",
            )
        # Daily budgets refuse before anything is counted or called; a refused panel spends nothing.
        charged = await self.state.budgets.admit(draft.collection, caller)
        try:
            if admit is not None:
                await admit()
            # From here on models may be called (the decision model, then the seats): the panel's id is
            # reserved first, so whatever is called is recorded under an id no other process holds.
            panel_id = await self._reserve(panel_id, draft, body_hash, caller)
        except BaseException:
            self.state.budgets.released(charged)
            raise
        self.state.budgets.reserved(charged)
        try:
            decided = fixed_shape(draft)
            decision = None
            if decided is None:
                decision = await self.shapes.decide(snapshot, draft, panel_id)
                decided = decision.shape, decision.shape_by
            prepared = seat_panel(
                draft,
                shape=decided[0],
                shape_by=decided[1],
                snapshot=snapshot,
                history=await self.state.fresh_history(),
                body_hash=body_hash,
                caller=caller.name,
                panel_id=panel_id,
                now=time.time(),
                rng=self.rng,
            )
        except BaseException:
            await self.reservations.drop(panel_id)
            raise
        prepared.decisions = decision.outcomes if decision is not None else ()
        return prepared

    async def _reserve(self, panel_id: str, draft: Draft, body_hash: str, caller: Caller) -> str:
        """Reserve `panel_id`, or a fresh id when another process holds it; the id reserved."""
        for _ in range(RESERVE_TRIES):
            row = {
                "id": panel_id,
                "created_at": time.time(),
                "collection": draft.collection["name"],
                "reply": reply_mode(draft.options, draft.name, draft.collection.get("reply") or "all", draft.body),
                "shape": "",
                "shape_by": "",
                "caller": caller.name,
                "request": {},
                "request_hash": body_hash,
                "skipped": [],
            }
            try:
                await self.recorder.reserve(row)
            except calls.PanelIdTaken:
                panel_id = self.new_panel_id()
            else:
                return panel_id
        raise Unavailable("could not reserve a panel id; try again", code="panel_id_taken")

    async def replay(self, caller: Caller, body_hash: str, idempotency_key: str | None) -> ChatCompletion | None:
        """The recorded reply when this request is a replay of one already answered (or running);
        None when it runs afresh: nothing was recorded, or the first attempt failed unrecorded."""
        inflight = self._inflight.get((caller.name, idempotency_key or body_hash))
        if inflight is not None:
            key_reused(idempotency_key, inflight[0], body_hash, None)
            try:
                return await asyncio.shield(inflight[1])
            except Exception:
                return None  # the first attempt failed: a retry is a new attempt, not its failure again
        snapshot = await self.state.snapshot()
        now = time.time()
        since = now - snapshot.gateway.replay_window
        longest = panel_bound(snapshot.gateway)
        async with self.state.read() as conn:
            found = await calls.find_replay(
                conn, caller=caller.name, request_hash=body_hash, idempotency_key=idempotency_key, since=since
            )
            running = None
            if found is None:
                # Another worker or host may be running it (an SDK retry lands where the balancer sends it);
                # a reservation older than the longest panel is one whose process died with it.
                running = await calls.find_inflight(
                    conn, caller=caller.name, request_hash=body_hash, since=max(since, now - longest)
                )
        if found is not None:
            key_reused(idempotency_key, found["request_hash"], body_hash, found["panel"])
            return cast(ChatCompletion, found["response"])
        if running is None:
            return None
        return await self._recorded(running[0], running[1] + longest)

    async def _recorded(self, panel_id: str, deadline: float) -> ChatCompletion | None:
        """The reply of a panel another process is running, once it is recorded. None (this request
        runs afresh) when that run failed: its reservation was dropped, or is one this process could
        not drop (dropped now), or is still there at `deadline`, the panel's bound from when it was
        reserved (its process died with it, or could not drop it; it then ages out of every look)."""
        while time.time() < deadline:
            if self.reservations.orphaned(panel_id):
                await self.reservations.reclaim(panel_id)
                return None
            async with self.state.read() as conn:
                exists, response = await calls.panel_outcome(conn, panel_id)
            if not exists:
                return None
            if response is not None:
                return cast(ChatCompletion, response)
            await asyncio.sleep(INFLIGHT_POLL)
        log.warning("panel %s was never recorded within its bound: a retry of its request runs afresh", panel_id)
        return None

    async def run(
        self,
        panel: PreparedPanel,
        idempotency_key: str | None = None,
        disconnected: ClientGone | None = None,
    ) -> ChatCompletion:
        key = (panel.caller, idempotency_key or panel.request_hash)
        future: asyncio.Future[ChatCompletion] = asyncio.get_running_loop().create_future()
        # The first of two identical requests in flight is the one a replay waits for.
        self._inflight.setdefault(key, (panel.request_hash, future))
        try:
            with self.state.tracing.panel(panel):
                reply = await self._run(panel, idempotency_key, disconnected)
            future.set_result(reply)
            return reply
        except BaseException as exc:
            future.set_exception(exc if isinstance(exc, Exception) else RuntimeError("panel cancelled"))
            future.exception()  # mark retrieved: a replay may never come
            if isinstance(exc, Exception):
                await self.reservations.drop(panel.panel_id)  # a retry, on any worker, runs afresh
            raise
        finally:
            if disconnected is not None:
                disconnected.done()
            held = self._inflight.get(key)
            if held is not None and held[1] is future:
                del self._inflight[key]

    async def _run(
        self, panel: PreparedPanel, idempotency_key: str | None, disconnected: ClientGone | None
    ) -> ChatCompletion:
        # The config the panel was seated with (a look for a newer one costs a stat call and more).
        snapshot = panel.snapshot or await self.state.snapshot()
        started = time.perf_counter()
        timeout = snapshot.gateway.seat_timeout
        self.state.clients.configure(snapshot.gateway.endpoint_concurrency)
        # Each outcome comes back scrubbed (bench/calls/): the merger must not be sent one provider's
        # key echoed by another.
        outcomes = await run_seats(self.state.calls, snapshot, panel, timeout, disconnected)
        secrets = self.known_secrets(snapshot, panel)
        panel.shape_by = scrub_text(panel.shape_by, secrets)
        merged: Merged | None = None
        if panel.reply == "merged" and not (disconnected and disconnected.is_set()):
            merged = await self._merge(panel, outcomes, snapshot, timeout)
        picked: Picked | None = None
        if panel.reply == "pick":
            seated = [o.alias for o in outcomes if o.seat in calls.SEATED_KINDS]
            order = merger_candidates(
                panel.collection,
                panel.shape,
                self.counts(panel, seated),
                await self.primary(panel.shape),
                seated=seated,
            )
            picked = pick_seat(order, outcomes, panel.checks)
        extra = [*([merged.outcome] if merged and merged.outcome else []), *panel.decisions]
        reply = self.build_reply(panel, outcomes, merged, picked)
        await self.record(panel, [*outcomes, *extra], reply, idempotency_key, time.perf_counter() - started)
        return reply

    def known_secrets(self, snapshot: Snapshot, panel: PreparedPanel) -> list[str]:
        """Every secret the bench knows while running this panel: the endpoints' provider keys (and
        those llm keeps for its plugins), the admin token, and what the request's image URLs carried.
        (Gateway keys are stored only hashed; anything shaped like one is scrubbed by its form.)"""
        return [*self.state.calls.secrets(snapshot), *panel.hidden]

    async def _merge(
        self,
        panel: PreparedPanel,
        outcomes: list[SeatOutcome],
        snapshot: Snapshot,
        seat_timeout: float,
    ) -> Merged:
        # The merger is told which answers the cap cut, as the reader is.
        answers = [
            (o.alias, o.answer if o.truncated_at is None else f"{o.answer}\n\n[{cut_note(o.truncated_at)}]")
            for o in outcomes
            if o.status == SeatStatus.ok
        ]
        if not answers:
            return Merged(note="no seat answered, so there was nothing to merge")
        seated = [o.alias for o in outcomes if o.status == SeatStatus.ok and o.seat in calls.SEATED_KINDS]
        candidates = merger_candidates(
            panel.collection,
            panel.shape,
            self.counts(panel, seated),
            await self.primary(panel.shape),
            snapshot.roles.get(MERGER),
            seated=seated,
        )
        request = request_text(panel.stored["messages"])
        plan = plan_merger(candidates, snapshot, request, answers, self.rng, time.time())
        if plan.alias is None:
            return Merged(
                note=f"no merger has a context window for the request plus every answer "
                f"(about {plan.needed_tokens:,} tokens), so here is every answer"
            )
        body = orjson.dumps({"model": snapshot.models[plan.alias].model_id, "stream": False, "messages": plan.messages})
        outcome = await self.state.calls.call(
            snapshot,
            alias=plan.alias,
            call=seat_call(panel.panel_id, "merger"),
            kind="merger",
            body=body,
            seat_timeout=seat_timeout,
            tokens=plan.needed_tokens,
            hidden=panel.hidden,
        )
        merged = Merged(outcome=outcome, order=plan.order, rule=plan.rule)
        if outcome.status in calls.NOT_CALLED:
            merged.note = f"the merger {plan.alias} was not called ({outcome.error}), so here is every answer"
        elif outcome.status == SeatStatus.error:
            merged.note = f"the merger {plan.alias} failed ({outcome.error}), so here is every answer"
        elif outcome.status == SeatStatus.empty:
            merged.note = f"the merger {plan.alias} gave an empty answer, so here is every answer"
        return merged

    async def primary(self, shape: str) -> Primary | None:
        """The router's best model for a shape (pinned role, else evidence); None when unknown."""
        return await primary_of(self.state, shape)

    def counts(self, panel: PreparedPanel, seated: list[str]) -> dict[str, tuple[int, int]]:
        """alias → (useful, verdicts) on the panel's shape for its members and `seated`."""
        return from_history(self.state.history.current, panel.shape, [*panel.collection["members"], *seated])

    def build_reply(
        self,
        panel: PreparedPanel,
        outcomes: list[SeatOutcome],
        merged: Merged | None = None,
        picked: Picked | None = None,
    ) -> ChatCompletion:
        seats = [seat_public(o) for o in outcomes]
        skipped: list[SkippedSeat] = [{"seat": s.seat, "alias": s.alias, "why": s.why} for s in panel.plan.skipped]
        name = panel.collection["name"]
        bench: ReplyBench = {
            "panel": panel.panel_id,
            "collection": f"bench/{name}",
            "shape": panel.shape,
            "shape_by": panel.shape_by,
            "reply": panel.reply,
            "seats": seats,
            "skipped": skipped,
            "verdict": verdict_hint(
                self.state.public_base_url(), next((s["call"] for s in seats if s["status"] != calls.RETIRED), None)
            ),
            "usage": {},
        }
        called = [o for o in outcomes if o.status not in calls.NOT_CALLED]
        note = merged.note if merged else picked.note if picked else None
        merger = merged.public() if merged is not None else None
        if merged is not None:
            bench["merger"] = merger
            if merged.outcome is not None:
                called.append(merged.outcome)
        bench["usage"] = {o.call: o.usage for o in called}
        usage = sum_usage([o.usage for o in called])
        if note:
            bench["note"] = note
        if picked is not None:
            chosen = picked.outcome
            bench["picked"] = (
                {"call": chosen.call, "alias": chosen.alias, "seat": chosen.seat, "why": picked.why} if chosen else None
            )
            if chosen is not None:
                message, finish = picked_message(chosen)
                return completion(panel.panel_id, panel.model_name, panel.created, message, usage, bench, finish)
        if merger is not None and merger["status"] == "ok":
            content = render_merged(merger["answer"], merger, seats)
            # The merged answer is the merger's: cut by the answer cap, it ends as a model's does.
            finish = "length" if merger["truncated_at"] is not None else "stop"
            return completion(panel.panel_id, panel.model_name, panel.created, content, usage, bench, finish)
        content = render_markdown(panel.panel_id, name, seats, skipped, note)
        return completion(panel.panel_id, panel.model_name, panel.created, content, usage, bench)

    async def record(
        self,
        panel: PreparedPanel,
        outcomes: list[SeatOutcome],
        reply: ChatCompletion,
        idempotency_key: str | None,
        seconds: float,
    ) -> None:
        """Write the panel and every seat, and what the failures taught, before the reply leaves."""
        now = time.time()
        panel_row: PanelRow = {
            "id": panel.panel_id,
            "created_at": panel.created,
            "collection": panel.collection["name"],
            "reply": panel.reply,
            "shape": panel.shape,
            "shape_by": panel.shape_by,
            "caller": panel.caller,
            "request": panel.stored,
            "request_hash": panel.request_hash,
            "idempotency_key": idempotency_key,
            "skipped": reply["bench"]["skipped"],
            "note": reply["bench"].get("note"),
            "seconds": round(seconds, 3),
            "response": reply,
        }
        panel_row["prompt_chars"], panel_row["prompt_kind"] = prompt_columns(panel)
        seat_rows: list[SeatRow] = [
            {
                "call": o.call,
                "panel_id": panel.panel_id,
                "position": i,
                "seat": o.seat,
                "alias": o.alias,
                "endpoint": o.endpoint,
                "shape": panel.shape,
                "status": o.status,
                "seconds": o.seconds,
                "answer": o.answer,
                "error": o.error,
                "error_kind": o.failure.kind.value if o.failure else None,
                "usage": o.usage,
                "caller": panel.caller,
                "created_at": now,
                "frees_at": o.frees_at,
                "tool_calls": o.tool_calls or None,
                "truncated_at": o.truncated_at,
                "truncated": truncated(o),
                "stands_in_for": o.stands_in_for,
            }
            for i, o in enumerate(outcomes)
        ]
        try:
            await self.recorder.write(panel_row, seat_rows, outcomes, now, panel.estimate)
        except BaseException:
            self.state.metrics.unrecorded(panel.collection["name"])
            raise
        self.state.metrics.panel(panel.collection["name"], outcomes)
        self.state.budgets.spent_tokens(panel.collection["name"], panel.caller, panel_tokens(outcomes))
        learn_ratios(self.state.ratios, panel, outcomes)
        if self.state.tracing.tracer() is not None:  # else no snapshot is needed (a stat call)
            self.state.tracing.seats(await self.state.snapshot(), outcomes)
        for o in outcomes:
            if o.seat in calls.SEATED_KINDS and o.status not in calls.NOT_CALLED:
                self.state.history.seated(o.alias, panel.shape, now)
