"""A catalog with known prices and the usage the fake provider reports: the cost tests' arithmetic."""

from __future__ import annotations

# A models.dev catalog small enough to price by hand (USD per million tokens).
CATALOG = {
    "openai": {"id": "openai", "name": "OpenAI", "models": {
        "gpt-4o-mini": {"id": "gpt-4o-mini", "cost": {"input": 0.15, "output": 0.6}}}},
    "llama": {"id": "llama", "name": "Llama", "models": {
        "llama-3.3-70b-instruct": {"id": "llama-3.3-70b-instruct", "cost": {"input": 0, "output": 0}}}},
    "openrouter": {"id": "openrouter", "name": "OpenRouter", "models": {
        "meta-llama/llama-3.3-70b-instruct": {"id": "meta-llama/llama-3.3-70b-instruct",
                                              "cost": {"input": 0.1, "output": 0.32}},
        "meta-llama/llama-3.3-70b-instruct:free": {"id": "meta-llama/llama-3.3-70b-instruct:free",
                                                   "cost": {"input": 0, "output": 0}}}},
    "groq": {"id": "groq", "name": "Groq", "models": {
        "llama-3.3-70b-versatile": {"id": "llama-3.3-70b-versatile", "cost": {"input": 0.59, "output": 0.79}},
        "half-priced": {"id": "half-priced", "cost": {"input": 0.5}}}},
}  # fmt: skip


GPT = "openai/gpt-4o-mini"  # free through this endpoint; the maker (OpenAI) lists 0.15 / 0.60


LLAMA = "meta-llama/llama-3.3-70b-instruct:free"  # Meta lists it at 0: OpenRouter's paid twin, 0.10 / 0.32


WIDGET = "acme/widget-7b"  # no maker known; the endpoint's own listing: 1 / 2 (paid)


MYSTERY = "acme/mystery-1"  # free, no price anywhere: unknown


USAGE = {
    GPT: {"prompt_tokens": 1200, "completion_tokens": 340, "total_tokens": 1540},
    LLAMA: {"prompt_tokens": 1000, "completion_tokens": 2000, "total_tokens": 3000},
    WIDGET: {"prompt_tokens": 5000, "completion_tokens": 700, "total_tokens": 5700},
    MYSTERY: {"prompt_tokens": 77, "completion_tokens": 23, "total_tokens": 100},
}
