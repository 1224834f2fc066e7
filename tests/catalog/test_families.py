"""The family heuristic: coarse lineages, named fine-tunes before their base."""

from __future__ import annotations

import pytest

from benchwarmers.catalog.families import family_of, normalise_family


@pytest.mark.parametrize(
    ("model_id", "family"),
    [
        ("meta-llama/llama-3.3-70b-instruct:free", "llama"),
        ("qwen/qwen3-coder:free", "qwen"),
        ("gemma-3-27b-it", "gemma"),
        ("gpt-oss-120b", "gpt-oss"),
        ("openai/gpt-oss-20b:free", "gpt-oss"),
        ("openai/gpt-4o-mini", "gpt"),
        ("o3-mini", "gpt"),
        ("mistralai/mistral-small-3.2-24b-instruct:free", "mistral"),
        ("deepseek/deepseek-r1:free", "deepseek"),
        ("moonshotai/kimi-k2:free", "kimi"),
        ("google/gemini-2.5-flash", "gemini"),
        ("z-ai/glm-4.5-air:free", "glm"),
        ("zai-glm-4.7", "glm"),
        ("microsoft/phi-4", "phi"),
        ("phi3:mini", "phi"),
        ("nvidia/llama-3.1-nemotron-70b", "nemotron"),  # named fine-tune wins over its base
        ("nousresearch/hermes-3-llama-3.1-405b:free", "hermes"),
        ("cognitivecomputations/dolphin-mistral-24b-venice-edition:free", "dolphin"),  # not phi, not mistral
        ("deepseek-r1-distill-llama-70b", "deepseek"),
        ("llava-phi3:3.8b", "llava"),
        ("mixtral-8x7b", "mistral"),
        ("open-mixtral-8x22b", "mistral"),
        ("codestral-latest", "mistral"),
        ("pixtral-12b", "mistral"),
        ("devstral-small-2507", "mistral"),
        ("llama3.2:3b", "llama"),
        ("qwen2.5-coder:7b", "qwen"),
        ("Qwen/QwQ-32B", "qwen"),
        ("codegemma:7b", "gemma"),
        ("anthropic/claude-3.5-sonnet", "claude"),
        ("x-ai/grok-4", "grok"),
        ("minimax/minimax-m2.5:free", "minimax"),
        ("ibm-granite/granite-3.3-8b-instruct", "granite"),
        ("01-ai/yi-34b-chat", "yi"),
        ("liquid/lfm-2.5-1.2b-instruct:free", "lfm"),
        ("command-r-plus", "command"),
        ("whisper-large-v3", None),
        ("allam-2-7b", None),
        ("openrouter/auto", None),
        ("", None),
    ],
)
def test_family_of(model_id: str, family: str | None) -> None:
    assert family_of(model_id) == family


@pytest.mark.parametrize(
    ("label", "family"),
    [
        ("qwen2", "qwen"),  # Ollama details.family
        ("gemma3", "gemma"),
        ("qwen2_vl", "qwen"),  # LM Studio arch
        ("gpt-mini", "gpt"),  # models.dev families are finer than ours
        ("o-mini", "gpt"),
        ("glm-air", "glm"),
        ("claude-opus", "claude"),
        ("kimi-thinking", "kimi"),
        ("mixtral", "mistral"),
        ("nousresearch", "hermes"),
        ("Nomic-Bert", "nomic-bert"),  # unknown labels are kept, lower-cased
        ("olmo", "olmo"),
    ],
)
def test_normalise_family(label: str, family: str) -> None:
    assert normalise_family(label) == family
