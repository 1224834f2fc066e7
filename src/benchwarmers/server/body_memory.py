"""The process-wide budget for request bodies in memory (BENCHWARMERS_BODY_MEMORY_BUDGET).

Each body the app reads is counted from when it starts to arrive until its request has ended: a
panel keeps its body (the seats' shared encoded request) while its seats run, so bytes are given
back when the reply is sent, or when a panel that outlived its client finishes. A body declared
by Content-Length is counted whole before its first byte is read; a chunked one as it grows.
One that does not fit waits, first come first served, for at most `wait` seconds, then gets 503
with Retry-After: a burst of large bodies is taken a budget at a time, never all at once.

Bodies up to SMALL bytes are not counted: uvicorn holds that much of any body before the app
reads it, so counting them would bound nothing, and a flood of large bodies must not hold up a
verdict or a short prompt.
"""

from __future__ import annotations

import asyncio
import collections
import ctypes
import sys
from typing import Any

from starlette.types import Scope

from benchwarmers.errors import Unavailable

SMALL = 64 * 1024
STEP = 1024 * 1024  # a chunked body is counted a MiB ahead of what has arrived
RETRY_AFTER = 2  # seconds: the panels holding the budget are usually done by then
_KEY = "body_memory"
_M_MMAP_THRESHOLD = -3  # glibc's mallopt parameter (malloc.h)
MAPPED_FROM = 1024 * 1024


def _mb(size: int) -> str:
    return f"{size / 1_000_000:,.1f} MB"


class BodyBudget:
    """Bytes of request bodies in memory, at most `capacity`; who waits for room, in order."""

    def __init__(self, capacity: int, wait: float) -> None:
        self.capacity = capacity
        self.wait = wait
        self.used = 0
        self._waiting: collections.deque[tuple[int, asyncio.Future[None]]] = collections.deque()
        self.turn = asyncio.Lock()  # large bodies are parsed one at a time (server/body.py)

    async def take(self, size: int) -> None:
        """Count `size` more bytes, waiting for room; raises Unavailable (503) after `wait` seconds."""
        if not self._waiting and self.used + size <= self.capacity:
            self.used += size
            return
        entry = (size, asyncio.get_running_loop().create_future())
        self._waiting.append(entry)
        try:
            async with asyncio.timeout(self.wait):
                await asyncio.shield(entry[1])
        except TimeoutError:
            if entry[1].done():  # room was given as the wait ran out: it is ours
                return
            self._waiting.remove(entry)
            self._grant()  # it may have been first in line, holding back smaller ones that fit
            raise self._busy(size) from None
        except asyncio.CancelledError:
            if entry[1].done():
                self.give_back(size)
            else:
                self._waiting.remove(entry)
                self._grant()
            raise

    def give_back(self, size: int) -> None:
        self.used -= size
        self._grant()

    def _grant(self) -> None:
        while self._waiting and self.used + self._waiting[0][0] <= self.capacity:
            size, future = self._waiting.popleft()
            self.used += size
            future.set_result(None)

    def _busy(self, size: int) -> Unavailable:
        return Unavailable(
            f"the bench is holding its whole memory budget for request bodies ({_mb(self.capacity)}, "
            f"BENCHWARMERS_BODY_MEMORY_BUDGET) for other large requests, and this body of {_mb(size)} did not "
            f"fit within {self.wait:g} s: retry after {RETRY_AFTER} s, or send images as https:// URLs",
            code="body_memory_busy",
            headers={"Retry-After": str(RETRY_AFTER)},
        )


class Held:
    """The bytes one request holds in the budget, given back once when it ends."""

    __slots__ = ("budget", "kept", "size")

    def __init__(self, budget: BodyBudget) -> None:
        self.budget = budget
        self.size = 0
        self.kept = False

    async def take(self, size: int) -> None:
        await self.budget.take(size)
        self.size += size

    def release(self) -> None:
        if self.size and not self.kept:
            self.budget.give_back(self.size)
            self.size = 0

    def keep_until(self, task: asyncio.Future[Any]) -> None:
        """The request ends, but `task` (its panel, outliving the client) still holds the body."""
        self.kept = True
        task.add_done_callback(self._task_done)

    def _task_done(self, _task: asyncio.Future[Any]) -> None:
        self.kept = False
        self.release()


def held_by(scope: Scope, budget: BodyBudget) -> Held:
    """This request's holding (made on first use)."""
    state = scope.setdefault("state", {})
    held: Held | None = state.get(_KEY)
    if held is None:
        held = state[_KEY] = Held(budget)
    return held


def release(scope: Scope) -> None:
    """Give back what the request held (the outermost middleware calls this once it has ended)."""
    held = scope.get("state", {}).get(_KEY)
    if held is not None:
        held.release()


def keep_until(scope: Scope, task: asyncio.Future[Any]) -> None:
    held = scope.get("state", {}).get(_KEY)
    if held is not None:
        held.keep_until(task)


def map_large_blocks() -> bool:
    """Have glibc's malloc map every block of MAPPED_FROM bytes or more on its own, so that a body
    (and its parsed and encoded copies) goes back to the system as soon as it is freed.

    By default glibc raises that threshold to the size of the largest block freed so far (up to
    32 MiB): after the first large body, the next ones come from the heap, whose freed space stays
    in the process. After a burst of 19 MB bodies RSS stayed hundreds of MB above idle for good.
    Setting the threshold turns the adjustment off. False where the C library is not glibc."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    return bool(mallopt(_M_MMAP_THRESHOLD, MAPPED_FROM))
