"""What a seat call costs the bench in each wire format: chat completions, the Responses API and
Anthropic's Messages API, through the same pool against the fake provider (in its own process, so
its work is not counted). Prints CPU microseconds per call, the mapping both ways included.

    python -m perf.seat_formats --calls 2000
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import sys
import time
from pathlib import Path

import httpx2
import orjson

from benchwarmers.upstream.client import EndpointRef, UpstreamPool
from tests.support.benchserver import free_port

ROOT = Path(__file__).resolve().parent.parent
PROMPT = "Review this function and name every defect with its line:\n" + "def mean(xs): return sum(xs) / len(xs)\n" * 40


def body(model: str) -> bytes:
    messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": PROMPT}]
    return orjson.dumps({"model": model, "stream": False, "temperature": 0.2, "messages": messages})


async def measure(root: str, calls: int) -> dict[str, float]:
    pool = UpstreamPool()
    refs = {
        "chat": (EndpointRef("chat", f"{root}/v1", "sk-perf", "openai"), pool.chat),
        "responses": (EndpointRef("responses", f"{root}/v1", "sk-perf", "responses"), pool.respond),
        "anthropic": (EndpointRef("anthropic", f"{root}/anthropic", "sk-perf", "anthropic"), pool.message),
    }
    found: dict[str, float] = {}
    try:
        for name, (ref, call) in refs.items():
            for _ in range(50):  # warm: connections open, code paths hot
                await call(ref, body("m"), 10)
            started = time.process_time()
            for _ in range(calls):
                await call(ref, body("m"), 10)
            found[name] = (time.process_time() - started) / calls * 1e6
    finally:
        await pool.aclose()
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000)
    args = parser.parse_args()
    port = free_port()
    command = [sys.executable, "-m", "tests.fakes.upstream", "--port", str(port), "--latency", "0"]
    fake = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL)
    root = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                httpx2.get(f"{root}/v1/models", timeout=1)
                break
            except httpx2.TransportError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
        figures = asyncio.run(measure(root, args.calls))
    finally:
        fake.terminate()
        fake.wait(timeout=10)
    print(f"CPU per seat call, {args.calls} sequential calls each (the bench's process only):")
    for name, micros in figures.items():
        print(f"  {name:<10} {micros:7.1f} µs")


if __name__ == "__main__":
    main()
