"""`benchwarmers serve` with probes for the tails: event-loop lag, GC pauses, recorder commits.

The real app (`create_app(Settings())`, the same uvicorn configuration and sockets as
`benchwarmers serve`) with, in the same process and nothing changed in src/:

- a loop-lag sampler: a task that sleeps `--lag-interval` (1 ms) and records how late it woke;
  a callback that holds the loop shows up as lag, and for each late wake-up the CPU the loop's
  thread used meanwhile tells our own work (CPU ≈ lag) from a thread that was not running;
- GC pauses, timed with `gc.callbacks` (generation, objects collected);
- the recorder's group commits (`Recorder._commit`: start, duration, batch size), each panel's
  write wait (`Recorder.write`: from enqueue to committed) and each panel id's reservation
  (`Recorder.reserve`, before the seats are called), by wrapping those methods of the class at
  start-up (each skipped, and the dump's `hooks` says so, if the class no longer has it).

Every `--dump-every` seconds one JSON line goes to `--out`: every lag of that interval (and its
percentiles), each lag of at least `--lag-floor` with its time, every GC pause, commit, write and
reservation, and the process's CPU seconds. Times are `time.monotonic()` (CLOCK_MONOTONIC, the same clock as the
driver's), so perf/tails.py lines them up with each request.

    BENCHWARMERS_HOME=... python -m perf.instrumented_serve --bind 127.0.0.1:8123 --out probes.jsonl
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import sys
import time
from pathlib import Path
from typing import Any

import orjson


class Probe:
    def __init__(self, lag_interval: float, lag_floor: float) -> None:
        self.lag_interval = lag_interval
        self.lag_floor = lag_floor
        self.lags: list[float] = []  # this interval's lags, seconds
        # (when it should have woken, lag, CPU the loop's thread used meanwhile) for lags ≥ the floor
        self.late: list[tuple[float, float, float]] = []
        self.gc: list[tuple[float, float, int, int]] = []  # (start, seconds, generation, collected)
        self.commits: list[tuple[float, float, int, int]] = []  # (start, seconds, batch, finished panels)
        self.writes: list[tuple[float, float]] = []  # (start, seconds): one panel's write, enqueue → committed
        self.reserves: list[tuple[float, float]] = []  # (start, seconds): one panel id's reservation, → committed
        self.hooks: list[str] = []
        self._gc_started = 0.0

    def on_gc(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._gc_started = time.monotonic()
        elif self._gc_started:
            now = time.monotonic()
            self.gc.append((self._gc_started, now - self._gc_started, info["generation"], info["collected"]))
            self._gc_started = 0.0

    async def sample_lag(self) -> None:
        """Sleep, and record how late the wake-up came. For a late one, also the CPU the loop's thread
        used in the meantime: about the lag when our own work held the loop, far less when the thread
        was not running (waiting for a core, or blocked in a system call)."""
        interval = self.lag_interval
        while True:
            cpu = time.thread_time()
            started = time.monotonic()
            await asyncio.sleep(interval)
            lag = time.monotonic() - started - interval
            self.lags.append(lag)
            if lag >= self.lag_floor:
                self.late.append((started + interval, lag, time.thread_time() - cpu))

    def line(self) -> bytes:
        lags = sorted(self.lags)

        def at(p: float) -> float | None:
            return round(lags[min(len(lags) - 1, int(p * len(lags)))] * 1000, 3) if lags else None

        times = os.times()
        record = {
            "t": time.monotonic(),
            "cpu_s": times.user + times.system,
            "lag_ms": {"n": len(lags), "p50": at(0.5), "p99": at(0.99), "max": at(1.0)},
            "lags": [round(lag * 1000, 3) for lag in self.lags],
            "late": [[t, round(lag * 1000, 3), round(cpu * 1000, 3)] for t, lag, cpu in self.late],
            "gc": [[t, round(s * 1000, 3), gen, collected] for t, s, gen, collected in self.gc],
            "commits": [[t, round(s * 1000, 3), batch, panels] for t, s, batch, panels in self.commits],
            "writes": [[t, round(s * 1000, 3)] for t, s in self.writes],
            "reserves": [[t, round(s * 1000, 3)] for t, s in self.reserves],
            "hooks": self.hooks,
        }
        self.lags, self.late, self.gc, self.commits, self.writes, self.reserves = [], [], [], [], [], []
        return orjson.dumps(record) + b"\n"

    async def dump(self, out: Path, every: float) -> None:
        with out.open("ab") as file:
            try:
                while True:
                    await asyncio.sleep(every)
                    file.write(self.line())
                    file.flush()
            finally:
                file.write(self.line())
                file.flush()


def hook_recorder(probe: Probe) -> None:
    """Time the recorder's commits and writes by wrapping its methods (the class, from outside)."""
    try:
        from benchwarmers.bench.panels.record import Recorder
    except ImportError as exc:
        probe.hooks.append(f"recorder not hooked: {exc}")
        return
    commit = getattr(Recorder, "_commit", None)
    write = getattr(Recorder, "write", None)
    reserve = getattr(Recorder, "reserve", None)
    if commit is not None:

        async def timed_commit(self: Any, batch: list[Any]) -> Any:
            started = time.monotonic()
            try:
                return await commit(self, batch)
            finally:
                panels = sum(getattr(p, "panel", None) is not None for p in batch)
                probe.commits.append((started, time.monotonic() - started, len(batch), panels))

        Recorder._commit = timed_commit  # type: ignore[method-assign]
        probe.hooks.append("Recorder._commit")
    if write is not None:

        async def timed_write(self: Any, *args: Any, **kwargs: Any) -> Any:
            started = time.monotonic()
            try:
                return await write(self, *args, **kwargs)
            finally:
                probe.writes.append((started, time.monotonic() - started))

        Recorder.write = timed_write  # type: ignore[method-assign]
        probe.hooks.append("Recorder.write")
    if reserve is not None:

        async def timed_reserve(self: Any, *args: Any, **kwargs: Any) -> Any:
            started = time.monotonic()
            try:
                return await reserve(self, *args, **kwargs)
            finally:
                probe.reserves.append((started, time.monotonic() - started))

        Recorder.reserve = timed_reserve  # type: ignore[method-assign]
        probe.hooks.append("Recorder.reserve")
    if not probe.hooks:
        probe.hooks.append("recorder not hooked: Recorder has neither _commit nor write")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bind", required=True, help="HOST:PORT")
    parser.add_argument("--out", type=Path, required=True, help="JSON lines file the probes append to")
    parser.add_argument("--lag-interval", type=float, default=0.001, help="the sampler's sleep in seconds (0.001)")
    parser.add_argument("--lag-floor", type=float, default=0.002, help="record each lag of at least this (0.002 s)")
    parser.add_argument("--dump-every", type=float, default=0.5, help="seconds between dumps (0.5)")
    args = parser.parse_args(argv)

    from benchwarmers.server import listen
    from benchwarmers.server.app import create_app
    from benchwarmers.settings import Settings

    settings = Settings().model_copy(update={"bind": args.bind})
    host, port = settings.host_port()
    sockets = listen.bind(host, port)
    settings.ensure_home()
    probe = Probe(args.lag_interval, args.lag_floor)
    hook_recorder(probe)
    config = listen.uvicorn_config(create_app(settings), settings)
    server = listen.QuietServer(config)  # as `benchwarmers serve` runs it

    async def serve() -> None:
        gc.callbacks.append(probe.on_gc)
        tasks = [asyncio.create_task(probe.sample_lag()), asyncio.create_task(probe.dump(args.out, args.dump_every))]
        try:
            await server.serve(sockets=sockets)
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    print(f"instrumented bench on http://{host}:{port}, probes to {args.out} ({', '.join(probe.hooks)})", flush=True)
    try:
        with asyncio.Runner(loop_factory=config.get_loop_factory()) as runner:
            runner.run(serve())
    except KeyboardInterrupt:
        pass
    finally:
        for sock in sockets:
            sock.close()
    if not server.started:
        sys.exit(3)


if __name__ == "__main__":
    main()
