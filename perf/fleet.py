"""The processes of a load run: the fake provider, the gateway under test, and what they cost.

Each runs in its own process so the measured one is the gateway alone: its CPU comes from
/proc/PID/stat (utime + stime), its memory from /proc/PID/status (VmRSS now, VmHWM the peak,
which `reset_peak` rewinds through /proc/PID/clear_refs so one scenario's peak is its own).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from perf.upstream import MODELS

PERF = Path(__file__).resolve().parent
ROOT = PERF.parent
CLOCK_TICK = os.sysconf("SC_CLK_TCK")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for_port(port: int, process: subprocess.Popen[bytes], what: str, deadline: float = 60.0) -> None:
    """Poll until something accepts on 127.0.0.1:port; fail early if the process died."""
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        if process.poll() is not None:
            raise RuntimeError(f"{what} exited with code {process.returncode} before listening on {port}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return
        time.sleep(0.05)
    raise RuntimeError(f"{what} did not listen on {port} within {deadline:.0f} s")


def http_get(port: int, path: str, timeout: float = 5.0) -> tuple[int, bytes]:
    """A one-off GET (for health checks), without pulling an HTTP library into the driver."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(f"GET {path} HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\n\r\n".encode())
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split(b" ", 2)[1]), body


@dataclass
class Usage:
    cpu: float  # seconds, user + system
    rss: int  # bytes now
    peak: int  # bytes, VmHWM
    preempted: int = 0  # times its main thread was preempted (nonvoluntary context switches)


def usage_of(pid: int) -> Usage:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    cpu = (int(fields[11]) + int(fields[12])) / CLOCK_TICK  # utime, stime: fields 14 and 15 of stat(5)
    status = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("VmRSS", "VmHWM", "nonvoluntary_ctxt_switches"):
            status[name] = int(value.split()[0])
    return Usage(
        cpu=cpu,
        rss=status.get("VmRSS", 0) * 1024,
        peak=status.get("VmHWM", 0) * 1024,
        preempted=status.get("nonvoluntary_ctxt_switches", 0),
    )


def run_queue_wait(pid: int) -> float:
    """Seconds the process's main thread has waited for a core (/proc/PID/task/PID/schedstat, field 2)."""
    try:
        return int(Path(f"/proc/{pid}/task/{pid}/schedstat").read_text().split()[1]) / 1e9
    except (OSError, IndexError, ValueError):
        return 0.0


@dataclass(frozen=True)
class MachineTimes:
    """The whole machine's CPU time since boot (all cores, in jiffies), from /proc/stat."""

    busy: int  # everything but idle and iowait
    total: int
    interrupts: int  # irq + softirq: mostly the kernel carrying our own loopback traffic, no process's
    stolen: int  # the host ran something else on this machine's virtual cores


def machine_times() -> MachineTimes:
    user, nice, system, idle, iowait, irq, softirq, steal = (
        int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:9]
    )
    total = user + nice + system + idle + iowait + irq + softirq + steal
    return MachineTimes(busy=total - idle - iowait, total=total, interrupts=irq + softirq, stolen=steal)


def machine_busy() -> float:
    """Seconds of CPU that processes used on the whole machine (all cores): user + nice + system +
    steal, interrupt time left out (it belongs to no process)."""
    times = machine_times()
    return (times.busy - times.interrupts) / CLOCK_TICK


class Process:
    """A child process we started, stopped by its own pid (never by name)."""

    def __init__(self, name: str, argv: list[str], *, env: dict[str, str] | None = None, log: Path) -> None:
        self.name = name
        self.log = log
        self._log_file = log.open("ab")
        self.popen = subprocess.Popen(
            argv, cwd=ROOT, env=env, stdout=self._log_file, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
        )

    @property
    def pid(self) -> int:
        return self.popen.pid

    def usage(self) -> Usage:
        return usage_of(self.pid)

    def reset_peak(self) -> bool:
        """Rewind VmHWM to the current RSS (Linux ≥ 4.0); False when the kernel refuses."""
        try:
            Path(f"/proc/{self.pid}/clear_refs").write_text("5")
        except OSError:
            return False
        return True

    def stop(self) -> None:
        if self.popen.poll() is None:
            self.popen.send_signal(signal.SIGTERM)
            try:
                self.popen.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.popen.kill()
                self.popen.wait(timeout=5)
        self._log_file.close()


def python_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    return env


def start_fake(latency: float, endpoints: int, logs: Path, jitter: float = 0.0) -> tuple[Process, int]:
    port = free_port()
    argv = [
        sys.executable,
        "-m",
        "perf.upstream",
        "--port",
        str(port),
        "--latency",
        str(latency),
        "--endpoints",
        str(endpoints),
        "--jitter",
        str(jitter),
    ]
    fake = Process("fake upstream", argv, env=python_env(), log=logs / "upstream.log")
    wait_for_port(port, fake.popen, "fake upstream")
    return fake, port


def alias(index: int, endpoints: int) -> str:
    """The bench alias of MODELS[index] when the roster is spread over `endpoints` (see upstream.py)."""
    return f"e{index % endpoints + 1}/{MODELS[index]}"


class Bench:
    """A bench home configured through the CLI, and `benchwarmers serve` over it in its own process."""

    def __init__(self, logs: Path, home: Path | None = None) -> None:
        self.home = home or Path(tempfile.mkdtemp(prefix="bench-perf-"))
        self.logs = logs
        self.env = {**os.environ, "BENCHWARMERS_HOME": str(self.home)}
        for name in ("BENCHWARMERS_DATABASE_URL", "BENCHWARMERS_ADMIN_TOKEN", "BENCHWARMERS_REQUIRE_KEYS"):
            self.env.pop(name, None)
        self.executable = shutil.which("benchwarmers", path=str(Path(sys.executable).parent)) or "benchwarmers"
        self.process: Process | None = None
        self.port = 0

    def cli(self, *args: str) -> str:
        done = subprocess.run(
            [self.executable, *args], cwd=ROOT, env=self.env, capture_output=True, text=True, check=False
        )
        if done.returncode != 0:
            raise RuntimeError(f"benchwarmers {' '.join(args)} failed: {done.stderr.strip() or done.stdout.strip()}")
        return done.stdout

    def configure(self, fake_port: int, endpoints: int) -> dict[str, str]:
        """Endpoints over the fake, and the two collections the scenarios call; returns their model names."""
        for endpoint in range(1, endpoints + 1):
            base = f"http://127.0.0.1:{fake_port}/e{endpoint}/v1"
            self.cli("endpoint", "add", f"e{endpoint}", "--base-url", base, "--kind", "openai", "--free-tier")
        self.cli("endpoint", "refresh")
        self.cli(
            "collection",
            "add",
            "solo",
            "--member",
            alias(0, endpoints),
            "--max-explorers",
            "0",
            "--description",
            "perf: one member, no explorers",
        )
        members = [arg for i in range(3) for arg in ("--member", alias(i, endpoints))]
        self.cli("collection", "add", "five", *members, "--description", "perf: three members and two explorers")
        return {"solo": "bench/solo", "five": "bench/five"}

    def add_collection(self, name: str, members: list[str], *, explorers: int = 0) -> str:
        """A collection of exactly these members (and at most `explorers` explorer seats); its model name."""
        seats = len(members) + explorers
        self.cli(
            "collection",
            "add",
            name,
            *(arg for member in members for arg in ("--member", member)),
            "--max-explorers",
            str(explorers),
            "--max-calls",
            str(seats),
            "--description",
            f"perf: {len(members)} members, {explorers} explorers",
        )
        return f"bench/{name}"

    def start(self, serve: list[str] | None = None) -> int:
        """`benchwarmers serve` (or `serve`, an argv that takes `--bind` after it) on a free port."""
        self.port = free_port()
        argv = [*(serve or [self.executable, "serve"]), "--bind", f"127.0.0.1:{self.port}"]
        self.process = Process("benchwarmers serve", argv, env=self.env, log=self.logs / "bench.log")
        wait_for_port(self.port, self.process.popen, "benchwarmers serve")
        status, body = http_get(self.port, "/readyz")
        if status != 200:
            raise RuntimeError(f"bench not ready: {status} {body[:200]!r}")
        return self.port

    def stop(self) -> None:
        if self.process is not None:
            self.process.stop()
            self.process = None

    def remove(self) -> None:
        shutil.rmtree(self.home, ignore_errors=True)
