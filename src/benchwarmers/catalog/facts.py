"""The fact vocabulary: what the bench knows of a model, where it came from, and which source wins.

Sources, first wins: the user's `override`, then what was `learned` from real calls, then what real
calls' `headers` said (rate limits), then the endpoint's own `listing`, then the curated `free_tier` file
(catalog/free_tiers.py: limits before the first call, data use, provider traits as tags), then
`models.dev`. The free-tier file comes before models.dev because it says what a free plan gives, where
models.dev gives a provider's paid prices. A missing (None) value falls through to the next source.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

FACTS = (
    "context_window", "output_cap", "input_kinds", "free", "price", "family", "deprecated", "rate_limits",
    "tags", "free_tier",
)  # fmt: skip
SOURCES = ("override", "learned", "headers", "listing", "free_tier", "models.dev")


@dataclass(frozen=True)
class ListedModel:
    """One model as a single source describes it; None always means "this source does not say"."""

    model_id: str  # the id to send upstream as "model"
    context_window: int | None = None
    output_cap: int | None = None
    input_kinds: frozenset[str] | None = None  # {"text", "image", ...}
    price_prompt: float | None = None  # USD per token
    price_completion: float | None = None
    free: bool | None = None  # True when both prices are 0
    family: str | None = None
    deprecated: str | None = None  # a deprecation date, "deprecated", "inactive"...
    display_name: str | None = None
    # Identity marks: a new value means the listed model may be another model under the same id.
    created: str | None = None  # when the provider says it was made (ISO 8601, UTC)
    fingerprint: str | None = None  # a digest or fingerprint the listing gives

    @property
    def vision(self) -> bool | None:
        """Whether it takes images; None when the source does not say."""
        return None if self.input_kinds is None else "image" in self.input_kinds


def free_from_prices(prompt: float | None, completion: float | None) -> bool | None:
    """Free only when both prices are known to be 0; paid as soon as either is above 0."""
    if (prompt is not None and prompt > 0) or (completion is not None and completion > 0):
        return False
    if prompt == 0 and completion == 0:
        return True
    return None


def listed_facts(model: ListedModel) -> dict[str, Any]:
    """The facts a ListedModel states, as JSON-ready values (the store keeps facts as JSON).

    `input_kinds` becomes a sorted list, `price` a {"prompt", "completion"} dict (USD per token).
    Facts the source does not state are left out, so they fall through to the next source.
    """
    facts: dict[str, Any] = {
        "context_window": model.context_window,
        "output_cap": model.output_cap,
        "input_kinds": sorted(model.input_kinds) if model.input_kinds is not None else None,
        "free": model.free,
        "family": model.family,
        "deprecated": model.deprecated,
        "created": model.created,
        "fingerprint": model.fingerprint,
    }
    if model.price_prompt is not None or model.price_completion is not None:
        facts["price"] = {"prompt": model.price_prompt, "completion": model.price_completion}
    return {name: value for name, value in facts.items() if value is not None}


def _first(
    facts_by_source: Mapping[str, Mapping[str, Any]], fact: str, sources: tuple[str, ...]
) -> tuple[Any, str] | None:
    for source in sources:
        value = facts_by_source.get(source, {}).get(fact)
        if value is not None:
            return value, source
    return None


def effective(facts_by_source: Mapping[str, Mapping[str, Any]]) -> dict[str, tuple[Any, str]]:
    """For each fact some source knows: (value, source) by precedence (`SOURCES`, first wins).

    Facts no source knows are absent from the result. One special rule: a `learned` context window
    counts only if it is lower than what the next source says (windows learned from "maximum
    context length" errors only ever lower); with no later source to compare, it counts.
    Keys outside `FACTS` are ignored; an unknown source name raises ValueError (a typo would
    otherwise silently drop a source).
    """
    unknown = set(facts_by_source) - set(SOURCES)
    if unknown:
        raise ValueError(f"unknown fact source(s) {sorted(unknown)}; known: {', '.join(SOURCES)}")
    result: dict[str, tuple[Any, str]] = {}
    for fact in FACTS:
        found = _first(facts_by_source, fact, SOURCES)
        if found is not None and fact == "context_window" and found[1] == "learned":
            below = _first(facts_by_source, fact, SOURCES[SOURCES.index("learned") + 1 :])
            if below is not None and not found[0] < below[0]:
                found = below
        if found is not None:
            result[fact] = found
    return result
