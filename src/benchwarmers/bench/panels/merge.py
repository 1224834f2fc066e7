"""Merged replies: one extra call that reconciles the seats' answers and keeps who said what.

Choosing the merger and writing its prompt are pure; the gateway makes the call. The merger sees
the answers in shuffled order (so position does not pass for rank) and is told not to settle a
dispute by majority: models fail together, so agreement is not evidence.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from benchwarmers.bench.evidence.posterior import Counts, best_among, tie_note
from benchwarmers.bench.evidence.primary import Primary
from benchwarmers.bench.panels.parse import Content, estimate_tokens
from benchwarmers.bench.snapshot import EVERY_SHAPE, Snapshot
from benchwarmers.store.records import CollectionFields

MERGER_INSTRUCTIONS = (
    "Several models answered the same request. Write one reply that reconciles their answers:\n"
    "1. Say where they agreed.\n"
    "2. Say where they disagreed, and who said what (name each model by its label).\n"
    "3. Do not settle a disagreement by majority or by your own preference: report both sides and "
    "what would decide between them. Agreement between models is not proof.\n"
    "Keep every concrete claim attributed to the model that made it. Add no claims of your own."
)
ANSWER_ALLOWANCE = 1_000  # tokens kept free for the merger's own reply


@dataclass
class MergerPlan:
    alias: str | None
    rule: str
    needed_tokens: int
    messages: list[dict[str, Any]] = field(default_factory=list)
    order: list[str] = field(default_factory=list)


def merger_candidates(
    collection: CollectionFields,
    shape: str,
    counts: Mapping[str, Counts],
    primary: Primary | None,
    pinned: Mapping[str, str] | None = None,
    seated: Sequence[str] = (),
) -> list[tuple[str, str]]:
    """(alias, rule) in the order the rules are tried; duplicates dropped. `counts` is alias →
    (useful, verdicts) on `shape`; `seated` the panel's seats beside the members (explorers);
    `pinned` the merger role: shape (or EVERY_SHAPE) → alias. The user's choices come first (the
    collection's merger, the merger role, a pinned primary), then the evidence's order of the
    panel's models (posterior.py, ties said), then the router's best, then the members. The pick
    reply ranks seats by the same order, without the merger role (bench/panels/pick.py)."""
    ordered: list[tuple[str, str]] = []
    if merger := collection.get("merger"):
        ordered.append((merger, "the collection's merger"))
    pinned = pinned or {}
    if alias := pinned.get(shape):
        ordered.append((alias, f"the merger pinned for {shape}"))
    if alias := pinned.get(EVERY_SHAPE):
        ordered.append((alias, "the merger pinned for every shape"))
    if primary is not None and primary.pinned:
        ordered.append((primary.alias, f"the primary pinned for {shape}"))
    members = collection["members"]
    judged = [a for a in best_among([*members, *seated], counts) if counts.get(a, (0, 0))[1] > 0]
    # Only models with a useful verdict: 0/4 is evidence against, not a reason to come before a member.
    by_evidence = [a for a in judged if counts[a][0] > 0]
    for i, alias in enumerate(by_evidence):
        useful, verdicts = counts[alias]
        rule = "the best evidence" if i == 0 else "the next best evidence"
        # The cheap interval test, never P(best): this runs on every panel.
        tie = tie_note(judged[judged.index(alias) :], counts)
        ordered.append((alias, f"{rule} on {shape} among the panel's models: {useful}/{verdicts} useful{tie}"))
    if primary is not None and not primary.pinned:
        ordered.append((primary.alias, f"the router's best for {shape}{primary.tie_note}"))
    ordered += [(m, "the first member that fits") for m in members]
    first: dict[str, str] = {}
    for alias, rule in ordered:
        first.setdefault(alias, rule)
    return list(first.items())


def merger_messages(
    request: str, answers: Sequence[tuple[str, str]], rng: random.Random
) -> tuple[list[dict[str, Any]], list[str]]:
    """The merger's conversation, answers shuffled; returns it with the order the merger saw."""
    shuffled = list(answers)
    rng.shuffle(shuffled)
    parts = [f"Request:\n{request}", "Answers:"]
    parts += [f"--- {alias} ---\n{answer.strip()}" for alias, answer in shuffled]
    messages = [
        {"role": "system", "content": MERGER_INSTRUCTIONS},
        {"role": "user", "content": "\n\n".join(parts)},
    ]
    return messages, [alias for alias, _ in shuffled]


def plan_merger(
    candidates: Sequence[tuple[str, str]],
    snapshot: Snapshot,
    request: str,
    answers: Sequence[tuple[str, str]],
    rng: random.Random,
    now: float,
) -> MergerPlan:
    """The first candidate whose window holds the request plus every answer (unknown fits), not
    cooling down and not retired."""
    messages, order = merger_messages(request, answers, rng)
    content = Content()
    for message in messages:
        content.add_text(message["content"])
    needed = estimate_tokens(content.text_chars, 0, content.kind) + ANSWER_ALLOWANCE
    for alias, rule in candidates:
        model = snapshot.models.get(alias)
        if model is None or model.cooling(now) or model.retired:
            continue
        if model.window is None or model.window >= needed:
            return MergerPlan(alias=alias, rule=rule, needed_tokens=needed, messages=messages, order=order)
    return MergerPlan(alias=None, rule="", needed_tokens=needed, messages=messages, order=order)
