"""`benchwarmers init`: the first-run wizard.

It looks for a local Ollama (`/api/tags` on 127.0.0.1:11434) and LM Studio (127.0.0.1:1234) with
short timeouts, offers the provider presets whose key variables are set (or those named with
`--preset`), adds and refreshes what you accept, then proposes a first collection of two or three
free models from different families. Every question has a flag (`--yes` accepts them all), so it
also runs unattended. Running it again adds only what is missing.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass

import typer

from benchwarmers.bench.admin.presets import PRESETS, Preset, preset
from benchwarmers.bench.core import Bench
from benchwarmers.bench.snapshot import ModelView
from benchwarmers.bench.upkeep.refresh import describe, refresh_endpoint
from benchwarmers.cli.common import console, with_bench
from benchwarmers.errors import BenchError
from benchwarmers.upstream.client import EndpointRef
from benchwarmers.upstream.listings import fetch_listing, root_of

DETECT_TIMEOUT = 2.0  # seconds per request: a local server answers at once or is not there
PROPOSED_SIZE = 3
FIRST_DESCRIPTION = "Everyday questions and reviews: a first collection of models from different families."


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


async def _detect(bench: Bench, chosen: Preset, base_url: str) -> int | None:
    """How many chat models a local server lists, or None when nothing answers there."""
    ref = EndpointRef(name=f"init-{chosen.name}", base_url=base_url, api_key=None, kind=chosen.kind)

    async def fetch_json(method: str, url: str, body: object) -> object:
        return await bench.upstream.request_json(ref, method, url, json=body, timeout=DETECT_TIMEOUT)

    try:
        return len(await fetch_listing(chosen.kind, base_url, fetch_json))
    except Exception:
        return None
    finally:
        bench.upstream.forget(ref.name)


def _ask(question: str, yes: bool) -> bool:
    if yes:
        console.print(f"{question} yes", markup=False)
        return True
    return typer.confirm(question, default=True)


async def _offers(bench: Bench, named: list[str], local_urls: dict[str, str], detect: bool) -> list[Offer]:
    offers: list[Offer] = []
    for name, url in local_urls.items():
        local = PRESETS[name]
        base = root_of(url) + "/v1"
        if name in named:
            offers.append(Offer(local, base, "asked for"))
        elif detect:
            count = await _detect(bench, local, base)
            if count is None:
                console.print(f"{local.title}: nothing answers at {root_of(url)}", markup=False)
            else:
                offers.append(Offer(local, base, f"found at {root_of(url)} with {count} models"))
    hosted = [preset(n) for n in named if not preset(n).local] if named else [
        p for p in PRESETS.values() if not p.local and p.key_env_set()
    ]  # fmt: skip
    for chosen in hosted:
        try:
            base = chosen.resolved_base_url()
        except BenchError as exc:
            console.print(f"{chosen.title}: skipped: {exc.message}", markup=False)
            continue
        found = chosen.key_env_set()
        why = f"{found} is set" if found else f"asked for; set {chosen.key_env} before it is called"
        offers.append(Offer(chosen, base, why))
    return offers


async def _registered(bench: Bench, offer: Offer) -> str | None:
    """The endpoint that already is this offer (same name or same base URL), if any."""
    for endpoint in await bench.admin.list_endpoints():
        if endpoint["name"] == offer.preset.name or endpoint["base_url"] == offer.base_url.rstrip("/"):
            return str(endpoint["name"])
    return None


async def _add(bench: Bench, offer: Offer) -> None:
    chosen = offer.preset
    await bench.admin.add_endpoint(
        chosen.name,
        offer.base_url,
        chosen.kind,
        api_key_env=chosen.key_env_set() or chosen.key_env,
        free_tier=chosen.free_tier,
    )
    console.print(f"added endpoint {chosen.name} ({chosen.kind}, {offer.base_url})", markup=False)
    try:
        summary = await refresh_endpoint(bench, chosen.name)
    except Exception as exc:  # the endpoint stays; `benchwarmers endpoint refresh` tries again
        console.print(f"{chosen.name}: refresh failed: {exc}", markup=False)
    else:
        console.print(f"{chosen.name}: {describe(summary)}", markup=False)


async def _first_collection(bench: Bench, name: str, yes: bool) -> None:
    snapshot = await bench.snapshot()
    if name in snapshot.collections:
        console.print(f"collection bench/{name} exists already", markup=False)
        return
    members = propose_members(snapshot.models.values(), time.time())
    if not members:
        console.print(
            "not enough models from different families for a first collection yet; add an endpoint "
            "(`benchwarmers endpoint add NAME --preset PRESET`) and run init again",
            markup=False,
        )
        return
    if not _ask(f"Create bench/{name} with {', '.join(members)}?", yes):
        return
    await bench.admin.add_collection(
        {"name": name, "description": FIRST_DESCRIPTION, "tags": ["general"], "members": members}
    )
    console.print(f"created collection bench/{name}: {', '.join(members)}", markup=False)


@with_bench
async def init(
    bench: Bench,
    yes: bool = typer.Option(False, "--yes", "-y", help="accept every proposal without asking"),
    presets: list[str] = typer.Option(
        None, "--preset", help=f"add this preset (repeatable): {', '.join(PRESETS)}; default: those with keys set"
    ),
    ollama_url: str = typer.Option(PRESETS["ollama"].base_url, "--ollama-url", help="where to look for Ollama"),
    lmstudio_url: str = typer.Option(
        PRESETS["lmstudio"].base_url, "--lmstudio-url", help="where to look for LM Studio"
    ),
    detect: bool = typer.Option(True, "--detect/--no-detect", help="look for local Ollama and LM Studio"),
    collection: str = typer.Option("general", "--collection", help="name of the first collection"),
    no_collection: bool = typer.Option(False, "--no-collection", help="do not propose a first collection"),
) -> None:
    """First run: find local servers and provider keys, add them, and propose a first collection."""
    named = [preset(n).name for n in presets or []]
    console.print(f"Benchwarmers: data in {bench.settings.home}", markup=False)
    offers = await _offers(bench, named, {"ollama": ollama_url, "lmstudio": lmstudio_url}, detect)
    if not offers:
        with_keys = ", ".join(f"{p.name} ({p.key_env})" for p in PRESETS.values() if p.key_env)
        console.print(
            f"no local server found and no provider key set. Set one of: {with_keys}; or add any "
            "OpenAI-compatible endpoint with `benchwarmers endpoint add NAME --base-url URL`.",
            markup=False,
        )
    for offer in offers:
        registered = await _registered(bench, offer)
        if registered is not None:
            console.print(f"{offer.preset.title}: already an endpoint ({registered})", markup=False)
        elif _ask(f"Add {offer.preset.title} ({offer.why})?", yes):
            await _add(bench, offer)
    if not no_collection:
        await _first_collection(bench, collection, yes)
    console.print(
        "next: `benchwarmers serve`, then point an OpenAI client at "
        f"{bench.public_base_url()}/v1 with a collection as the model (`benchwarmers collection list`)",
        markup=False,
    )
