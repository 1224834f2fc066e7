"""Onboarding: what a first run can offer — local servers that answer (Ollama, LM Studio), the
provider presets whose key variables are set — and a first collection from what was found. The CLI's
`init` asks about each offer; the dashboard can show the same offers."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from benchwarmers.bench.presets import PRESETS, Preset, preset
from benchwarmers.bench.snapshot import ModelView
from benchwarmers.bench.state import BenchState
from benchwarmers.errors import BenchError
from benchwarmers.upstream.chat_wire import EndpointRef
from benchwarmers.upstream.listings import fetch_listing, root_of

DETECT_TIMEOUT = 2.0  # seconds per request: a local server answers at once or is not there
PROPOSED_SIZE = 3


@dataclass(frozen=True)
class Offer:
    preset: Preset
    base_url: str
    why: str  # "found at ...", "GROQ_API_KEY is set", "asked for"


def propose_members(models: Iterable[ModelView], now: float, size: int = PROPOSED_SIZE) -> list[str]:
    """Two or three models for a first collection: usable, free if any are, one per family, largest
    known window first. Fewer than two families → no proposal (a panel of one is no bench)."""
    usable = [m for m in models if m.enabled and not m.retiring and not m.cooling(now)]
    pool = [m for m in usable if m.free] or usable
    chosen: list[str] = []
    families: set[str] = set()
    for model in sorted(pool, key=lambda m: (-(m.window or 0), m.alias)):
        family = (model.family or model.alias).casefold()
        if family not in families:
            chosen.append(model.alias)
            families.add(family)
        if len(chosen) == size:
            break
    return chosen if len(chosen) >= 2 else []


async def detect_local(state: BenchState, chosen: Preset, base_url: str) -> int | None:
    """How many chat models a local server lists, or None when nothing answers there."""
    ref = EndpointRef(name=f"init-{chosen.name}", base_url=base_url, api_key=None, kind=chosen.kind)

    async def fetch_json(method: str, url: str, body: object) -> object:
        return await state.upstream.request_json(ref, method, url, json=body, timeout=DETECT_TIMEOUT)

    try:
        return len(await fetch_listing(chosen.kind, base_url, fetch_json))
    except Exception:  # whatever answers there, it is not a listing we can use
        return None
    finally:
        state.upstream.forget(ref.name)


async def find_offers(
    state: BenchState, named: list[str], local_urls: dict[str, str], detect: bool
) -> tuple[list[Offer], list[str]]:
    """What can be added, and a note for each thing looked for and not offered."""
    offers: list[Offer] = []
    notes: list[str] = []
    for name, url in local_urls.items():
        local = PRESETS[name]
        base = root_of(url) + "/v1"
        if name in named:
            offers.append(Offer(local, base, "asked for"))
        elif detect:
            count = await detect_local(state, local, base)
            if count is None:
                notes.append(f"{local.title}: nothing answers at {root_of(url)}")
            else:
                offers.append(Offer(local, base, f"found at {root_of(url)} with {count} models"))
    hosted = [preset(n) for n in named if not preset(n).local] if named else [
        p for p in PRESETS.values() if not p.local and p.key_env_set()
    ]  # fmt: skip
    for chosen in hosted:
        try:
            base = chosen.resolved_base_url()
        except BenchError as exc:
            notes.append(f"{chosen.title}: skipped: {exc.message}")
            continue
        found = chosen.key_env_set()
        why = f"{found} is set" if found else "asked for"
        if not found and chosen.key_env:
            why += f"; set {chosen.key_env} before it is called"
        offers.append(Offer(chosen, base, why))
    return offers, notes


def registered_as(endpoints: Iterable[dict[str, object]], offer: Offer) -> str | None:
    """The endpoint that already is this offer (same name or same base URL), if any."""
    for endpoint in endpoints:
        if endpoint["name"] == offer.preset.name or endpoint["base_url"] == offer.base_url.rstrip("/"):
            return str(endpoint["name"])
    return None
