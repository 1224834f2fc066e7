"""The shape of a request, when nothing fixed it: asked of a decision model, or `general`.

A decision model is asked only when explorer seats are to be filled (the shape then decides who
explores). Its answer counts from confidence 0.6; a timeout or any failure means `general`, fast.
"""

from __future__ import annotations

import asyncio
import re
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import orjson

from benchwarmers.bench.admin.collection_rules import suggest
from benchwarmers.bench.panels.parse import request_text
from benchwarmers.bench.panels.prepare import Draft, SeatOutcome, explorers_to_fill
from benchwarmers.errors import Conflict, InvalidRequest, NotFound
from benchwarmers.store import decisions as decision_rows
from benchwarmers.store import gateway_settings as setting_rows
from benchwarmers.store.changes import record_change
from benchwarmers.upstream.failures import UpstreamFailure

if TYPE_CHECKING:
    from benchwarmers.bench.core import Bench
    from benchwarmers.bench.snapshot import ModelView, Snapshot

MIN_CONFIDENCE = 0.6
NAME = re.compile(r"^[a-z][a-z0-9-]{0,31}$")
KINDS = ("chat", "choice")
# Native decision APIs speak System One; providers mount it at different paths (Inception and
# OpenRouter: `decisions`; Ollama: `systemone`). Onboarding records the one that answered.
CHOICE_PATHS = ("decisions", "systemone")
STATE_LIMIT = 6_000  # characters of the request a decision model reads: enough to tell the task


@dataclass(frozen=True)
class Decision:
    shape: str
    shape_by: str
    outcome: SeatOutcome | None = None


def choice_body(model_id: str, state: str, shapes: dict[str, str]) -> dict[str, Any]:
    """A System One request: one `choice` question whose options carry their descriptions
    (bare option names mislead decision models)."""
    return {
        "model": model_id,
        "state": state,
        "questions": {
            "shape": {
                "type": "choice",
                "instructions": "What kind of task is this request?",
                "criteria": dict(shapes),
            }
        },
    }


def chat_body(model_id: str, state: str, shapes: dict[str, str]) -> dict[str, Any]:
    options = "\n".join(f"- {name}: {description}" for name, description in shapes.items())
    return {
        "model": model_id,
        "stream": False,
        "temperature": 0,
        "max_tokens": 100,
        "messages": [
            {
                "role": "system",
                "content": "You label requests. Answer with one JSON object and nothing else: "
                '{"shape": "<one option name>", "confidence": <0 to 1>}.',
            },
            {"role": "user", "content": f"Options:\n{options}\n\nRequest:\n{state}\n\nWhich option fits?"},
        ],
    }


_JSON_OBJECT = re.compile(r"\{[^{}]*\}", re.DOTALL)


def parse_chat_answer(text: str, shapes: dict[str, str]) -> tuple[str, float]:
    """The label from a chat answer (JSON, possibly fenced or wrapped in prose)."""
    for candidate in _JSON_OBJECT.findall(text or ""):
        try:
            data = orjson.loads(candidate)
        except orjson.JSONDecodeError:
            continue
        return _checked(data.get("shape"), data.get("confidence"), shapes)
    raise ValueError("no JSON object with shape and confidence in the answer")


def parse_choice_answer(data: Any, shapes: dict[str, str]) -> tuple[str, float]:
    answer = (data or {}).get("answers", {}).get("shape") if isinstance(data, dict) else None
    if not isinstance(answer, dict):
        raise ValueError("the decision API gave no answer to the shape question")
    return _checked(answer.get("choice"), answer.get("confidence"), shapes)


def _checked(shape: Any, confidence: Any, shapes: dict[str, str]) -> tuple[str, float]:
    if shape not in shapes:
        raise ValueError(f"the decision model chose {shape!r}, which is not a shape")
    if isinstance(confidence, bool) or not isinstance(confidence, int | float) or not 0 <= confidence <= 1:
        raise ValueError("the decision model gave no confidence between 0 and 1")
    return str(shape), float(confidence)


class Shapes:
    def __init__(self, bench: Bench) -> None:
        self.bench = bench

    def _decision_model(self, snapshot: Snapshot) -> tuple[dict[str, Any], ModelView] | None:
        now = time.time()
        for row in snapshot.decision_models:
            model = snapshot.models.get(row["alias"])
            if model is not None and not model.gone and not model.cooling(now):
                return row, model
        return None

    async def decide(self, snapshot: Snapshot, draft: Draft, panel_id: str) -> Decision:
        found = self._decision_model(snapshot)
        if found is None:
            return Decision("general", "default")
        if explorers_to_fill(draft, snapshot) == 0:
            return Decision("general", "default (no explorer seats to fill)")
        row, model = found
        state = request_text(draft.body.get("messages") or [])[:STATE_LIMIT]
        timeout = float(snapshot.gateway["decision_timeout"])
        outcome = SeatOutcome(
            call=f"{panel_id}.decision",
            seat="decision",
            alias=model.alias,
            endpoint=model.endpoint,
            status="error",
            seconds=0.0,
        )
        started = time.perf_counter()
        try:
            async with asyncio.timeout(timeout):
                shape, confidence, raw = await self._ask(snapshot, row, model, state)
        except TimeoutError:
            outcome.error = f"timeout after {timeout:g}s"
        except (UpstreamFailure, ValueError) as exc:
            outcome.error = str(exc)
        else:
            outcome.status, outcome.answer = "ok", raw
            outcome.seconds = round(time.perf_counter() - started, 3)
            if confidence >= MIN_CONFIDENCE:
                return Decision(shape, f"decision model {model.alias} at {confidence:.2f}", outcome)
            return Decision(
                "general", f"default (decision model {model.alias} said {shape} at {confidence:.2f})", outcome
            )
        outcome.seconds = round(time.perf_counter() - started, 3)
        return Decision("general", f"default (decision model {model.alias} failed: {outcome.error})", outcome)

    async def _ask(
        self, snapshot: Snapshot, row: dict[str, Any], model: ModelView, state: str
    ) -> tuple[str, float, str]:
        endpoint = snapshot.endpoints[model.endpoint].ref
        pool = self.bench.upstream
        if row["kind"] == "choice":
            url = f"{endpoint.base_url}/{row['path']}"
            data = await pool.request_json(
                endpoint, "POST", url, json=choice_body(model.model_id, state, snapshot.shapes)
            )
            shape, confidence = parse_choice_answer(data, snapshot.shapes)
            return shape, confidence, orjson.dumps(data).decode()
        body = orjson.dumps(chat_body(model.model_id, state, snapshot.shapes))
        result = await pool.chat(endpoint, body, float(snapshot.gateway["decision_timeout"]))
        shape, confidence = parse_chat_answer(result.answer, snapshot.shapes)
        return shape, confidence, result.answer

    async def onboard(self, alias: str, kind: str) -> str | None:
        """Check the model answers as a decision model; for `choice`, find the path that answers."""
        if kind not in KINDS:
            raise InvalidRequest(f"kind must be one of {', '.join(KINDS)}, not {kind!r}", param="kind")
        snapshot = await self.bench.snapshot()
        model = snapshot.models[alias]
        row = {"alias": alias, "kind": kind, "path": None}
        state = "Review this function for bugs: def mean(xs): return sum(xs) / len(xs)"
        if kind == "chat":
            await self._ask(snapshot, row, model, state)
            return None
        failures = []
        for path in CHOICE_PATHS:
            try:
                await self._ask(snapshot, {**row, "path": path}, model, state)
            except (UpstreamFailure, ValueError) as exc:
                failures.append(f"{path}: {exc}")
            else:
                return path
        raise InvalidRequest(
            f"{alias} answered no decision API ({'; '.join(failures)}); try --kind chat", param="alias"
        )

    # -- configuration ------------------------------------------------------------------------

    async def set_shape(self, name: str, description: str, *, actor: str | None = None) -> dict[str, str]:
        if not NAME.match(name):
            raise InvalidRequest(f"shape name {name!r} must be one lower-case word", param="name")
        if not description.strip():
            raise InvalidRequest("a shape needs a description: decision models choose by it", param="description")
        async with self.bench.write() as conn:
            before = await setting_rows.shapes(conn)
            after = {**before, name: description.strip()}
            await setting_rows.put_setting(conn, "shapes", after)
            await record_change(
                conn,
                actor=actor or self.bench.actor,
                subject="shape",
                name=name,
                action="update" if name in before else "create",
                before=before.get(name),
                after=after[name],
            )
        return after

    async def remove_shape(self, name: str, *, actor: str | None = None) -> dict[str, str]:
        async with self.bench.write() as conn:
            before = await setting_rows.shapes(conn)
            if name not in before:
                raise NotFound(f"no shape {name!r}; shapes are: {', '.join(before)}", param="name")
            if name in ("general", "vision"):
                raise InvalidRequest(f"{name!r} is built in: the gateway falls back to it", param="name")
            after = {k: v for k, v in before.items() if k != name}
            await setting_rows.put_setting(conn, "shapes", after)
            await record_change(
                conn, actor=actor or self.bench.actor, subject="shape", name=name, action="delete", before=before[name]
            )
        return after

    async def add_decision_model(self, alias: str, kind: str = "chat", *, actor: str | None = None) -> dict[str, Any]:
        snapshot = await self.bench.snapshot()
        if alias not in snapshot.models:
            raise NotFound(f"no model {alias!r} on the roster.{suggest(alias, snapshot.models)}", param="alias")
        if any(row["alias"] == alias for row in snapshot.decision_models):
            raise Conflict(f"{alias} is a decision model already", param="alias")
        path = await self.onboard(alias, kind)
        row = {"alias": alias, "kind": kind, "path": path}
        async with self.bench.write() as conn:
            await decision_rows.add_decision_model(conn, alias, kind, path)
            await record_change(
                conn, actor=actor or self.bench.actor, subject="decision_model", name=alias, action="create", after=row
            )
        return row

    async def remove_decision_model(self, alias: str, *, actor: str | None = None) -> None:
        async with self.bench.write() as conn:
            if not await decision_rows.remove_decision_model(conn, alias):
                raise NotFound(f"{alias!r} is not a decision model", param="alias")
            await record_change(
                conn, actor=actor or self.bench.actor, subject="decision_model", name=alias, action="delete"
            )
