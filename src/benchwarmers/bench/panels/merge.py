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
    useful_counts: dict[tuple[str, str], tuple[int, int]],
    primary: str | None,
    pinned: Mapping[str, str] | None = None,
) -> list[tuple[str, str]]:
    """(alias, rule) in the order the rules are tried; duplicates dropped. `pinned` is the merger
    role: shape (or EVERY_SHAPE) → alias. The pick reply ranks seats by the same order, without
    the merger role (bench/panels/pick.py)."""
    ordered: list[tuple[str, str]] = []
    if merger := collection.get("merger"):
        ordered.append((merger, "the collection's merger"))
    pinned = pinned or {}
    if alias := pinned.get(shape):
        ordered.append((alias, f"the merger pinned for {shape}"))
    if alias := pinned.get(EVERY_SHAPE):
        ordered.append((alias, "the merger pinned for every shape"))
    members = collection["members"]
    useful = [(useful_counts.get((m, shape), (0, 0))[0], -i, m) for i, m in enumerate(members)]
    best = max(useful, default=(0, 0, None))
    if best[0] > 0 and best[2] is not None:
        ordered.append((best[2], f"the member with the most useful verdicts on {shape}"))
    if primary:
        ordered.append((primary, f"the router's best for {shape}"))
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
