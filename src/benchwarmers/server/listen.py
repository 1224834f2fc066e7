"""How the bench listens: uvicorn's configuration, its socket, and the read deadlines uvicorn lacks.

uvicorn closes an idle keep-alive connection (`timeout_keep_alive`) but sets no deadline while a
request arrives: a client that sends its headers a byte at a time, or its body a byte every few
seconds, holds its connection for ever (slowloris). `--limit-concurrency` does not help: it counts
connections only once their headers are complete, and then answers 503 to everyone. So the HTTP
protocol here is uvicorn's httptools one with three deadlines:

- the headers must be complete within `header` seconds of the connection (or of the request's first
  byte, on a kept-alive one), else the connection is closed;
- a body may not go `stall` seconds without a byte while the bench is waiting for it;
- the whole body must have arrived within `body` seconds of its headers (BENCHWARMERS_BODY_DEADLINE),
  time the bench itself was not reading it (its handler busy, or waiting for body memory: reading
  paused) not counted. A body past either answers 408 when no reply has started, and is closed.

One timer per connection serves them all: re-armed for the nearest deadline when it fires, never
per chunk. What each chunk costs is one clock read (the time of the latest byte).
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import logging
import os
import socket
from dataclasses import dataclass
from typing import Any

import orjson
import uvicorn
from uvicorn.protocols.http.flow_control import FlowControl
from uvicorn.protocols.http.httptools_impl import STATUS_LINE, HttpToolsProtocol

from benchwarmers.errors import RequestTimeout
from benchwarmers.settings import Settings

log = logging.getLogger("benchwarmers.server")

HEADER_TIMEOUT = 10.0  # a client sends its headers in one packet; 10 s is kind to a slow link
BODY_TIMEOUT = 30.0  # seconds without a byte of a body the bench is waiting for
BODY_DEADLINE = 60.0  # seconds for a whole body (the settings' default)
LATE_BODY = "body_late"  # set in the scope's state when a body missed its deadline (server/errors.py)


@dataclass(frozen=True)
class Deadlines:
    header: float = HEADER_TIMEOUT
    stall: float = BODY_TIMEOUT
    body: float = BODY_DEADLINE


class ListenConfig(uvicorn.Config):
    """uvicorn's configuration with the read deadlines (pickled whole to `--workers` processes)."""

    deadlines = Deadlines()


LINGER_SECONDS = 2.0  # after a late body's 408: long enough for the client to read it before the close


class _TimedFlow(FlowControl):
    """uvicorn's flow control, keeping the seconds reading was paused: the bench's wait, not the client's."""

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(transport)
        self._loop = loop
        self._paused_at = 0.0
        self._paused_for = 0.0

    def pause_reading(self) -> None:
        if not self.read_paused:
            self._paused_at = self._loop.time()
        super().pause_reading()

    def resume_reading(self) -> None:
        if self.read_paused:
            self._paused_for += self._loop.time() - self._paused_at
        super().resume_reading()

    def paused(self, now: float) -> float:
        """Seconds reading has been paused on this connection, up to `now`."""
        return self._paused_for + (now - self._paused_at if self.read_paused else 0.0)


class DeadlineProtocol(HttpToolsProtocol):
    def __init__(self, config: uvicorn.Config, *args: Any, **kwargs: Any) -> None:
        super().__init__(config, *args, **kwargs)
        self.deadlines: Deadlines = getattr(config, "deadlines", Deadlines())
        self._deadline: asyncio.TimerHandle | None = None
        self._body_seen = 0.0  # the latest byte of the body
        self._body_from = 0.0  # when its headers were complete, moved on by the seconds reading was paused
        self._lingering = False  # a late body's 408 is out: what still comes is dropped until the close

    def _arm(self, seconds: float, callback: Any) -> None:
        self._disarm()
        self._deadline = self.loop.call_later(seconds, callback)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _headers_late(self) -> None:
        self._deadline = None
        log.debug("closed a connection whose headers took over %.0f s", self.deadlines.header)
        self.transport.close()

    def _body_check(self) -> None:
        self._deadline = None
        now = self.loop.time()
        flow = self.flow
        assert isinstance(flow, _TimedFlow)
        if flow.read_paused:  # the app has not taken what came yet: the wait is ours, not the client's
            self._body_seen = now
        stalled = self._body_seen + self.deadlines.stall - now
        late = self._body_from + flow.paused(now) + self.deadlines.body - now
        if stalled > 0 and late > 0:
            self._arm(min(stalled, late), self._body_check)
            return
        self._body_late(stalled=stalled <= 0)

    def _body_late(self, *, stalled: bool) -> None:
        """408 when no reply has started, then close: the app sees a disconnect and its reply is dropped."""
        seconds = self.deadlines.stall if stalled else self.deadlines.body
        log.debug(
            "closed a connection whose request body was late (%s %.0f s)", "stall" if stalled else "body", seconds
        )
        cycle = self.cycle
        if cycle is not None and not cycle.response_started and not cycle.disconnected:
            self.transport.write(late_reply(stalled, seconds))
            cycle.scope.setdefault("state", {})[LATE_BODY] = True
            cycle.disconnected = True
            cycle.message_event.set()
        self._linger()

    def _linger(self) -> None:
        """Half-close, then drop what still comes for a moment before closing. Closing at once with the
        client's bytes unread makes the kernel answer with a reset, which can destroy the 408 before the
        client has read it (a dripping client is still sending)."""
        self._lingering = True
        self.transport.resume_reading()  # read and drop, so nothing is left unread at the close
        if self.transport.can_write_eof():
            self.transport.write_eof()
        self.loop.call_later(LINGER_SECONDS, self.transport.close)

    def data_received(self, data: bytes) -> None:
        if self._lingering:
            return
        super().data_received(data)

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self.flow = _TimedFlow(transport, self.loop)
        self._arm(self.deadlines.header, self._headers_late)

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def handle_websocket_upgrade(self) -> None:
        self._disarm()  # the connection is the WebSocket protocol's from here
        super().handle_websocket_upgrade()

    def on_message_begin(self) -> None:
        super().on_message_begin()
        if self._deadline is None:  # a kept-alive connection's next request: its headers start now
            self._arm(self.deadlines.header, self._headers_late)

    def on_headers_complete(self) -> None:
        self._disarm()
        super().on_headers_complete()
        self._body_seen = now = self.loop.time()
        flow = self.flow
        assert isinstance(flow, _TimedFlow)
        self._body_from = now - flow.paused(now)
        self._arm(min(self.deadlines.stall, self.deadlines.body), self._body_check)

    def on_body(self, body: bytes) -> None:
        self._body_seen = self.loop.time()
        super().on_body(body)

    def on_message_complete(self) -> None:
        self._disarm()
        super().on_message_complete()


def late_reply(stalled: bool, seconds: float) -> bytes:
    """The 408 a late body gets, in the one error shape, written straight to the connection."""
    if stalled:
        what = f"no byte of the request body arrived for {seconds:g} s, so the connection is closed: send the body "
        what += "without pauses"
    else:
        what = f"the request body did not arrive within {seconds:g} s of its headers, so the connection is closed: "
        what += (
            "send it faster (on a slow link, send images as https:// URLs; BENCHWARMERS_BODY_DEADLINE sets the time)"
        )
    body = orjson.dumps(RequestTimeout(what).body())
    head = b"content-type: application/json\r\ncontent-length: %d\r\nconnection: close\r\n\r\n" % len(body)
    return STATUS_LINE[408] + head + body


def uvicorn_config(
    app: Any,
    settings: Settings,
    *,
    header_timeout: float = HEADER_TIMEOUT,
    body_timeout: float = BODY_TIMEOUT,
    body_deadline: float | None = None,
    **options: Any,
) -> uvicorn.Config:
    """The one uvicorn configuration, for `benchwarmers serve` and the tests alike.

    `X-Forwarded-For` and `-Proto` are believed only from BENCHWARMERS_TRUSTED_PROXIES (uvicorn's
    default believes any loopback peer, so anything on this machine could pose as any address).
    `body_deadline`: BENCHWARMERS_BODY_DEADLINE unless given.
    """
    host, port = settings.host_port()
    trusted = settings.trusted_proxy_list
    options = {"log_level": "warning", "access_log": False, "timeout_graceful_shutdown": 5, **options}
    config = ListenConfig(
        app,
        host=host,
        port=port,
        loop="uvloop" if importlib.util.find_spec("uvloop") is not None else "asyncio",
        http=DeadlineProtocol,
        proxy_headers=bool(trusted),
        forwarded_allow_ips=list(trusted) if trusted else None,
        **options,
    )
    body = settings.body_deadline if body_deadline is None else body_deadline
    config.deadlines = Deadlines(header=header_timeout, stall=body_timeout, body=body)
    return config


TICK_SECONDS = 1.0  # how often the server wakes for its upkeep when nothing else wakes it


class QuietServer(uvicorn.Server):
    """uvicorn's server, waking once a second for its upkeep instead of ten times.

    uvicorn's main loop sleeps 0.1 s between ticks, though a tick's work (the Date header, the
    request limit) is done once a second: an idle bench woke ten times a second, and each wake-up of
    an idle process costs about 0.2 ms of CPU on a cold core (2 ms a second when idle; a
    twentieth of a request's CPU at one connection). A signal to stop wakes it at once.
    """

    _wake: asyncio.Event | None = None
    _loop: asyncio.AbstractEventLoop | None = None

    async def main_loop(self) -> None:
        self._wake, self._loop = asyncio.Event(), asyncio.get_running_loop()
        counter = 0  # on_tick counts tenths of a second: its once-a-second work is done on every tick here
        should_exit = await self.on_tick(counter)
        while not should_exit:
            counter = (counter + 10) % 864000
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(TICK_SECONDS):
                    await self._wake.wait()
            should_exit = await self.on_tick(counter)

    def handle_exit(self, sig: int, frame: Any) -> None:
        super().handle_exit(sig, frame)
        if self._loop is not None and self._wake is not None:
            self._loop.call_soon_threadsafe(self._wake.set)


def bind(host: str, port: int) -> list[socket.socket]:
    """The listening sockets, one per address the host names (`localhost`: 127.0.0.1 and ::1), bound
    now so that a busy port is known before anything says "serving".

    Raises OSError as the system gave it (EADDRINUSE for a busy port, a gaierror for an unknown host).
    """
    found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    sockets: list[socket.socket] = []
    try:
        for family, kind, proto, _name, address in dict.fromkeys(found):
            sock = socket.socket(family, kind, proto)
            sockets.append(sock)
            if os.name != "nt":  # restart at once after a stop; on Windows it would let two share a port
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            sock.bind(address)
            sock.set_inheritable(True)
    except OSError:
        for sock in sockets:
            sock.close()
        raise
    return sockets
