"""Endpoint presets: the known free OpenAI-compatible providers and local servers, so adding one
is `benchwarmers endpoint add groq --preset groq` (base URL, listing kind, key variable, free tier).

`free_tier` marks a provider whose free plan costs nothing whatever its listing says; OpenRouter is
not one (its `:free` models are free, the rest are priced, and its listing says which).
Facts: /work/shared/reference/ecosystem.md §2 (free provider table, models.dev provider entries).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from benchwarmers.errors import InvalidRequest

_PLACEHOLDER = re.compile(r"\$\{([A-Z0-9_]+)\}")


@dataclass(frozen=True)
class Preset:
    name: str
    title: str
    base_url: str  # may hold ${VAR} placeholders filled from the environment
    kind: str
    key_envs: tuple[str, ...] = ()  # accepted key variables, the usual one first; () = no key
    free_tier: bool = False
    local: bool = False
    provider: str | None = None  # the models.dev provider id it serves
    note: str = ""

    @property
    def key_env(self) -> str | None:
        return self.key_envs[0] if self.key_envs else None

    def key_env_set(self, environ: Mapping[str, str] | None = None) -> str | None:
        """The first accepted key variable that is set, if any."""
        environ = os.environ if environ is None else environ
        return next((name for name in self.key_envs if environ.get(name)), None)

    def resolved_base_url(self, environ: Mapping[str, str] | None = None) -> str:
        """The base URL with its ${VAR} placeholders filled; InvalidRequest naming a missing one."""
        environ = os.environ if environ is None else environ

        def fill(match: re.Match[str]) -> str:
            value = environ.get(match.group(1))
            if not value:
                raise InvalidRequest(
                    f"preset {self.name!r} needs {match.group(1)} set (its base URL is {self.base_url}), "
                    "or give --base-url",
                    param="base_url",
                )
            return value

        return _PLACEHOLDER.sub(fill, self.base_url)


PRESETS: dict[str, Preset] = {
    p.name: p
    for p in (
        Preset(
            "openrouter", "OpenRouter", "https://openrouter.ai/api/v1", "openrouter", ("OPENROUTER_API_KEY",),
            provider="openrouter", note=":free models: 20 requests a minute, 50 a day (1,000 after $10 of credits)",
        ),
        Preset(
            "groq", "Groq", "https://api.groq.com/openai/v1", "groq", ("GROQ_API_KEY",), free_tier=True,
            provider="groq", note="free plan: per-model requests a day and tokens a minute",
        ),
        Preset(
            "cerebras", "Cerebras", "https://api.cerebras.ai/v1", "openai", ("CEREBRAS_API_KEY",), free_tier=True,
            provider="cerebras", note="free plan: 30 requests a minute, 14,400 a day, 1M tokens a day",
        ),
        Preset(
            "google", "Google AI Studio (Gemini)", "https://generativelanguage.googleapis.com/v1beta/openai",
            "openai", ("GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GENERATIVE_AI_API_KEY"), free_tier=True,
            provider="google", note="free quota per model; prompts may be used for training outside the EU/UK",
        ),
        Preset(
            "mistral", "Mistral (Experiment plan)", "https://api.mistral.ai/v1", "mistral", ("MISTRAL_API_KEY",),
            free_tier=True, provider="mistral", note="Experiment plan: 1 request a second; prompts may train models",
        ),
        Preset(
            "nvidia", "NVIDIA NIM", "https://integrate.api.nvidia.com/v1", "openai", ("NVIDIA_API_KEY",),
            free_tier=True, provider="nvidia", note="40 requests a minute on free credits",
        ),
        Preset(
            "github", "GitHub Models", "https://models.github.ai/inference", "openai", ("GITHUB_TOKEN",),
            free_tier=True, provider="github-models", note="low tier 15 requests a minute, 150 a day; 8K in, 4K out",
        ),
        Preset(
            "cloudflare", "Cloudflare Workers AI",
            "https://api.cloudflare.com/client/v4/accounts/${CLOUDFLARE_ACCOUNT_ID}/ai/v1", "openai",
            ("CLOUDFLARE_API_KEY", "CLOUDFLARE_API_TOKEN"), free_tier=True, provider="cloudflare-workers-ai",
            note="10,000 neurons a day; needs CLOUDFLARE_ACCOUNT_ID",
        ),
        Preset(
            "ollama", "Ollama (local)", "http://127.0.0.1:11434/v1", "ollama", free_tier=True, local=True,
            note="models you have pulled, on this machine",
        ),
        Preset(
            "lmstudio", "LM Studio (local)", "http://127.0.0.1:1234/v1", "lmstudio", free_tier=True, local=True,
            provider="lmstudio", note="models you have downloaded, on this machine",
        ),
        Preset(
            "llamacpp", "llama.cpp's server (local)", "http://127.0.0.1:8080/v1", "llamacpp", free_tier=True,
            local=True, note="the model llama-server (or llama-cpp-python's server) was started with",
        ),
        Preset(
            "vllm", "vLLM (local)", "http://127.0.0.1:8000/v1", "vllm", free_tier=True, local=True,
            note="the model vllm serve was started with; its window is max_model_len",
        ),
        Preset(
            "llamafile", "llamafile (local)", "http://127.0.0.1:8080/v1", "llamacpp", free_tier=True, local=True,
            note="the model the llamafile carries (llama.cpp's server inside)",
        ),
        # A flat subscription is not free per call, and its limits are shared with your own CLI use:
        # explorers take these models only once you say so (--free-tier).
        Preset(
            "cliproxy", "CLIProxyAPI (ChatGPT, Claude, Gemini subscriptions)", "http://127.0.0.1:8317/v1",
            "cliproxy", ("CLIPROXY_API_KEY",),
            note="the subscription CLIs you logged in to, behind one relay; its key is one of its api-keys",
        ),
        Preset(
            "llm", "llm and its plugins (BENCH_CLIENT=llm)", "llm:", "llm",
            note="the models llm's plugins reach (llm-gemini, llm-anthropic, llm-ollama, ...), with llm's keys",
        ),
    )
}  # fmt: skip


def preset(name: str) -> Preset:
    found = PRESETS.get(name.strip().lower())
    if found is None:
        raise InvalidRequest(f"no preset {name!r}; presets are: {', '.join(PRESETS)}", param="preset")
    return found


def for_provider(provider_id: str) -> Preset | None:
    """The preset serving a models.dev provider, if any (for "add an endpoint first" hints)."""
    return next((p for p in PRESETS.values() if p.provider == provider_id), None)


def endpoint_options(
    name: str,
    environ: Mapping[str, str] | None = None,
    /,
    *,
    base_url: str | None = None,
    kind: str | None = None,
    api_key_env: str | None = None,
    api_key: str | None = None,
    free_tier: bool | None = None,
) -> dict[str, Any]:
    """The preset's endpoint settings with whatever the user gave explicitly on top."""
    chosen = preset(name)
    return {
        "base_url": base_url or chosen.resolved_base_url(environ),
        "kind": kind or chosen.kind,
        # A key given outright replaces the preset's key variable (an endpoint has one or the other).
        "api_key_env": api_key_env or (None if api_key else chosen.key_env_set(environ) or chosen.key_env),
        "api_key": api_key,
        "free_tier": chosen.free_tier if free_tier is None else free_tier,
    }
