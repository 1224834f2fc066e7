"""A lean HTTP/1.1 client for seat calls: keep-alive connections to one origin, a JSON POST sent
from a request head built once per endpoint, the reply parsed by httptools (llhttp, the parser
uvicorn uses) and read whole.

Why not aiohttp here: a seat is always the same exchange (POST a JSON body, read one JSON reply),
and aiohttp's general machinery (request objects, header multidicts, tracing hooks, cookie jars)
was the largest share of the gateway's CPU per panel (docs/BENCHMARKS.md). Listings and admin
calls, rare and varied, stay on aiohttp.

What it does not do, on purpose: redirects (a provider that moves is misconfigured, not followed),
proxies from the environment (the seat client never read them), cookies, HTTP/2.
"""

from __future__ import annotations

import asyncio
import socket
import ssl
import time
import zlib
from collections.abc import Mapping, Sequence
from functools import cache
from typing import NamedTuple, cast
from urllib.parse import urlsplit

import httptools

# Idle connections older than this are closed rather than reused: common servers drop an idle
# keep-alive connection after 5 s (uvicorn, Node), and a request sent into one that is closing fails.
IDLE_SECONDS = 4.0
# A reply head longer than this is refused before it is held: aiohttp's and Node's limits are
# 8 and 16 KB; real providers' heads are under 4 KB.
MAX_HEAD = 16 * 1024
# Bodies above this are written in slices, waiting for the socket to drain between them, so a large
# request is never copied whole into the transport's buffer; below it one write is cheaper.
SLICE = 256 * 1024


class ServerClosed(ConnectionError):
    """The server closed the connection before any byte of the reply."""


class ReplyDropped(ConnectionError):
    """The connection closed after the reply began and before it was whole."""


class MalformedReply(ConnectionError):
    """What came back is not HTTP/1.1."""


class HttpReply(NamedTuple):
    status: int
    headers: dict[str, str]  # names in lower case; repeated headers joined with ", "
    body: bytes
    cut: bool  # the body passed the caller's limit: this is its first `limit` bytes, the rest unread


class ConnectTimeout(Exception):
    """The host did not accept a connection in time."""


@cache
def _tls() -> ssl.SSLContext:
    # Building a context loads the system's CA bundle (milliseconds): once per process.
    return ssl.create_default_context()


class _Exchange(asyncio.Protocol):
    """One keep-alive connection and the reply it is reading."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.parser = httptools.HttpResponseParser(self)
        self.closed = False
        self.idle_since = 0.0
        self._reply: asyncio.Future[None] | None = None
        self._writable: asyncio.Future[None] | None = None
        self._paused = False
        self._reset(0)

    def _reset(self, limit: int) -> None:
        self.status = 0
        self.headers: dict[str, str] = {}
        self.chunks: list[bytes] = []
        self.size = 0
        self.limit = limit
        self.started = False
        self.head_size = 0
        self.header_bytes = 0
        self.oversize = False
        self.headers_done = False
        self.complete = False
        self.cut = False
        self.keep_alive = False
        self.sent_all = False

    # -- asyncio.Protocol --------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's transports do not subclass asyncio's
        sock = transport.get_extra_info("socket")
        if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def data_received(self, data: bytes) -> None:
        if self._reply is None or self._reply.done():
            # Bytes nobody asked for: the connection is out of step, never reuse it.
            self.abort()
            return
        self.started = True
        if not self.headers_done:
            self.head_size += len(data)  # a head in pieces is refused before the parser holds it all
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserError as exc:
            self._finish(MalformedReply(f"malformed reply: {exc}"))
            self.abort()
            return
        if self.head_size > MAX_HEAD and (self.oversize or not self.headers_done):
            self._finish(MalformedReply(f"the reply's head is longer than {MAX_HEAD // 1024} KB"))
            self.abort()

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        if self._writable is not None and not self._writable.done():
            self._writable.set_result(None)
        if self._reply is None or self._reply.done():
            return
        if self.headers_done and self._until_close() and exc is None:  # a reset is no end of a reply
            self.complete = True
            self._finish(None)
        elif self.started:
            self._finish(ReplyDropped("the connection dropped before the whole reply arrived"))
        else:
            self._finish(ServerClosed("the server closed the connection"))

    def pause_writing(self) -> None:
        self._paused = True

    def resume_writing(self) -> None:
        self._paused = False
        if self._writable is not None and not self._writable.done():
            self._writable.set_result(None)

    # -- httptools callbacks -----------------------------------------------------------------

    def on_header(self, name: bytes, value: bytes) -> None:
        # The line as written, `name: value\r\n`: counting names and values alone let a head of many
        # short headers pass at twice the limit.
        self.header_bytes += len(name) + len(value) + 4
        if self.header_bytes > MAX_HEAD:
            # A head that came in one piece with its body: nothing after it is taken.
            self.oversize = True
            self.head_size = self.header_bytes
            return
        key = name.decode("latin-1").lower()
        text = value.decode("latin-1")
        previous = self.headers.get(key)
        self.headers[key] = text if previous is None else f"{previous}, {text}"

    def on_headers_complete(self) -> None:
        self.status = self.parser.get_status_code()
        self.headers_done = True
        # Asked now: llhttp forgets it once the message is complete.
        self.keep_alive = self.parser.should_keep_alive()

    def on_body(self, body: bytes) -> None:
        if self.cut or self.oversize:
            return
        room = self.limit - self.size
        if len(body) > room:
            # Enough: keep what fits, stop reading, and drop the connection with the rest unread.
            self.chunks.append(body[:room])
            self.size = self.limit
            self.cut = True
            self._finish(None)
            self.abort()
            return
        self.size += len(body)
        self.chunks.append(body)

    def on_message_complete(self) -> None:
        if self.oversize:
            return
        if self.status < 200:
            # An interim reply (100 Continue, 103 Early Hints): the final one follows. Its head still
            # counts toward the head limit, so an endless run of them is refused too.
            self.headers = {}
            self.headers_done = False
            return
        self.complete = True
        self._finish(None)

    # -- the exchange ------------------------------------------------------------------------

    def _until_close(self) -> bool:
        """A reply without a length or chunking ends when the server closes the connection."""
        return "content-length" not in self.headers and "chunked" not in self.headers.get("transfer-encoding", "")

    def _finish(self, exc: BaseException | None) -> None:
        reply = self._reply
        if reply is not None and not reply.done():
            if exc is None:
                reply.set_result(None)
            else:
                reply.set_exception(exc)

    def abort(self) -> None:
        self.closed = True
        if self.transport is not None:
            self.transport.abort()

    async def send(self, head: bytes, parts: Sequence[bytes], limit: int) -> None:
        """Write one request and wait until its reply is read (or fails)."""
        assert self.transport is not None
        self._reset(limit)
        self._reply = asyncio.get_running_loop().create_future()
        self.sent_all = False
        size = sum(len(part) for part in parts)
        if size <= SLICE:
            self.transport.write(head + b"".join(parts))
            self.sent_all = True
        else:
            self.transport.write(head)
            self.sent_all = await self._write_slices(parts)
        await self._reply

    async def _write_slices(self, parts: Sequence[bytes]) -> bool:
        """Write a large body in slices as the socket drains; False when the reply (a 413, say) or
        the connection's end came first: the rest is not sent, and the reply decides."""
        assert self.transport is not None and self._reply is not None
        for part in parts:
            view = memoryview(part)
            for start in range(0, len(view), SLICE):
                if self._paused and not self.closed and not self._reply.done():
                    self._writable = asyncio.get_running_loop().create_future()
                    await self._writable
                if self.closed or self._reply.done():
                    return False
                self.transport.write(view[start : start + SLICE])
        return True

    def body(self) -> bytes:
        data = b"".join(self.chunks)
        self.chunks = []
        return data

    def reusable(self) -> bool:
        return self.complete and self.sent_all and self.keep_alive and not self.cut and not self.closed


class Http1Origin:
    """Keep-alive HTTP/1.1 connections to the origin of one base URL."""

    def __init__(self, base_url: str, user_agent: str) -> None:
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"not an http(s) URL: {base_url!r}")
        self._tls = parts.scheme == "https"
        self._host = parts.hostname
        self._port = parts.port or (443 if self._tls else 80)
        self._prefix = parts.path.rstrip("/")
        netloc = parts.netloc.rpartition("@")[2]  # credentials in a URL are never sent as a Host
        self._common = (
            f"Host: {netloc}\r\nUser-Agent: {user_agent}\r\nAccept: application/json\r\n"
            "Content-Type: application/json\r\n"
        ).encode("latin-1")
        self._idle: list[_Exchange] = []

    def head(self, path: str, authorization: str | None, extra: Mapping[str, str] | None = None) -> bytes:
        """The request head up to the content length (the caller keeps it per endpoint and path);
        `extra` headers (an endpoint's key as its provider takes it) follow the common ones."""
        line = f"POST {self._prefix}{path} HTTP/1.1\r\n".encode("latin-1")
        auth = f"Authorization: {authorization}\r\n".encode("latin-1") if authorization else b""
        auth += "".join(f"{name}: {value}\r\n" for name, value in (extra or {}).items()).encode("latin-1")
        return line + self._common + auth + b"Content-Length: "

    async def post(self, head: bytes, parts: Sequence[bytes], *, limit: int, connect_timeout: float) -> HttpReply:
        """Send one POST (`head` from `head()`, the body as pieces) and read its reply: whole, or its
        first `limit` bytes (decoded) when it is longer."""
        request_head = head + str(sum(len(part) for part in parts)).encode() + b"\r\n\r\n"
        exchange = self._reusable()
        reused = exchange is not None
        if exchange is None:
            exchange = await self._connect(connect_timeout)
        try:
            try:
                await exchange.send(request_head, parts, limit)
            except ServerClosed:
                if not reused:
                    raise
                # A kept-alive connection the server closed as the request went out: the request
                # was never read, so it goes once more on a new connection.
                exchange = await self._connect(connect_timeout)
                await exchange.send(request_head, parts, limit)
        except BaseException:
            exchange.abort()  # half a request or half a reply: never reused
            raise
        status, headers, body, cut = exchange.status, exchange.headers, exchange.body(), exchange.cut
        if exchange.reusable():
            exchange.idle_since = time.monotonic()
            self._idle.append(exchange)
        else:
            exchange.abort()
        if "content-encoding" in headers:
            body, cut_decoding = _decoded(headers["content-encoding"], body, limit)
            cut = cut or cut_decoding
        return HttpReply(status, headers, body, cut)

    def _reusable(self) -> _Exchange | None:
        now = time.monotonic()
        while self._idle:
            exchange = self._idle.pop()
            if not exchange.closed and now - exchange.idle_since < IDLE_SECONDS:
                return exchange
            exchange.abort()
        return None

    async def _connect(self, timeout: float) -> _Exchange:  # noqa: ASYNC109
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(timeout):
                _, exchange = await loop.create_connection(
                    _Exchange,
                    self._host,
                    self._port,
                    ssl=_tls() if self._tls else None,
                    server_hostname=self._host if self._tls else None,
                )
        except TimeoutError:
            raise ConnectTimeout() from None
        return exchange

    def close(self) -> None:
        for exchange in self._idle:
            exchange.abort()
        self._idle.clear()


def _decoded(content_encoding: str, body: bytes, limit: int) -> tuple[bytes, bool]:
    """The body without its content coding (gzip or deflate), cut at `limit` bytes.

    Seats never ask for a coding (no Accept-Encoding), but some servers compress anyway.
    """
    coding = content_encoding.strip().lower()
    if coding in ("", "identity"):
        return body, False
    if coding not in ("gzip", "x-gzip", "deflate"):
        raise MalformedReply(f"the reply came in a content coding the bench does not read: {coding}")
    # wbits 47: a zlib or gzip header, detected; raw deflate is what some servers call "deflate".
    for wbits in (47, -15):
        inflater = zlib.decompressobj(wbits)
        try:
            data = inflater.decompress(body, limit + 1)
        except zlib.error:
            continue
        if len(data) > limit:
            return data[:limit], True
        if not inflater.eof:
            raise MalformedReply(f"the reply's {coding} body ends before its compressed stream does")
        return data, False
    raise MalformedReply(f"the reply's {coding} body could not be decoded")
