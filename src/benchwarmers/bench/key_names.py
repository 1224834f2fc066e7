"""Which environment variables an endpoint may name as its key (`api_key_env`).

Refreshing an endpoint and seating its models send that variable's value as a bearer token to the
endpoint's base URL. Without a rule, anyone who can add an endpoint could name any variable of the
server's environment and have it sent to a URL of their choosing. So only names that are provider
keys by their form are read, plus what the user allows by name:

- every preset's key variable (`OPENROUTER_API_KEY`, ..., `GITHUB_TOKEN`);
- any name ending in `_API_KEY` or `_API_TOKEN` (any case);
- the names listed in `BENCHWARMERS_KEY_ENV_ALLOW` (comma-separated, exact);
- never a name starting with `BENCHWARMERS_` or `BENCH_`: those are the bench's own settings, the
  admin token among them, and no allow-list entry makes them a provider key.
"""

from __future__ import annotations

from collections.abc import Iterable

from benchwarmers.bench.presets import PRESETS

ALLOW_VARIABLE = "BENCHWARMERS_KEY_ENV_ALLOW"
PROVIDER_KEY_SUFFIXES = ("_API_KEY", "_API_TOKEN")
OWN_PREFIXES = ("BENCHWARMERS_", "BENCH_")
PRESET_KEY_NAMES = frozenset(name for preset in PRESETS.values() for name in preset.key_envs)


def key_env_refusal(name: str, allowed: Iterable[str] = ()) -> str | None:
    """Why `name` may not be read as a provider key, or None when it may."""
    upper = name.upper()
    if upper.startswith(OWN_PREFIXES):
        return (
            f"api_key_env {name!r} is one of the bench's own settings (BENCHWARMERS_* and BENCH_* are never "
            "sent to a provider); name the variable that holds the provider's key, or give the key with --api-key"
        )
    if name in PRESET_KEY_NAMES or upper.endswith(PROVIDER_KEY_SUFFIXES) or name in frozenset(allowed):
        return None
    return (
        f"api_key_env {name!r} is not read as a provider key: the bench reads only names ending in _API_KEY or "
        f"_API_TOKEN, the presets' key variables (such as GITHUB_TOKEN) and the names listed in {ALLOW_VARIABLE}. "
        f"To use {name}, add it to {ALLOW_VARIABLE} (comma-separated) in the environment the bench runs in, "
        "or give the key with --api-key"
    )
