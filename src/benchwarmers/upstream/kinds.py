"""The endpoint kinds, one registry: each kind's name, the seat client that calls its models and
what else the bench chooses by kind. What `benchwarmers endpoint add --kind` offers (and `--help`
shows) comes from here without loading the listing code or any client.

A new endpoint kind is one line in `ENDPOINT_KINDS` (and, for a new wire format, one `SeatClient`
class in its client module, named by a `Wire`: upstream/seat_client.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Wire(StrEnum):
    """How a kind's seats are called: each names one seat client (bench/clients.py builds them)."""

    chat = "chat"  # OpenAI chat completions: the built-in pool (upstream/client.py)
    responses = "responses"  # the Responses API (upstream/responses_client.py)
    messages = "messages"  # Anthropic's Messages API (upstream/anthropic_client.py)
    llm = "llm"  # the `llm` library's plugins (upstream/llm_client.py)


# Where a native decision API answers on `path` (bench/panels/shapes.py): `{base}` is the endpoint's
# base URL, `{root}` its server's root.
DECISION_API = "{base}/{path}"
# Open WebUI proxies any path under `/openai/` to its first OpenAI connection (`{url}/{path}`).
OPENWEBUI_PASSTHROUGH = "{root}/openai/{path}"


@dataclass(frozen=True)
class EndpointKind:
    name: str
    wire: Wire = Wire.chat
    # Reached at a base URL, its listing in a format of upstream/listings.py; False: no URL, its
    # models are what llm's plugins reach now.
    at_url: bool = True
    # A local server runs only what was pulled onto it: it does not reach a models.dev provider's list.
    local: bool = False
    decision_api: str | None = DECISION_API  # None: it serves none (add the model with --kind chat)
    # The models.dev provider it serves, when the kind names one (catalog/modelsdev.py); models.dev
    # has no local Ollama provider: `ollama-cloud` uses the same tag names, and local facts win anyway.
    modelsdev: str | None = None
    # The provider as OpenTelemetry's conventions name it (gen_ai.provider.name); else the kind's name.
    otel: str | None = None

    @property
    def text_only(self) -> bool:
        """Its models never sit on an image request: llm's plugins are sent text (ModelView.vision)."""
        return self.wire is Wire.llm


ENDPOINT_KINDS: dict[str, EndpointKind] = {
    kind.name: kind
    for kind in (
        EndpointKind("openai", otel="openai"),
        EndpointKind("openrouter", modelsdev="openrouter"),
        EndpointKind("groq", modelsdev="groq", otel="groq"),
        EndpointKind("mistral", modelsdev="mistral", otel="mistral_ai"),
        EndpointKind("ollama", local=True, modelsdev="ollama-cloud", otel="ollama"),
        EndpointKind("lmstudio", local=True, modelsdev="lmstudio"),
        EndpointKind("llamacpp", local=True),
        EndpointKind("vllm", local=True),
        EndpointKind("openwebui", decision_api=OPENWEBUI_PASSTHROUGH),
        EndpointKind("litellm"),
        EndpointKind("cliproxy"),
        # An OpenAI-style listing, seats called over the Responses API.
        EndpointKind("responses", Wire.responses),
        # Anthropic's listing, seats called over its Messages API.
        EndpointKind("anthropic", Wire.messages, decision_api=None, otel="anthropic"),
        # Models the `llm` library's plugins list.
        EndpointKind("llm", Wire.llm, at_url=False, decision_api=None),
    )
}


def endpoint_kind(name: str) -> EndpointKind:
    """The kind of that name; a name not registered is called as chat completions, as before."""
    return ENDPOINT_KINDS.get(name) or EndpointKind(name)


# A listing format each (upstream/listings.py).
LISTING_KINDS = tuple(kind.name for kind in ENDPOINT_KINDS.values() if kind.at_url)
