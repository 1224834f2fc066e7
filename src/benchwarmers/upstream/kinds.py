"""The endpoint kinds, by name only: what `benchwarmers endpoint add --kind` offers (and `--help`
shows) without loading the listing code or any client."""

from __future__ import annotations

# A listing format each (upstream/listings.py). `responses`: an OpenAI-style listing, seats called
# over the Responses API (upstream/responses_client.py). `anthropic`: Anthropic's listing, seats
# called over its Messages API (upstream/anthropic_client.py).
LISTING_KINDS = (
    "openai",
    "openrouter",
    "groq",
    "mistral",
    "ollama",
    "lmstudio",
    "llamacpp",
    "vllm",
    "openwebui",
    "litellm",
    "cliproxy",
    "responses",
    "anthropic",
)
ANTHROPIC_KIND = "anthropic"
# Models the `llm` library's plugins list (upstream/llm_client.py).
LLM_KIND = "llm"
