"""The shape of a request, when nothing fixed it: asked of a decision model, or `general`.

A decision model is asked only when explorer seats are to be filled (the shape then decides who
explores): the one pinned as the `decision` role first, then the others in their order. One that
fails (or has no slot) hands over to the next; all of them share one `decision_timeout`, so a
decision never holds a panel longer than that. An answer counts from confidence 0.6 (a lower one is
an answer too: `general`, no next model); when every one failed or the time ran out, `general`.
"""

from __future__ import annotations

import asyncio
import re
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import orjson

from benchwarmers.bench.clients import SeatClients
from benchwarmers.bench.core.outcomes import SeatOutcome
from benchwarmers.bench.evidence.roles import DECISION
from benchwarmers.bench.pacing import Pacer, Refusal, scopes_of
from benchwarmers.bench.panels.parse import estimate_tokens, request_text
from benchwarmers.bench.panels.prepare import Draft, explorers_to_fill
from benchwarmers.bench.panels.run import not_called, used_tokens
from benchwarmers.upstream.failures import FailureKind, UpstreamFailure
from benchwarmers.upstream.kinds import ANTHROPIC_KIND
from benchwarmers.upstream.listings import root_of
from benchwarmers.upstream.llm_client import LLM_KIND

if TYPE_CHECKING:
    from benchwarmers.bench.snapshot import ModelView, Snapshot
    from benchwarmers.bench.state import BenchState

MIN_CONFIDENCE = 0.6
KINDS = ("chat", "choice")
# Native decision APIs speak System One; providers mount it at different paths (Inception and
# OpenRouter: `decisions`; Ollama: `systemone`). Onboarding records the one that answered.
CHOICE_PATHS = ("decisions", "systemone")
# Open WebUI proxies any path under `/openai/` to its first OpenAI connection (`{url}/{path}`).
OPENWEBUI_PASSTHROUGH = "{root}/openai/{path}"
STATE_LIMIT = 6_000  # characters of the request a decision model reads: enough to tell the task
DECISION_TOKENS = 100  # what a decision model may write (chat_body's max_tokens)


class NoSlot(Exception):
    """The decision model has no free slot under its rate limits: it was not asked."""

    def __init__(self, refusal: Refusal) -> None:
        super().__init__(refusal.why)
        self.refusal = refusal


@dataclass(frozen=True)
class Decision:
    shape: str
    shape_by: str
    outcomes: tuple[SeatOutcome, ...] = ()  # every decision model asked (or paced), in turn: the last decided


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
        "max_tokens": DECISION_TOKENS,
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


class ShapeDecider:
    """Decides a request's shape by asking the first decision model that is up."""

    def __init__(self, state: BenchState) -> None:
        self.state = state

    def _decision_models(self, snapshot: Snapshot) -> list[tuple[dict[str, Any], ModelView]]:
        """The decision models that are up: the pinned one (the `decision` role) first, then in order."""
        now = time.time()
        pinned = snapshot.pinned(DECISION)
        found = []
        for row in sorted(snapshot.decision_models, key=lambda row: row["alias"] != pinned):
            model = snapshot.models.get(row["alias"])
            if model is not None and not model.gone and not model.cooling(now):
                found.append((row, model))
        return found

    async def decide(self, snapshot: Snapshot, draft: Draft, panel_id: str) -> Decision:
        found = self._decision_models(snapshot)
        if not found:
            return Decision("general", "default")
        if explorers_to_fill(draft, snapshot) == 0:
            return Decision("general", "default (no explorer seats to fill)")
        summary = request_text(draft.body.get("messages") or [])[:STATE_LIMIT]
        timeout = float(snapshot.gateway["decision_timeout"])
        deadline = time.monotonic() + timeout
        outcomes: list[SeatOutcome] = []
        failed: list[str] = []
        for row, model in found:
            if time.monotonic() >= deadline:
                failed.append(f"{model.alias} was not asked: the {timeout:g}s were spent")
                break
            call = f"{panel_id}.decision{len(outcomes) + 1 if outcomes else ''}"
            outcome, decided = await self._ask(snapshot, row, model, summary, call, deadline, timeout)
            outcomes.append(outcome)
            if decided is not None:
                return Decision(*decided, tuple(outcomes))
            failed.append(f"{model.alias} {outcome.error}" if outcome.status == "paced" else
                          f"{model.alias} failed: {outcome.error}")  # fmt: skip
        if len(outcomes) == 1 and len(failed) == 1:  # one decision model: said as before
            alias = found[0][1].alias
            if outcomes[0].status == "paced":
                return Decision("general", f"default (decision model {alias} was paced)", tuple(outcomes))
            return Decision("general", f"default (decision model {alias} failed: {outcomes[0].error})", tuple(outcomes))
        return Decision("general", f"default (decision models: {'; '.join(failed)})", tuple(outcomes))

    async def _ask(
        self,
        snapshot: Snapshot,
        row: dict[str, Any],
        model: ModelView,
        summary: str,
        call: str,
        deadline: float,
        budget: float,
    ) -> tuple[SeatOutcome, tuple[str, str] | None]:
        """One decision model asked within what is left of the budget: its outcome, and (shape, shape_by)
        when it answered (None when it failed, timed out or had no slot: the next one is asked)."""
        outcome = SeatOutcome(call=call, seat="decision", alias=model.alias, endpoint=model.endpoint, status="error",
                              seconds=0.0)  # fmt: skip
        started = time.perf_counter()
        try:
            async with asyncio.timeout(max(0.0, deadline - time.monotonic())):
                shape, confidence, raw = await ask_decision_model(
                    self.state.clients, self.state.pacer, snapshot, row, model, summary
                )
        except TimeoutError:
            outcome.error = f"timeout after {budget:g}s"  # the budget all decision models share
        except NoSlot as exc:
            # A decision is worth no wait: the next decision model, at once.
            not_called(outcome, "paced", exc.refusal.frees_at, f"paced: {exc.refusal.why}")
            return outcome, None
        except (UpstreamFailure, ValueError) as exc:
            outcome.error = str(exc)
        else:
            outcome.status, outcome.answer = "ok", raw
            outcome.seconds = round(time.perf_counter() - started, 3)
            if confidence >= MIN_CONFIDENCE:
                return outcome, (shape, f"decision model {model.alias} at {confidence:.2f}")
            return outcome, ("general", f"default (decision model {model.alias} said {shape} at {confidence:.2f})")
        outcome.seconds = round(time.perf_counter() - started, 3)
        return outcome, None


def choice_url(kind: str, base_url: str, path: str) -> str:
    """Where an endpoint's native decision API answers on `path`: `{base}/{path}`; through Open WebUI,
    its passthrough (`OPENWEBUI_PASSTHROUGH`), since its own base (`.../api`) serves no decision API."""
    if kind in (LLM_KIND, ANTHROPIC_KIND):
        raise UpstreamFailure(
            FailureKind.bad_request, f"an {kind} endpoint serves no decision API; add its model with --kind chat"
        )
    if kind == "openwebui":
        return OPENWEBUI_PASSTHROUGH.format(root=root_of(base_url).removesuffix("/api"), path=path)
    return f"{base_url.rstrip('/')}/{path}"


async def ask_decision_model(
    clients: SeatClients, pacer: Pacer, snapshot: Snapshot, row: dict[str, Any], model: ModelView, summary: str
) -> tuple[str, float, str]:
    """One question to a decision model: (shape, confidence, raw answer). Raises UpstreamFailure
    when the call fails, ValueError when the answer is not a shape with a confidence, and NoSlot
    when its rate limits have no slot for it now (it is not asked)."""
    view = snapshot.endpoints[model.endpoint]
    if view.key_refused:
        raise UpstreamFailure(FailureKind.auth, view.key_refused)
    if row["kind"] == "choice":
        payload = choice_body(model.model_id, summary, snapshot.shapes)
    else:
        payload = chat_body(model.model_id, summary, snapshot.shapes)
    body = orjson.dumps(payload)
    slot = await pacer.take(scopes_of(snapshot, model.alias), estimate_tokens(len(body), 0) + DECISION_TOKENS)
    if isinstance(slot, Refusal):
        raise NoSlot(slot)
    if row["kind"] == "choice":
        url = choice_url(view.kind, view.base_url, row["path"])
        data = await clients.pool.request_json(view.ref, "POST", url, json=payload)
        shape, confidence = parse_choice_answer(data, snapshot.shapes)
        return shape, confidence, orjson.dumps(data).decode()
    result = await clients.chat(view, body, float(snapshot.gateway["decision_timeout"]))
    await pacer.settle(slot, used_tokens(result.usage))
    await pacer.align(model.alias, result.headers, model.limits)
    shape, confidence = parse_chat_answer(result.answer, snapshot.shapes)
    return shape, confidence, result.answer
