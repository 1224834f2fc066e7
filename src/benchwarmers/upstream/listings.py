"""Provider model listings → `ListedModel`s: one pure parser per listing format, one fetcher.

Parsers keep what the listing itself says and nothing more (a missing field stays None, to fall
through to models.dev); they skip entries the listing marks as not chat models (embeddings,
image-only output, Mistral `completion_chat: false`); a repeated id keeps its first entry.
`fetch_listing` knows which URLs each kind answers on; the HTTP itself is injected.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from benchwarmers.catalog.facts import ListedModel, free_from_prices
from benchwarmers.catalog.families import normalise_family
from benchwarmers.upstream.anthropic_client import fetch_anthropic, parse_anthropic
from benchwarmers.upstream.kinds import LISTING_KINDS

# (method, absolute URL, JSON body or None) → parsed JSON; raises on HTTP or transport failure.
FetchJson = Callable[[str, str, Any | None], Awaitable[Any]]

KINDS = LISTING_KINDS  # the formats read here (named in upstream/kinds.py)

_WINDOW_KEYS = (
    "context_length", "context_window", "max_context_length", "top_provider.context_length", "max_model_len"
)  # fmt: skip
_OUTPUT_KEYS = ("max_completion_tokens", "top_provider.max_completion_tokens", "max_output_tokens")
_DEPRECATION_KEYS = ("deprecation", "deprecation_date", "expiration_date", "shutdown_date")
_NOT_CHAT_TYPES = {"embedding", "embeddings"}
_NOT_CHAT_MODES = {
    "embedding", "rerank", "moderation", "image_generation", "audio_transcription", "audio_speech"
}  # fmt: skip
_TEXT = frozenset({"text"})
_TEXT_IMAGE = frozenset({"text", "image"})
_OLLAMA_SHOW_CONCURRENCY = 4
_NUM_CTX = re.compile(r"^\s*num_ctx\s+(\d+)", re.MULTILINE)


def root_of(base_url: str) -> str:
    """The server root of an OpenAI-compatible base: `http://h:1234/v1/` → `http://h:1234`."""
    return base_url.strip().rstrip("/").removesuffix("/v1")


# --- field readers -------------------------------------------------------------------------


def _get(entry: Any, dotted: str) -> Any:
    for key in dotted.split("."):
        if not isinstance(entry, Mapping):
            return None
        entry = entry.get(key)
    return entry


def _as_int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if value > 0 else None
    if isinstance(value, float) and value.is_integer():
        return _as_int(int(value))
    if isinstance(value, str) and value.strip().isdecimal():
        return _as_int(int(value))
    return None


def _as_price(value: Any) -> float | None:
    """A per-token price; negative means "varies" on OpenRouter's routers, so unknown."""
    if isinstance(value, bool) or value is None:
        return None
    try:
        price = float(value)
    except (TypeError, ValueError):
        return None
    return price if price >= 0 else None


def _first_int(entry: Mapping[str, Any], paths: Iterable[str]) -> int | None:
    for path in paths:
        value = _as_int(_get(entry, path))
        if value is not None:
            return value
    return None


def _text(value: Any) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None


def _created(entry: Mapping[str, Any]) -> str | None:
    """OpenAI's `created` (Unix seconds) as ISO 8601 UTC, or Anthropic's `created_at` as given."""
    seconds = _as_int(entry.get("created"))
    if seconds is not None:
        return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return _text(entry.get("created_at"))


def _vision_kinds(vision: Any) -> frozenset[str] | None:
    return (_TEXT_IMAGE if vision else _TEXT) if isinstance(vision, bool) else None


def _input_kinds(entry: Mapping[str, Any]) -> frozenset[str] | None:
    listed = _get(entry, "architecture.input_modalities")
    if isinstance(listed, list) and listed:
        return frozenset(str(kind).lower() for kind in listed)
    modality = _get(entry, "architecture.modality")  # OpenRouter's older "text+image->text"
    if isinstance(modality, str) and "->" in modality:
        return frozenset(kind.strip().lower() for kind in modality.split("->")[0].split("+"))
    capabilities = entry.get("capabilities")
    if isinstance(capabilities, Mapping):
        return _vision_kinds(capabilities.get("vision"))
    if isinstance(capabilities, list):  # Ollama-style capability names
        return _TEXT_IMAGE if "vision" in capabilities else _TEXT
    return None


def _deprecated(entry: Mapping[str, Any]) -> str | None:
    for key in _DEPRECATION_KEYS:
        value = _text(entry.get(key))
        if value:
            return value
    if entry.get("deprecated") is True:
        return "deprecated"
    if entry.get("active") is False:  # Groq
        return "inactive"
    return None


def _is_chat(entry: Mapping[str, Any]) -> bool:
    if _get(entry, "capabilities.completion_chat") is False:
        return False
    if str(entry.get("type", "")).lower() in _NOT_CHAT_TYPES:
        return False
    outputs = _get(entry, "architecture.output_modalities")
    if isinstance(outputs, list) and outputs and "text" not in outputs:
        return False
    capabilities = entry.get("capabilities")
    if isinstance(capabilities, list):  # Ollama: an embedding model lacks "completion"
        return "embedding" not in capabilities or "completion" in capabilities
    return True


def _unique(models: Iterable[ListedModel | None]) -> list[ListedModel]:
    seen: dict[str, ListedModel] = {}
    for model in models:
        if model is not None and model.model_id not in seen:
            seen[model.model_id] = model
    return list(seen.values())


def _entries(payload: Any, key: str) -> list[Mapping[str, Any]]:
    items = payload.get(key) if isinstance(payload, Mapping) else payload
    if not isinstance(items, list):
        raise ValueError(f"not a model listing: expected a list under {key!r}")
    return [item for item in items if isinstance(item, Mapping)]


# Models served from the user's own machine cost nothing.
_LOCAL: dict[str, Any] = {"price_prompt": 0.0, "price_completion": 0.0, "free": True}


# --- parsers -------------------------------------------------------------------------------


def _openai_entry(entry: Mapping[str, Any]) -> ListedModel | None:
    model_id = _text(entry.get("id"))
    if model_id is None or not _is_chat(entry):
        return None
    prompt = _as_price(_get(entry, "pricing.prompt"))
    completion = _as_price(_get(entry, "pricing.completion"))
    return ListedModel(
        model_id=model_id,
        context_window=_first_int(entry, _WINDOW_KEYS),
        output_cap=_first_int(entry, _OUTPUT_KEYS),
        input_kinds=_input_kinds(entry),
        price_prompt=prompt,
        price_completion=completion,
        free=free_from_prices(prompt, completion),
        deprecated=_deprecated(entry),
        display_name=_text(entry.get("name")) or _text(entry.get("display_name")),
        created=_created(entry),
        fingerprint=_text(entry.get("fingerprint")),
    )


def parse_openai(payload: Any) -> list[ListedModel]:
    """A generic `GET {base}/models`: `{"object": "list", "data": [...]}` or a bare list.

    Reads OpenRouter (`context_length`, `top_provider`, `architecture`, `pricing` strings), Groq
    (`context_window`, `max_completion_tokens`, `active`), Mistral (`max_context_length`,
    `capabilities{completion_chat, vision}`, `deprecation`) and vLLM (`max_model_len`) fields.
    """
    return _unique(_openai_entry(entry) for entry in _entries(payload, "data"))


# The hosted providers speak the generic format with their own fields; the names keep call sites clear.
parse_openrouter = parse_openai
parse_groq = parse_openai
parse_mistral = parse_openai
# CLIProxyAPI (subscription CLIs behind one OpenAI-compatible relay) lists `{id, object, created,
# owned_by}` and, for some channels, `context_length`; to Claude Code's user agent it answers in
# Anthropic's shape (`{id, type, display_name, created_at}` under `data`), which reads the same.
# Its listing says nothing of prices: a subscription is not priced per token.
parse_cliproxy = parse_openai


def parse_openwebui(payload: Any) -> list[ListedModel]:
    """Open WebUI `GET /api/models`: an OpenAI-style list whose entries may carry the raw upstream
    entry (`openai`) or the raw Ollama tag (`ollama`, whose `details.family` names the family).
    Arena pseudo-models are skipped. Open WebUI does not mark embedding models, so they stay."""
    models: list[ListedModel | None] = []
    for entry in _entries(payload, "data"):
        if entry.get("arena"):
            continue
        upstream = entry.get("openai")
        merged = {**upstream, **entry} if isinstance(upstream, Mapping) else dict(entry)
        model = _openai_entry(merged)
        family = _text(_get(entry, "ollama.details.family"))
        if model is not None and family:
            model = replace(model, family=normalise_family(family))
        models.append(model)
    return _unique(models)


def _lmstudio_v1_entry(entry: Mapping[str, Any]) -> ListedModel | None:
    model_id = _text(entry.get("key"))
    if model_id is None or not _is_chat(entry):
        return None
    # A loaded instance runs with its own (smaller) context; with several, the smallest binds.
    loaded = [_as_int(_get(i, "config.context_length")) for i in entry.get("loaded_instances") or []]
    windows = [w for w in loaded if w is not None]
    architecture = _text(entry.get("architecture"))
    return ListedModel(
        model_id=model_id,
        context_window=min(windows) if windows else _as_int(entry.get("max_context_length")),
        input_kinds=_vision_kinds(_get(entry, "capabilities.vision")),
        family=normalise_family(architecture) if architecture else None,
        display_name=_text(entry.get("display_name")),
        **_LOCAL,
    )


def _lmstudio_v0_entry(entry: Mapping[str, Any]) -> ListedModel | None:
    model_id = _text(entry.get("id"))
    kind = str(entry.get("type", "")).lower()
    if model_id is None or kind in _NOT_CHAT_TYPES:
        return None
    arch = _text(entry.get("arch"))
    return ListedModel(
        model_id=model_id,
        context_window=_as_int(entry.get("max_context_length")),
        input_kinds=_TEXT_IMAGE if kind == "vlm" else _TEXT if kind == "llm" else None,
        family=normalise_family(arch) if arch else None,
        **_LOCAL,
    )


def parse_lmstudio(payload: Any) -> list[ListedModel]:
    """LM Studio v1 `GET /api/v1/models` (`{"models": [{key, ...}]}`) or v0 `GET /api/v0/models`
    (`{"data": [{id, type: llm|vlm|embeddings, ...}]}`), told apart by shape. All free (local)."""
    if isinstance(payload, Mapping) and isinstance(payload.get("models"), list):
        return _unique(_lmstudio_v1_entry(entry) for entry in _entries(payload, "models"))
    return _unique(_lmstudio_v0_entry(entry) for entry in _entries(payload, "data"))


def _ollama_window(show: Mapping[str, Any]) -> int | None:
    info = show.get("model_info")
    trained = None
    if isinstance(info, Mapping):
        arch = info.get("general.architecture")
        trained = _as_int(info.get(f"{arch}.context_length"))
        if trained is None:
            trained = next((_as_int(v) for k, v in info.items() if str(k).endswith(".context_length")), None)
    # `num_ctx` in the Modelfile is the context Ollama really runs with; longer prompts are cut silently.
    parameters = show.get("parameters")
    match = _NUM_CTX.search(parameters) if isinstance(parameters, str) else None
    runtime = int(match.group(1)) if match else None
    known = [w for w in (trained, runtime) if w]
    return min(known) if known else None


def parse_ollama(tags: Any, shows: Mapping[str, Any] | None = None) -> list[ListedModel]:
    """Ollama `GET /api/tags` plus each model's `POST /api/show` answer (`shows`: name → answer;
    a missing answer leaves that model's window and input kinds unknown). Model id = the tag name.
    Window: the runtime `num_ctx` when the Modelfile sets it, else `model_info[*.context_length]`."""
    models: list[ListedModel] = []
    for tag in _entries(tags, "models"):
        name = _text(tag.get("name")) or _text(tag.get("model"))
        show = (shows or {}).get(name or "")
        show = show if isinstance(show, Mapping) else {}
        capabilities = {"capabilities": show.get("capabilities", tag.get("capabilities"))}
        if name is None or not _is_chat(capabilities):
            continue
        family = _text(_get(show, "details.family")) or _text(_get(tag, "details.family"))
        models.append(
            ListedModel(
                model_id=name,
                context_window=_ollama_window(show),
                input_kinds=_input_kinds(capabilities),
                family=normalise_family(family) if family else None,
                fingerprint=_text(tag.get("digest")),  # new weights under the same tag: a new digest
                **_LOCAL,
            )
        )
    return _unique(models)


def parse_llamacpp(payload: Any, props: Any = None) -> list[ListedModel]:
    """llama.cpp's server (and llamafile, llama-cpp-python's): `GET {base}/models`, whose entries'
    `meta.n_ctx_train` is the window the model was trained with, plus `GET {root}/props` (None when
    it did not answer), whose `default_generation_settings.n_ctx` (older builds: `n_ctx`) is the
    context a request really gets, and `modalities.vision` whether it takes images. The server runs
    one model, so `/props` speaks for it only when the listing has one. All free (local)."""
    models = [replace(m, **_LOCAL) for m in parse_openai(payload)]
    trained = {
        _text(e.get("id")): _as_int(_get(e, "meta.n_ctx_train"))
        for e in _entries(payload, "data")
        if _text(e.get("id"))
    }
    props = props if isinstance(props, Mapping) else {}
    runtime = _as_int(_get(props, "default_generation_settings.n_ctx")) or _as_int(props.get("n_ctx"))
    vision = _get(props, "modalities.vision")
    found = []
    for model in models:
        windows = [w for w in (model.context_window, trained.get(model.model_id)) if w]
        if len(models) == 1 and runtime:
            windows.append(runtime)  # a server started with -c 2048 cuts every prompt at 2,048
        kinds = model.input_kinds
        if len(models) == 1 and isinstance(vision, bool):
            kinds = _TEXT_IMAGE if vision else _TEXT
        found.append(replace(model, context_window=min(windows) if windows else None, input_kinds=kinds))
    return found


def _litellm_entry(entry: Mapping[str, Any]) -> ListedModel | None:
    model_id = _text(entry.get("model_name"))
    info = entry.get("model_info")
    info = info if isinstance(info, Mapping) else {}
    if model_id is None or str(info.get("mode", "")).lower() in _NOT_CHAT_MODES:
        return None
    prompt = _as_price(info.get("input_cost_per_token"))
    completion = _as_price(info.get("output_cost_per_token"))
    return ListedModel(
        model_id=model_id,
        context_window=_first_int(info, ("max_input_tokens", "max_tokens")),
        output_cap=_as_int(info.get("max_output_tokens")),
        input_kinds=_vision_kinds(info.get("supports_vision")),
        price_prompt=prompt,
        price_completion=completion,
        free=free_from_prices(prompt, completion),
        deprecated=_text(info.get("deprecation_date")),
    )


def parse_litellm(payload: Any) -> list[ListedModel]:
    """LiteLLM proxy `GET /model/info`; model id = `model_name` (several deployments of one name:
    the first wins). Non-chat `mode`s (embedding, image_generation, ...) are skipped."""
    return _unique(_litellm_entry(entry) for entry in _entries(payload, "data"))


_PARSERS: dict[str, Callable[[Any], list[ListedModel]]] = {
    "openai": parse_openai,
    "openrouter": parse_openrouter,
    "groq": parse_groq,
    "mistral": parse_mistral,
    "lmstudio": parse_lmstudio,
    "openwebui": parse_openwebui,
    "litellm": parse_litellm,
    "cliproxy": parse_cliproxy,
    "responses": parse_openai,
    "anthropic": parse_anthropic,
    "llamacpp": parse_llamacpp,
    # vLLM lists `max_model_len`, the window it was started with (the generic reader's field).
    "vllm": lambda payload: [replace(model, **_LOCAL) for model in parse_openai(payload)],
}


def _check_kind(kind: str) -> None:
    if kind not in KINDS:
        raise ValueError(f"unknown endpoint kind {kind!r}; known kinds: {', '.join(KINDS)}")


def parse_listing(kind: str, payload: Any, shows: Mapping[str, Any] | None = None) -> list[ListedModel]:
    """Parse one listing payload of an endpoint kind (`shows` only for `ollama`)."""
    _check_kind(kind)
    if kind == "ollama":
        return parse_ollama(payload, shows)
    return _PARSERS[kind](payload)


# --- fetching ------------------------------------------------------------------------------


def _parse_local_generic(payload: Any) -> list[ListedModel]:
    return [replace(model, **_LOCAL) for model in parse_openai(payload)]


async def _first_that_parses(
    fetch_json: FetchJson, attempts: list[tuple[str, Callable[[Any], list[ListedModel]]]]
) -> list[ListedModel]:
    """Try each (url, parser) in turn; the last attempt's failure is the one the caller sees."""
    for url, parser in attempts[:-1]:
        try:
            return parser(await fetch_json("GET", url, None))
        except Exception:  # noqa: S112 - an older or different server: try the next route
            continue
    url, parser = attempts[-1]
    return parser(await fetch_json("GET", url, None))


async def _fetch_ollama(root: str, fetch_json: FetchJson) -> list[ListedModel]:
    tags = await fetch_json("GET", f"{root}/api/tags", None)
    names = [_text(t.get("name")) or _text(t.get("model")) for t in _entries(tags, "models")]
    bound = asyncio.Semaphore(_OLLAMA_SHOW_CONCURRENCY)

    async def show(name: str) -> tuple[str, Any]:
        async with bound:
            try:
                return name, await fetch_json("POST", f"{root}/api/show", {"model": name})
            except Exception:
                return name, None  # still listed, its facts unknown

    answers = await asyncio.gather(*(show(n) for n in names if n))
    return parse_ollama(tags, dict(answers))


async def _fetch_llamacpp(base: str, root: str, fetch_json: FetchJson) -> list[ListedModel]:
    listing = await fetch_json("GET", f"{base}/models", None)
    try:
        props = await fetch_json("GET", f"{root}/props", None)
    except Exception:
        props = None  # llama-cpp-python's server and older llamafiles have no /props
    return parse_llamacpp(listing, props)


async def fetch_listing(kind: str, base_url: str, fetch_json: FetchJson) -> list[ListedModel]:
    """Fetch and parse an endpoint's model listing.

    `base_url` is the OpenAI-compatible base the endpoint was registered with. Routes per kind:
    ollama `{root}/api/tags` + `POST {root}/api/show` per model (4 at a time); lmstudio
    `{root}/api/v1/models`, else `/api/v0/models`, else `{base}/models`; llamacpp `{base}/models` and
    `{root}/props` (optional); litellm `{root}/model/info`,
    else `{base}/models`; openwebui `{root}/api/models` (a base ending in `/api` is accepted);
    anthropic `{root}/v1/models`, page after page (its base is the SDK's, with or without `/v1`);
    the rest `{base}/models`. Unknown kind → ValueError naming the known kinds.
    """
    _check_kind(kind)
    base = base_url.strip().rstrip("/")
    root = root_of(base_url)
    if kind == "ollama":
        return await _fetch_ollama(root, fetch_json)
    if kind == "lmstudio":
        return await _first_that_parses(
            fetch_json,
            [
                (f"{root}/api/v1/models", parse_lmstudio),
                (f"{root}/api/v0/models", parse_lmstudio),
                (f"{base}/models", _parse_local_generic),
            ],
        )
    if kind == "llamacpp":
        return await _fetch_llamacpp(base, root, fetch_json)
    if kind == "litellm":
        return await _first_that_parses(
            fetch_json, [(f"{root}/model/info", parse_litellm), (f"{base}/models", parse_openai)]
        )
    if kind == "openwebui":
        payload = await fetch_json("GET", f"{root.removesuffix('/api')}/api/models", None)
        return parse_openwebui(payload)
    if kind == "anthropic":
        return await fetch_anthropic(base, fetch_json)
    return _PARSERS[kind](await fetch_json("GET", f"{base}/models", None))
