"""How the bench's cost grows with work: seats per panel, and prompt size.

Seats: collections of 1, 3, 5 and 8 members and no explorers (`seats-N`), member i on model i of
the roster, so with the default 8 endpoints every seat goes to its own endpoint and model (with
`--endpoints` below N, members share endpoints and their in-flight caps). Prompt size: the
5-member collection with a user message of about 1 KB, 100 KB and 1 MB of random words, so the
panel's request is that big and each of its seats sends it upstream.

Each row carries the driver's own ceiling at its concurrency and for its body
(`driver ceiling req/s`), so a row whose rate nears the ceiling says the driver, not the bench,
is the limit. Large prompts run fewer requests (about `--scaling-megabytes` of prompts a row).
"""

from __future__ import annotations

import argparse
import random
import string
from typing import Any

from perf.ceiling import Ceilings
from perf.driver import chat_body
from perf.fleet import Bench, Process, alias
from perf.measure import MB, Result, Scenario, counts, profile_path, run_scenario
from perf.upstream import MODELS

SEATS = (1, 3, 5, 8)
PROMPTS = (1_000, 100_000, 1_000_000)
PROMPT_SEATS = 5


def size_label(size: int) -> str:
    return f"{size // 1_000_000} MB" if size >= 1_000_000 else f"{size // 1_000} KB"


def prompt_text(size: int, seed: int = 19) -> str:
    """About `size` characters of random lower-case words (nothing a cache or compressor could fold)."""
    rng = random.Random(seed)
    words: list[str] = []
    length = 0
    while length < size:
        word = "".join(rng.choices(string.ascii_lowercase, k=rng.randint(2, 9)))
        words.append(word)
        length += len(word) + 1
    return " ".join(words)[:size]


def configure(bench: Bench, endpoints: int) -> dict[int, str]:
    """The `seats-N` collections; their model names by seat count."""
    names = {}
    for seats in sorted({*SEATS, PROMPT_SEATS}):
        if seats > len(MODELS):
            raise ValueError(f"{seats} seats need {seats} roster models; the fake lists {len(MODELS)}")
        names[seats] = bench.add_collection(f"seats-{seats}", [alias(i, endpoints) for i in range(seats)])
    return names


def _count(args: argparse.Namespace, concurrency: int, size: int) -> tuple[int, int]:
    measured, warmup = counts(concurrency, args.quick, args.count)
    if size >= 100_000:
        megabytes = args.scaling_megabytes or (60.0 if args.quick else 200.0)
        budget = int(megabytes * MB / size)
        measured = max(2 * concurrency, min(measured, budget))
        warmup = min(warmup, max(concurrency, 10))
    return measured, warmup


async def _one(
    args: argparse.Namespace,
    bench: Bench,
    fake: Process,
    ceilings: Ceilings,
    label: str,
    model: str,
    seats: int,
    concurrency: int,
    stream: bool,
    size: int | None,
) -> Result:
    """One row; `size` None is the small default chat prompt."""
    assert bench.process is not None
    measured, warmup = _count(args, concurrency, size or 0)
    text = prompt_text(size) if size else None
    make = chat_body(model, stream=stream, **({"text": text} if text else {}))
    scenario = Scenario(label, model, concurrency, measured, warmup, stream, seats)
    result = await run_scenario(
        scenario,
        port=bench.port,
        path="/v1/chat/completions",
        make_body=make,
        latency=args.latency,
        target="benchwarmers",
        server=bench.process,
        upstream=fake,
        profile=profile_path(args, scenario, f"seats{seats}-{size_label(size) if size else 'small'}".replace(" ", "")),
    )
    result.extra["body_kb"] = round(len(make(0)) / 1000, 1)
    if result.server_cpu_ms_per_panel is not None:
        result.extra["cpu_ms_per_seat"] = round(result.server_cpu_ms_per_panel / seats, 3)
    if size and text:
        fake_body = chat_body(MODELS[0], text=text)
        await ceilings.mark(result, body=f"{size_label(size)} prompt", make_body=fake_body, count=measured)
    else:
        await ceilings.mark(result)
    return result


async def scaling(
    args: argparse.Namespace, bench: Bench, fake: Process, ceilings: Ceilings, names: dict[int, str], progress: Any
) -> dict[str, list[Result]]:
    """Rows against seats per panel (small prompt) and against prompt size (5 seats)."""
    by_seats, by_prompt = [], []
    for stream in [mode == "stream" for mode in args.scaling_modes]:
        for concurrency in args.scaling_concurrency:
            for seats in SEATS:
                label = f"{seats} seat{'s' if seats > 1 else ''} (members, 0 explorers)"
                row = await _one(args, bench, fake, ceilings, label, names[seats], seats, concurrency, stream, None)
                progress(row)
                by_seats.append(row)
            for size in PROMPTS:
                label = f"{size_label(size)} prompt, {PROMPT_SEATS} seats"
                model = names[PROMPT_SEATS]
                row = await _one(args, bench, fake, ceilings, label, model, PROMPT_SEATS, concurrency, stream, size)
                progress(row)
                by_prompt.append(row)
    return {"seats": by_seats, "prompts": by_prompt}
