"""List prices: what a call would have cost if it had been paid for, and where that price was read.

A model's list price is, first wins:

1. `maker`: the price its maker's own models.dev provider lists for the same model (`MAKERS` maps
   a family to its maker; the same model is the same id or the same `normalise_id`): what OpenAI
   charges for `gpt-4o`, whoever served it.
2. `endpoint`: the price the endpoint that served it lists for it (its own listing, or models.dev
   for the endpoint's provider), else the price that provider lists for the paid twin of a `:free`
   id (`openrouter/x:free` → `openrouter/x`).
3. `unknown`: no source gives one. Its tokens are counted apart, never priced by a guess.

Only a paid price is a list price: a price of 0 is a free tier or a preview (Meta's Llama API
lists its models at 0), and a price with one side missing is not a price. The base price is used:
cached input, reasoning surcharges and long-context tiers are not modelled.

Prices are USD per million tokens, as `Decimal`s kept to a millionth of a dollar, so totals add up
exactly to what a hand computation gives.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from benchwarmers.catalog.modelsdev import ModelsDev

PER_MILLION = Decimal(1_000_000)
_PLACES = Decimal("0.000001")

# A family (catalog/families.py) → the models.dev provider that is its maker's own API.
MAKERS: dict[str, str] = {
    "gpt": "openai",
    "gpt-oss": "openai",
    "claude": "anthropic",
    "gemini": "google",
    "gemma": "google",
    "mistral": "mistral",
    "deepseek": "deepseek",
    "grok": "xai",
    "kimi": "moonshotai",
    "glm": "zai",
    "minimax": "minimax",
    "qwen": "alibaba",
    "llama": "llama",
    "command": "cohere",
    "sonar": "perplexity",
    "mimo": "xiaomi",
    "phi": "azure",
}


@dataclass(frozen=True)
class ListPrice:
    """`source` is maker, endpoint or unknown; `where` says which price list (`models.dev openai`,
    `listing of groq`); `model` is the id the price is listed under there."""

    source: str
    where: str = ""
    model: str | None = None
    prompt: Decimal | None = None  # USD per million input tokens
    completion: Decimal | None = None  # USD per million output tokens

    @property
    def known(self) -> bool:
        return self.prompt is not None and self.completion is not None

    def cost(self, prompt_tokens: int, completion_tokens: int) -> Decimal:
        """USD for these tokens; only for a known price."""
        assert self.prompt is not None and self.completion is not None
        return (self.prompt * prompt_tokens + self.completion * completion_tokens) / PER_MILLION

    def public(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "where": self.where,
            "model": self.model,
            "prompt": None if self.prompt is None else float(self.prompt),
            "completion": None if self.completion is None else float(self.completion),
        }


UNKNOWN = ListPrice("unknown")


def per_million(value: Any, scale: int = 1) -> Decimal | None:
    """A price as USD per million tokens, kept to a millionth of a dollar; `scale` 1_000_000 for a
    price given per token. None for anything that is not a price."""
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        return None
    return Decimal(repr(round(value * scale, 6))).quantize(_PLACES).normalize()


def _paid(prompt: Decimal | None, completion: Decimal | None) -> bool:
    return prompt is not None and completion is not None and (prompt > 0 or completion > 0)


def _listed(catalog: ModelsDev, provider: str, model_id: str, source: str) -> ListPrice | None:
    for listed_id, prompt, completion in catalog.listed_prices(provider, model_id):
        low, high = per_million(prompt), per_million(completion)
        if _paid(low, high):
            return ListPrice(source, f"models.dev {provider}", listed_id, low, high)
    return None


def list_price(
    catalog: ModelsDev,
    *,
    model_id: str,
    family: str | None,
    endpoint: str | None = None,
    endpoint_provider: str | None = None,
    price_fact: tuple[Any, str] | None = None,
) -> ListPrice:
    """The list price of `model_id` as served by `endpoint` (see the module docstring).

    `endpoint_provider` is the models.dev provider the endpoint is; `price_fact` the roster's
    effective `price` fact for the model: ({"prompt", "completion"} USD per token, its source)."""
    maker = MAKERS.get(family or "")
    if maker is not None:
        found = _listed(catalog, maker, model_id, "maker")
        if found is not None:
            return found
    if price_fact is not None and isinstance(price_fact[0], Mapping):
        value, fact_source = price_fact
        prompt = per_million(value.get("prompt"), 1_000_000)
        completion = per_million(value.get("completion"), 1_000_000)
        if _paid(prompt, completion):
            return ListPrice("endpoint", _where(fact_source, endpoint, endpoint_provider), model_id, prompt, completion)
    if endpoint_provider is not None:
        found = _listed(catalog, endpoint_provider, model_id, "endpoint")
        if found is not None:
            return found
    return UNKNOWN


def _where(fact_source: str, endpoint: str | None, provider: str | None) -> str:
    if fact_source == "listing" and endpoint:
        return f"listing of {endpoint}"
    if fact_source == "models.dev" and provider:
        return f"models.dev {provider}"
    return fact_source
