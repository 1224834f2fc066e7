"""The models.dev catalog in use (the cached live copy, else the bundled snapshot) and the provider an
endpoint serves in it: read by the refresh, discover and the cost report alike."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from benchwarmers.catalog.modelsdev import ModelsDev, load_catalog, provider_for
from benchwarmers.settings import Settings, is_loopback
from benchwarmers.upstream.kinds import endpoint_kind

if TYPE_CHECKING:
    from benchwarmers.bench.snapshot import EndpointView

MODELS_DEV_CACHE = "models-dev.json"


def models_dev_cache(settings: Settings) -> Path:
    return settings.home / MODELS_DEV_CACHE


def catalog_of(settings: Settings) -> ModelsDev:
    """The models.dev catalog in use: the cached live copy when readable, else the bundled snapshot."""
    return load_catalog(models_dev_cache(settings))


def endpoint_provider(catalog: ModelsDev, endpoint: EndpointView) -> str | None:
    """The models.dev provider an endpoint serves: by its kind, else by its base URL's host."""
    if endpoint_kind(endpoint.kind).local:  # it runs only what was pulled onto it
        return None
    found = provider_for(endpoint.kind, endpoint.base_url)
    host = urlsplit(endpoint.base_url).hostname or ""
    if found is None and host and not is_loopback(host):
        found = catalog.resolve_provider(endpoint.base_url)
    return found
