"""Memory under a burst of large bodies: 100 concurrent 19 MB image requests at `benchwarmers serve`.

    python -m perf.bodies                       # 100 × 19 MB at the default body memory budget
    python -m perf.bodies --budget-mib 128      # BENCHWARMERS_BODY_MEMORY_BUDGET for the server
    python -m perf.bodies --count 50 --mb 10

A fresh bench (its own home and process) over the fake provider (perf/upstream.py, one vision
member, no explorers: `bench/solo`) is warmed with one small panel; its RSS then is the idle
figure. Then `--count` connections each send one chat request carrying a `--mb` MB image as a
data URL (random bytes, base64: a realistic large prompt), all at once, while this process asks
`/healthz` every 50 ms on a connection of its own and samples the server's RSS every 20 ms.
Printed: the statuses, the burst's wall time, idle RSS, the peak (VmHWM, rewound before the
burst, and the highest sample), RSS once the burst is over, and /healthz's latencies meanwhile.
Nothing here is part of the test suite; the figures go in docs/BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import os
import select
import shutil
import socket
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import orjson

from perf.fleet import Bench, Process, start_fake
from perf.measure import percentile

MB = 1_000_000
MIB = 1024 * 1024
SLICE = 256 * 1024  # what the driver writes at a time: its own buffers stay small


def image_request(model: str, size: int) -> tuple[bytes, bytes, bytes]:
    """A chat request of `size` bytes as (head, data URL, tail): the URL is shared by every request."""
    head = b'{"model":' + orjson.dumps(model) + b',"max_tokens":64,"messages":[{"role":"user","content":['
    head += b'{"type":"text","text":"What is in this picture?"},{"type":"image_url","image_url":{"url":"'
    tail = b'"}}]}]}'
    prefix = b"data:image/jpeg;base64,"
    raw = os.urandom((size - len(head) - len(tail) - len(prefix)) * 3 // 4)
    return head, prefix + base64.b64encode(raw), tail


async def post(port: int, pieces: tuple[bytes, ...]) -> tuple[int, bytes]:
    """One POST /v1/chat/completions over its own connection; (status, body)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        length = sum(len(piece) for piece in pieces)
        writer.write(
            b"POST /v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n"
            b"connection: close\r\ncontent-length: %d\r\n\r\n" % length
        )
        for piece in pieces:
            view = memoryview(piece)
            for start in range(0, len(view), SLICE):
                writer.write(view[start : start + SLICE])
                await writer.drain()
        reply = await reader.read()  # connection: close
    except ConnectionError:
        return 0, b""
    finally:
        writer.close()
        with contextlib.suppress(ConnectionError):
            await writer.wait_closed()
    head, _, body = reply.partition(b"\r\n\r\n")
    return (int(head.split(b" ", 2)[1]) if head else 0), body


def poll_health(port: int) -> None:
    """`--poll-health PORT`: ask /healthz every 50 ms until stdin has a line, then print each latency.

    It runs in a process of its own: the driver's event loop is busy sending the bodies, and its
    lateness would be counted as the server's."""
    answered: list[float] = []
    while not select.select([sys.stdin], [], [], 0.05)[0]:
        started = time.perf_counter()
        with socket.create_connection(("127.0.0.1", port)) as sock:
            sock.sendall(b"GET /healthz HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\n\r\n")
            reply = b""
            while chunk := sock.recv(65536):
                reply += chunk
        if not reply.startswith(b"HTTP/1.1 200 "):
            raise RuntimeError(f"/healthz answered {reply[:100]!r}")
        answered.append(time.perf_counter() - started)
    print(" ".join(f"{seconds:.4f}" for seconds in answered))


async def burst(port: int, process: Process, pieces: tuple[bytes, ...], count: int) -> dict[str, object]:
    done = asyncio.Event()
    samples: list[int] = []

    async def sample_rss() -> None:
        while not done.is_set():
            samples.append(process.usage().rss)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(done.wait(), 0.02)

    poller = await asyncio.create_subprocess_exec(
        sys.executable,
        __file__,
        "--poll-health",
        str(port),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
    )
    sampler = asyncio.ensure_future(sample_rss())
    started = time.perf_counter()
    replies = await asyncio.gather(*(post(port, pieces) for _ in range(count)))
    wall = time.perf_counter() - started
    done.set()
    await sampler
    output, _ = await poller.communicate(b"stop\n")
    health = [float(value) for value in output.split()]
    statuses = Counter(status for status, _ in replies)
    refusals = Counter(
        orjson.loads(body)["error"]["code"] for status, body in replies if status != 200 and body.startswith(b"{")
    )
    return {"statuses": statuses, "refusals": refusals, "wall": wall, "health": health, "samples": samples}


async def main_async(args: argparse.Namespace) -> None:
    logs = Path(tempfile.mkdtemp(prefix="bench-bodies-"))
    fake, fake_port = start_fake(args.latency, 1, logs)
    bench = Bench(logs)
    try:
        if args.budget_mib is not None:
            bench.env["BENCHWARMERS_BODY_MEMORY_BUDGET"] = str(args.budget_mib * MIB)
        bench.configure(fake_port, 1)
        probes = logs / "probes.jsonl"
        serve = [sys.executable, str(Path(__file__).with_name("instrumented_serve.py")), "--out", str(probes)]
        port = bench.start(serve if args.probe else None)
        assert bench.process is not None
        small = (b'{"model":"bench/solo","messages":[{"role":"user","content":"Name one prime number."}]}',)
        for _ in range(3):
            status, body = await post(port, small)
            assert status == 200, body[:300]
        await asyncio.sleep(1)
        idle = bench.process.usage().rss
        rewound = bench.process.reset_peak()
        pieces = image_request("bench/solo", int(args.mb * MB))
        size = sum(len(piece) for piece in pieces)
        cpu = (bench.process.usage().cpu, fake.usage().cpu)
        found = await burst(port, bench.process, pieces, args.count)
        right_after = bench.process.usage()
        cpu = (right_after.cpu - cpu[0], fake.usage().cpu - cpu[1])
        await asyncio.sleep(args.settle)
        after = bench.process.usage().rss
        health = found["health"]
        samples = found["samples"]
        assert isinstance(health, list) and isinstance(samples, list)
        print(
            f"{args.count} concurrent bodies of {size / MB:.1f} MB "
            f"(bench/solo: 1 vision seat, the fake provider at {args.latency} s)"
        )
        print(f"body memory budget: {'the default' if args.budget_mib is None else f'{args.budget_mib} MiB'}")
        print(f"statuses: {dict(found['statuses'])}  refusals: {dict(found['refusals'])}")
        print(
            f"burst wall time: {found['wall']:.1f} s; CPU: the bench {cpu[0]:.1f} s, the fake provider {cpu[1]:.1f} s"
        )
        print(f"idle RSS: {idle / MB:.0f} MB")
        peak = max([*samples, right_after.rss])
        hwm = f"{right_after.peak / MB:.0f} MB (VmHWM)" if rewound else "n/a (VmHWM not rewound)"
        print(f"peak RSS: {hwm}; highest sample {peak / MB:.0f} MB; above idle {(peak - idle) / MB:.0f} MB")
        print(f"RSS right after the burst: {right_after.rss / MB:.0f} MB; {args.settle:g} s later: {after / MB:.0f} MB")
        p50, p99 = percentile(health, 50), percentile(health, 99)
        print(
            f"/healthz during the burst: {len(health)} answered, p50 {p50 * 1000 if p50 else 0:.1f} ms, "
            f"p99 {p99 * 1000 if p99 else 0:.1f} ms, max {max(health, default=0) * 1000:.1f} ms"
        )
    finally:
        bench.stop()
        fake.stop()
        if not args.keep:
            bench.remove()
            shutil.rmtree(logs, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--count", type=int, default=100, help="bodies sent at once (100)")
    parser.add_argument("--mb", type=float, default=19.0, help="each body's size in MB (19)")
    parser.add_argument("--budget-mib", type=int, default=None, help="the server's body memory budget (its default)")
    parser.add_argument("--latency", type=float, default=0.05, help="the fake provider's latency in seconds (0.05)")
    parser.add_argument("--settle", type=float, default=3.0, help="seconds after the burst before RSS is read again")
    parser.add_argument("--keep", action="store_true", help="keep the bench home and logs")
    parser.add_argument("--probe", action="store_true", help="serve with perf/instrumented_serve.py (loop lag, GC)")
    parser.add_argument("--poll-health", type=int, metavar="PORT", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.poll_health:
        poll_health(args.poll_health)
    else:
        asyncio.run(main_async(args))


if __name__ == "__main__":
    main()
