"""The gateway's work on one request: refuse early, run the panel, learn, record, reply; and verdicts."""

from __future__ import annotations

import asyncio
import random
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from benchwarmers.bench.ids import PanelIds
from benchwarmers.bench.learning import learn_from_seats
from benchwarmers.bench.panel import PreparedPanel, SeatOutcome, prepare_panel, run_seats
from benchwarmers.bench.reply import completion, render_markdown, seat_public, sum_usage, verdict_hint
from benchwarmers.errors import Forbidden, InvalidRequest, NotFound
from benchwarmers.redaction import redact_messages, scrub_text
from benchwarmers.store import calls

if TYPE_CHECKING:
    from benchwarmers.bench.core import Bench


@dataclass(frozen=True)
class Caller:
    """Who is asking: `local` on loopback without keys, else the gateway key's name and scope."""

    name: str = "local"
    collections: frozenset[str] | None = None  # None = every collection
    judges_own_only: bool = False


def redacted_request(body: dict[str, Any]) -> dict[str, Any]:
    """The request as it may be stored: images as placeholders, nothing else changed."""
    stored = {k: v for k, v in body.items() if k != "messages"}
    stored["messages"] = redact_messages(body.get("messages") or [])
    return stored


class Gateway:
    def __init__(self, bench: Bench) -> None:
        self.bench = bench
        self.ids = PanelIds()
        self.rng = random.Random()
        self._background: set[asyncio.Future[Any]] = set()
        self._inflight: dict[tuple[str, str], asyncio.Future[dict[str, Any]]] = {}

    def keep_until_done(self, task: asyncio.Future[Any]) -> None:
        """Hold a panel whose client left until it has recorded its seats (asyncio keeps weak refs)."""
        self._background.add(task)
        task.add_done_callback(self._background.discard)
        task.add_done_callback(lambda t: t.cancelled() or t.exception())

    def new_panel_id(self) -> str:
        return self.ids.new()

    async def prepare(self, body: dict[str, Any], body_bytes: bytes, caller: Caller, panel_id: str) -> PreparedPanel:
        snapshot = await self.bench.snapshot()
        history = await self.bench.fresh_history()
        prepared = prepare_panel(
            snapshot=snapshot,
            history=history,
            body=body,
            body_bytes=body_bytes,
            caller=caller.name,
            panel_id=panel_id,
            now=time.time(),
            rng=self.rng,
        )
        if caller.collections is not None and prepared.collection["name"] not in caller.collections:
            raise Forbidden(
                f"this gateway key may not call bench/{prepared.collection['name']}; it may call: "
                f"{', '.join('bench/' + c for c in sorted(caller.collections)) or 'nothing'}",
                param="model",
                code="collection_not_allowed",
            )
        return prepared

    async def replay(self, caller: Caller, body_hash: str, idempotency_key: str | None) -> dict[str, Any] | None:
        """The recorded reply when this request is a replay of one already answered (or running)."""
        inflight = self._inflight.get((caller.name, idempotency_key or body_hash))
        if inflight is not None:
            return await asyncio.shield(inflight)
        window = (await self.bench.snapshot()).gateway["replay_window"]
        async with self.bench.read() as conn:
            found = await calls.find_replay(
                conn,
                caller=caller.name,
                request_hash=body_hash,
                idempotency_key=idempotency_key,
                since=time.time() - window,
            )
        return found["response"] if found else None

    async def run(
        self,
        panel: PreparedPanel,
        idempotency_key: str | None = None,
        disconnected: asyncio.Event | None = None,
    ) -> dict[str, Any]:
        key = (panel.caller, idempotency_key or panel.request_hash)
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._inflight[key] = future
        try:
            reply = await self._run(panel, idempotency_key, disconnected)
            future.set_result(reply)
            return reply
        except BaseException as exc:
            future.set_exception(exc if isinstance(exc, Exception) else RuntimeError("panel cancelled"))
            future.exception()  # mark retrieved: a replay may never come
            raise
        finally:
            self._inflight.pop(key, None)

    async def _run(
        self, panel: PreparedPanel, idempotency_key: str | None, disconnected: asyncio.Event | None
    ) -> dict[str, Any]:
        snapshot = await self.bench.snapshot()
        started = time.perf_counter()
        outcomes = await run_seats(
            self.bench.upstream, snapshot, panel, float(snapshot.gateway["seat_timeout"]), disconnected
        )
        secrets = [e.ref.api_key for e in snapshot.endpoints.values() if e.ref.api_key]
        for outcome in outcomes:
            if outcome.error:
                outcome.error = scrub_text(outcome.error, secrets)
        reply = self.build_reply(panel, outcomes)
        await self.record(panel, outcomes, reply, idempotency_key, time.perf_counter() - started)
        return reply

    def build_reply(self, panel: PreparedPanel, outcomes: list[SeatOutcome], note: str | None = None) -> dict[str, Any]:
        seats = [seat_public(o) for o in outcomes]
        skipped = [{"seat": s.seat, "alias": s.alias, "why": s.why} for s in panel.plan.skipped]
        name = panel.collection["name"]
        bench: dict[str, Any] = {
            "panel": panel.panel_id,
            "collection": f"bench/{name}",
            "shape": panel.shape,
            "shape_by": panel.shape_by,
            "reply": panel.reply,
            "seats": seats,
            "skipped": skipped,
            "verdict": verdict_hint(self.bench.public_base_url(), seats[0]["call"] if seats else None),
        }
        if note:
            bench["note"] = note
        content = render_markdown(panel.panel_id, name, seats, skipped, note)
        usage = sum_usage([o.usage for o in outcomes])
        return completion(panel.panel_id, panel.model_name, panel.created, content, usage, bench)

    async def record(
        self,
        panel: PreparedPanel,
        outcomes: list[SeatOutcome],
        reply: dict[str, Any],
        idempotency_key: str | None,
        seconds: float,
    ) -> None:
        """Write the panel and every seat, and what the failures taught, before the reply leaves."""
        now = time.time()
        panel_row = {
            "id": panel.panel_id,
            "created_at": panel.created,
            "collection": panel.collection["name"],
            "reply": panel.reply,
            "shape": panel.shape,
            "shape_by": panel.shape_by,
            "caller": panel.caller,
            "request": redacted_request(panel.body),
            "request_hash": panel.request_hash,
            "idempotency_key": idempotency_key,
            "skipped": reply["bench"]["skipped"],
            "note": reply["bench"].get("note"),
            "seconds": round(seconds, 3),
            "response": reply,
        }
        seat_rows = [
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
            }
            for i, o in enumerate(outcomes)
        ]
        async with self.bench.write() as conn:
            await calls.insert_panel(conn, panel_row, seat_rows)
            await learn_from_seats(conn, await self.bench.snapshot(), outcomes, now)
        for o in outcomes:
            if o.seat in calls.SEATED_KINDS:
                self.bench.history.last_seated[(o.alias, panel.shape)] = now

    # -- verdicts ----------------------------------------------------------------------------

    async def verdict(self, data: Any, caller: Caller) -> dict[str, Any]:
        clean = parse_verdict(data)
        async with self.bench.write() as conn:
            seat = await calls.get_seat(conn, clean["call"])
            if seat is None:
                raise NotFound(
                    f"no call {clean['call']!r}: use a call id from a panel's bench.seats",
                    param="call",
                    code="call_not_found",
                )
            if caller.judges_own_only and seat["caller"] != caller.name:
                raise Forbidden("this gateway key may judge only the calls it made", param="call", code="not_your_call")
            current = await calls.current_verdict(conn, clean["call"])
            same = current is not None and all(current[k] == clean[k] for k in ("useful", "note", "real", "false"))
            if same:
                return {"call": clean["call"], "recorded": False, "replaced": False}
            await calls.insert_verdict(conn, {**clean, "caller": caller.name})
        key = (seat["alias"], seat["shape"])
        good, bad = self.bench.history.counts.get(key, (0, 0))
        if current is not None:
            good, bad = (good - 1, bad) if current["useful"] else (good, bad - 1)
        self.bench.history.counts[key] = (good + 1, bad) if clean["useful"] else (good, bad + 1)
        return {"call": clean["call"], "recorded": True, "replaced": current is not None}


def parse_verdict(data: Any) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise InvalidRequest('a verdict is a JSON object: {"call", "useful", "note", "real": [], "false": []}')
    call = data.get("call")
    if not isinstance(call, str) or not call:
        raise InvalidRequest("verdict needs call: the call id of the seat you judge", param="call")
    useful = data.get("useful")
    if not isinstance(useful, bool):
        raise InvalidRequest("verdict needs useful: true or false", param="useful")
    note = data.get("note") or ""
    if not isinstance(note, str):
        raise InvalidRequest("note must be a string", param="note")
    claims = {}
    for field in ("real", "false"):
        value = data.get(field) or []
        if not isinstance(value, list) or not all(isinstance(c, str) for c in value):
            raise InvalidRequest(f"{field} must be a list of claims (strings)", param=field)
        claims[field] = value
    unknown = set(data) - {"call", "useful", "note", "real", "false"}
    if unknown:
        raise InvalidRequest(f"unknown verdict field(s): {', '.join(sorted(unknown))}")
    return {"call": call, "useful": useful, "note": note, **claims}
