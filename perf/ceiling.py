"""The driver's own ceiling: the driver straight at the fake provider, no gateway between.

It is the most this machine can measure and the floor of every added latency, so every table
carries it: `Ceilings.at` measures it once per concurrency and body (small chat bodies, or the
scaling scenarios' large prompts) and keeps it for the rows that need it.
"""

from __future__ import annotations

from perf.driver import BodyFactory, chat_body
from perf.fleet import Process
from perf.measure import Result, Scenario, counts, run_scenario
from perf.upstream import MODELS

TARGET = "no gateway (driver → fake)"


class Ceilings:
    def __init__(self, fake: Process, fake_port: int, latency: float, *, quick: bool, count: int | None) -> None:
        self.fake, self.fake_port, self.latency = fake, fake_port, latency
        self.quick, self.count = quick, count
        self.found: dict[tuple[int, str], Result] = {}

    async def at(
        self, concurrency: int, *, body: str = "small", make_body: BodyFactory | None = None, count: int | None = None
    ) -> Result:
        """The ceiling at this concurrency for this body (measured on first use)."""
        key = (concurrency, body)
        if key not in self.found:
            measured, warmup = counts(concurrency, self.quick, count or self.count)
            label = "driver → fake provider" if body == "small" else f"driver → fake provider, {body}"
            scenario = Scenario(label, MODELS[0], concurrency, measured, warmup)
            self.found[key] = await run_scenario(
                scenario,
                port=self.fake_port,
                path="/e1/v1/chat/completions",
                make_body=make_body or chat_body(MODELS[0]),
                latency=self.latency,
                target=TARGET if body == "small" else f"{TARGET}, {body}",
                server=None,
                upstream=self.fake,
            )
        return self.found[key]

    async def mark(
        self, result: Result, *, body: str = "small", make_body: BodyFactory | None = None, count: int | None = None
    ) -> None:
        """Put the ceiling at the result's concurrency (and body) into `result.extra['ceiling_rps']`."""
        found = await self.at(result.concurrency, body=body, make_body=make_body, count=count)
        result.extra["ceiling_rps"] = found.panels_per_s

    def all(self) -> list[Result]:
        """Every ceiling measured: small bodies first, then each body in the order first used."""
        bodies = list(dict.fromkeys(["small", *(body for _, body in self.found)]))
        return [self.found[key] for key in sorted(self.found, key=lambda k: (bodies.index(k[1]), k[0]))]
