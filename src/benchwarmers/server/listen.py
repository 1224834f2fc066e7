"""How the bench listens: uvicorn's configuration, its socket, and the read deadlines uvicorn lacks.

uvicorn closes an idle keep-alive connection (`timeout_keep_alive`) but sets no deadline while a
request arrives: a client that sends its headers a byte at a time, or stops halfway through a
body, holds its connection for ever (slowloris). `--limit-concurrency` does not help: it counts
connections only once their headers are complete, and then answers 503 to everyone. So the HTTP
protocol here is uvicorn's httptools one with two deadlines: the headers must be complete within
HEADER_TIMEOUT seconds of the connection (or of the request's first byte, on a kept-alive one),
and a body may not go BODY_TIMEOUT seconds without a byte while the bench is waiting for it.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import logging
import os
import socket
from typing import Any

import uvicorn
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from benchwarmers.settings import Settings

log = logging.getLogger("benchwarmers.server")

HEADER_TIMEOUT = 10.0  # a client sends its headers in one packet; 10 s is kind to a slow link
BODY_TIMEOUT = 30.0  # seconds without a byte of a body the bench is waiting for


class DeadlineProtocol(HttpToolsProtocol):
    header_timeout = HEADER_TIMEOUT
    body_timeout = BODY_TIMEOUT

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._deadline: asyncio.TimerHandle | None = None
        self._body_seen = 0.0

    def _arm(self, seconds: float, callback: Any) -> None:
        self._disarm()
        self._deadline = self.loop.call_later(seconds, callback)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _headers_late(self) -> None:
        self._deadline = None
        log.debug("closed a connection whose headers took over %.0f s", self.header_timeout)
        self.transport.close()

    def _body_stalled(self) -> None:
        self._deadline = None
        now = self.loop.time()
        if self.flow.read_paused:  # the app has not taken what came yet: the wait is ours, not the client's
            self._body_seen = now
        left = self._body_seen + self.body_timeout - now
        if left > 0:
            self._arm(left, self._body_stalled)
            return
        log.debug("closed a connection whose request body stalled for %.0f s", self.body_timeout)
        self.transport.close()  # the app sees a disconnect

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm(self.header_timeout, self._headers_late)

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def handle_websocket_upgrade(self) -> None:
        self._disarm()  # the connection is the WebSocket protocol's from here
        super().handle_websocket_upgrade()

    def on_message_begin(self) -> None:
        super().on_message_begin()
        if self._deadline is None:  # a kept-alive connection's next request: its headers start now
            self._arm(self.header_timeout, self._headers_late)

    def on_headers_complete(self) -> None:
        self._disarm()
        super().on_headers_complete()
        self._body_seen = self.loop.time()
        self._arm(self.body_timeout, self._body_stalled)

    def on_body(self, body: bytes) -> None:
        self._body_seen = self.loop.time()
        super().on_body(body)

    def on_message_complete(self) -> None:
        self._disarm()
        super().on_message_complete()


def deadline_protocol(header_timeout: float, body_timeout: float) -> type[DeadlineProtocol]:
    """The protocol class with these deadlines (uvicorn builds one protocol per connection)."""
    if (header_timeout, body_timeout) == (HEADER_TIMEOUT, BODY_TIMEOUT):
        return DeadlineProtocol  # by name: workers are started with the configuration pickled
    return type(
        "DeadlineProtocol", (DeadlineProtocol,), {"header_timeout": header_timeout, "body_timeout": body_timeout}
    )


def uvicorn_config(
    app: Any,
    settings: Settings,
    *,
    header_timeout: float = HEADER_TIMEOUT,
    body_timeout: float = BODY_TIMEOUT,
    **options: Any,
) -> uvicorn.Config:
    """The one uvicorn configuration, for `benchwarmers serve` and the tests alike.

    `X-Forwarded-For` and `-Proto` are believed only from BENCHWARMERS_TRUSTED_PROXIES (uvicorn's
    default believes any loopback peer, so anything on this machine could pose as any address).
    """
    host, port = settings.host_port()
    trusted = settings.trusted_proxy_list
    options = {"log_level": "warning", "access_log": False, "timeout_graceful_shutdown": 5, **options}
    return uvicorn.Config(
        app,
        host=host,
        port=port,
        loop="uvloop" if importlib.util.find_spec("uvloop") is not None else "asyncio",
        http=deadline_protocol(header_timeout, body_timeout),
        proxy_headers=bool(trusted),
        forwarded_allow_ips=list(trusted) if trusted else None,
        **options,
    )


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
