"""`benchwarmers init`: the first-run wizard.

It looks for a local Ollama (`/api/tags` on 127.0.0.1:11434) and LM Studio (127.0.0.1:1234) with
short timeouts, offers the provider presets whose key variables are set (or those named with
`--preset`), adds and refreshes what you accept, then proposes a first collection of two or three
free models from different families. Every question has a flag (`--yes` accepts them all), so it
also runs unattended. Running it again adds only what is missing.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import typer

from benchwarmers.bench.names import collection_name
from benchwarmers.bench.presets import PRESETS, preset
from benchwarmers.cli.common import console, with_bench
from benchwarmers.errors import BenchError

if TYPE_CHECKING:
    from benchwarmers.bench.admin.onboarding import Offer
    from benchwarmers.bench.services import Bench

FIRST_DESCRIPTION = "Everyday questions and reviews: a first collection of models from different families."


def _ask(question: str, yes: bool) -> bool:
    if yes:
        console.print(f"{question} yes", markup=False)
        return True
    return typer.confirm(question, default=True)


async def _add(bench: Bench, offer: Offer) -> None:
    from benchwarmers.bench.admin.refresh import describe

    chosen = offer.preset
    await bench.endpoints.add_endpoint(
        chosen.name,
        offer.base_url,
        chosen.kind,
        api_key_env=chosen.key_env_set() or chosen.key_env,
        free_tier=chosen.free_tier,
    )
    console.print(f"added endpoint {chosen.name} ({chosen.kind}, {offer.base_url})", markup=False)
    try:
        summary = await bench.endpoints.refresh_endpoint(chosen.name)
    except BenchError as exc:  # the endpoint stays; `benchwarmers endpoint refresh` tries again
        console.print(f"{chosen.name}: refresh failed: {exc.message}", markup=False)
    else:
        console.print(f"{chosen.name}: {describe(summary)}", markup=False)


async def _first_collection(bench: Bench, name: str, yes: bool) -> None:
    from benchwarmers.bench.admin.onboarding import propose_members

    name = collection_name(name)
    snapshot = await bench.state.snapshot()
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
    await bench.collections.add_collection(
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
    from benchwarmers.bench.admin.onboarding import find_offers, registered_as

    named = [preset(n).name for n in presets or []]
    console.print(f"Benchwarmers: data in {bench.settings.home}", markup=False)
    offers, notes = await find_offers(bench.state, named, {"ollama": ollama_url, "lmstudio": lmstudio_url}, detect)
    for note in notes:
        console.print(note, markup=False)
    if not offers:
        with_keys = ", ".join(f"{p.name} ({p.key_env})" for p in PRESETS.values() if p.key_env)
        console.print(
            f"no local server found and no provider key set. Set one of: {with_keys}; or add any "
            "OpenAI-compatible endpoint with `benchwarmers endpoint add NAME --base-url URL`.",
            markup=False,
        )
    for offer in offers:
        registered = registered_as(await bench.endpoints.list_endpoints(), offer)
        if registered is not None:
            console.print(f"{offer.preset.title}: already an endpoint ({registered})", markup=False)
        elif _ask(f"Add {offer.preset.title} ({offer.why})?", yes):
            await _add(bench, offer)
    if not no_collection:
        await _first_collection(bench, collection, yes)
    console.print(
        "next: `benchwarmers serve`, then point an OpenAI client at "
        f"{bench.state.public_base_url()}/v1 with a collection as the model (`benchwarmers collection list`)",
        markup=False,
    )
