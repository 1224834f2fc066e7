"""The seat client's HTTP/1.1 (upstream/http1.py) against the fake provider over real sockets: reply
framings, content codings, the body and head limits, keep-alive, large requests and TLS.

Every test runs twice, on asyncio's own loop and on uvloop (what `benchwarmers serve` runs): their
transports differ (uvloop's are not `asyncio.Transport` subclasses, and flow control and TLS are
their own code). The fake provider writes the odd replies by hand (`raw=`: pieces in turn, each its
own write), so a test says byte for byte what comes over the wire.
"""

from __future__ import annotations

import asyncio
import gzip
import socket
import ssl
import tracemalloc
import zlib
from collections.abc import Callable, Coroutine, Iterator, Sequence
from pathlib import Path
from typing import Any, cast

import orjson
import pytest
import trustme
import uvloop

from benchwarmers.upstream import client, http1
from benchwarmers.upstream.client import ChatBody, EndpointRef, UpstreamPool
from benchwarmers.upstream.failures import FailureKind, UpstreamFailure
from benchwarmers.upstream.http1 import Http1Origin, HttpReply
from tests.fakes.upstream import FakeUpstream

Run = Callable[[Coroutine[Any, Any, Any]], Any]
LOOPS: dict[str, Callable[[], asyncio.AbstractEventLoop]] = {
    "asyncio": asyncio.new_event_loop,
    "uvloop": uvloop.new_event_loop,
}
HELLO = ChatBody.from_request({"model": "bench/x", "messages": [{"role": "user", "content": "hello there"}]})
# 0..255 over and over: a cut in the wrong place, or bytes out of order, never look right by accident.
PATTERN = bytes(range(256)) * 64


@pytest.fixture(params=sorted(LOOPS))
def run(request: pytest.FixtureRequest) -> Iterator[Run]:
    """Run a test's scenario on one of the two loops, bounded so a failing test fails rather than hangs."""

    async def bounded(scenario: Coroutine[Any, Any, Any]) -> Any:
        async with asyncio.timeout(10):
            return await scenario

    with asyncio.Runner(loop_factory=LOOPS[request.param]) as runner:
        yield lambda scenario: runner.run(bounded(scenario))


def completion(answer: str) -> bytes:
    message = {"role": "assistant", "content": answer}
    choice = {"index": 0, "message": message, "logprobs": None, "finish_reason": "stop"}
    return orjson.dumps({"id": "chatcmpl-1", "object": "chat.completion", "model": "m", "choices": [choice]})


def head(*lines: str, status: str = "HTTP/1.1 200 OK") -> bytes:
    return ("\r\n".join((status, "content-type: application/json", *lines)) + "\r\n\r\n").encode("latin-1")


def sized(body: bytes, *lines: str) -> bytes:
    """A whole reply framed by Content-Length."""
    return head(f"content-length: {len(body)}", *lines) + body


def chunked(body: bytes, sizes: Sequence[int]) -> bytes:
    """`body` as chunks of these sizes (the rest in one more), the last chunk, and a trailer."""
    out, start = b"", 0
    for size in [*sizes, len(body)]:
        piece = body[start : start + size]
        start += len(piece)
        if piece:
            out += b"%x;ext=1\r\n%s\r\n" % (len(piece), piece)
    return out + b"0\r\nx-trailer: done\r\n\r\n"


def pieces(data: bytes, size: int) -> tuple[bytes, ...]:
    """`data` cut every `size` bytes, each piece its own write."""
    return tuple(data[i : i + size] for i in range(0, len(data), size))


def bytewise(data: bytes) -> tuple[bytes, ...]:
    return pieces(data, 1)


def endpoint(fake: FakeUpstream) -> EndpointRef:
    return EndpointRef(name="fake", base_url=fake.base_url, api_key=None)


async def answers(fake: FakeUpstream, *models: str) -> list[str]:
    """Each model asked in turn through one pool (so one keep-alive origin)."""
    pool = UpstreamPool()
    try:
        return [(await pool.chat(endpoint(fake), HELLO.parts_for(model), 5)).answer for model in models]
    finally:
        await pool.aclose()


async def failure(fake: FakeUpstream, model: str, *, before: Sequence[str] = ()) -> UpstreamFailure:
    """The failure of asking `model` (after the `before` models answered on the same pool)."""
    pool = UpstreamPool()
    try:
        for earlier in before:
            await pool.chat(endpoint(fake), HELLO.parts_for(earlier), 5)
        with pytest.raises(UpstreamFailure) as caught:
            await pool.chat(endpoint(fake), HELLO.parts_for(model), 5)
        return caught.value
    finally:
        await pool.aclose()


async def posts(fake: FakeUpstream, *models: str, limit: int = 1 << 20) -> list[HttpReply]:
    """Each model asked in turn on one `Http1Origin`, the replies as it gives them."""
    origin = Http1Origin(fake.base_url, "tests")
    try:
        head_bytes = origin.head("/chat/completions", None)
        return [
            await origin.post(head_bytes, HELLO.parts_for(model), limit=limit, connect_timeout=5) for model in models
        ]
    finally:
        origin.close()


# -- framings ------------------------------------------------------------------------------------


def test_chunked_reply_in_several_chunks_then_reused(run: Run, fake_upstream: FakeUpstream) -> None:
    reply = head("transfer-encoding: chunked") + chunked(completion("one two three"), [5, 17, 1, 40])
    fake_upstream.script("chunky", raw=(reply,), after="keep")
    assert run(answers(fake_upstream, "chunky", "chunky")) == ["one two three", "one two three"]
    assert fake_upstream.connections_opened == 1


def test_chunk_boundaries_split_across_writes(run: Run, fake_upstream: FakeUpstream) -> None:
    # Every byte its own write: sizes, extensions, CRLFs and the trailer cut anywhere the reads fall.
    body = completion("split " * 50)
    fake_upstream.script("split", raw=bytewise(head("transfer-encoding: chunked") + chunked(body, [3, 1, 200])))
    (reply,) = run(posts(fake_upstream, "split"))
    assert (reply.status, reply.body, reply.cut) == (200, body, False)
    assert reply.headers["transfer-encoding"] == "chunked"


@pytest.mark.parametrize("status", ["HTTP/1.1 200 OK", "HTTP/1.0 200 OK"])
def test_reply_without_length_ends_when_the_server_closes(run: Run, fake_upstream: FakeUpstream, status: str) -> None:
    body = completion("until the end")
    fake_upstream.script("old", raw=(head(status=status), body[:20], body[20:]))
    assert run(answers(fake_upstream, "old", "old")) == ["until the end", "until the end"]
    assert fake_upstream.connections_opened == 2


@pytest.mark.parametrize("after", ["close", "keep"])
def test_connection_close_reply_is_not_reused(run: Run, fake_upstream: FakeUpstream, after: str) -> None:
    # Even when the server leaves the socket open, `Connection: close` means no second request on it.
    fake_upstream.script("once", raw=(sized(completion("bye"), "connection: close"),), after=after)
    assert run(answers(fake_upstream, "once", "once")) == ["bye", "bye"]
    assert fake_upstream.connections_opened == 2


INTERIM = {
    "100": b"HTTP/1.1 100 Continue\r\n\r\n",
    "103": b"HTTP/1.1 103 Early Hints\r\nlink: </style.css>; rel=preload\r\n\r\n",
}


@pytest.mark.parametrize("writes", ["one write", "two writes"])
@pytest.mark.parametrize("interim", sorted(INTERIM))
def test_interim_replies_are_skipped(run: Run, fake_upstream: FakeUpstream, interim: str, writes: str) -> None:
    # A client must read 1xx replies it did not ask for (RFC 9110 15.2): the answer is the final reply,
    # and the next call on the connection gets its own answer, not the one before it.
    for name in ("first", "second"):
        pieces = (INTERIM[interim], sized(completion(f"{name} answer")))
        fake_upstream.script(name, raw=pieces if writes == "two writes" else (b"".join(pieces),), after="keep")
    first, second = run(posts(fake_upstream, "first", "second"))
    assert (first.status, first.headers, first.body) == (
        200,
        {"content-type": "application/json", "content-length": str(len(completion("first answer")))},
        completion("first answer"),
    )
    assert (second.status, second.body) == (200, completion("second answer"))
    assert fake_upstream.connections_opened == 1


def test_endless_interim_replies_are_refused(run: Run, fake_upstream: FakeUpstream) -> None:
    endless = INTERIM["100"] * 1000  # 25 KB of 100 Continue and never a final reply
    fake_upstream.script("stalling", raw=pieces(endless, 4096), after="hang")
    failed = run(failure(fake_upstream, "stalling"))
    assert (failed.kind, str(failed)) == (FailureKind.connection, HEAD_TOO_LONG)


# -- content codings -----------------------------------------------------------------------------


def raw_deflate(data: bytes) -> bytes:
    packer = zlib.compressobj(wbits=-15)
    return packer.compress(data) + packer.flush()


CODINGS: dict[str, tuple[str, Callable[[bytes], bytes]]] = {
    "gzip": ("gzip", gzip.compress),
    "x-gzip": ("x-gzip", gzip.compress),
    "deflate-zlib": ("deflate", zlib.compress),
    "deflate-raw": ("deflate", raw_deflate),
}


@pytest.mark.parametrize("coding", sorted(CODINGS))
def test_compressed_reply_is_decoded(run: Run, fake_upstream: FakeUpstream, coding: str) -> None:
    name, compress = CODINGS[coding]
    body = completion("squeezed " * 100)
    fake_upstream.script("packed", raw=(sized(compress(body), f"content-encoding: {name}"),), after="keep")
    first, second = run(posts(fake_upstream, "packed", "packed"))
    assert (first.status, first.body, first.cut) == (200, body, False)
    assert second.body == body
    assert fake_upstream.connections_opened == 1


def test_compressed_chat_answer(run: Run, fake_upstream: FakeUpstream) -> None:
    fake_upstream.script("packed", raw=(sized(gzip.compress(completion("unzipped")), "content-encoding: gzip"),))
    assert run(answers(fake_upstream, "packed")) == ["unzipped"]


def test_unknown_content_coding_is_a_connection_failure(run: Run, fake_upstream: FakeUpstream) -> None:
    fake_upstream.script("brotli", raw=(sized(b"\x1b\x03\x00\xf8\xa5\x92", "content-encoding: br"),))
    failed = run(failure(fake_upstream, "brotli"))
    assert (failed.kind, failed.status) == (FailureKind.connection, None)
    assert str(failed) == "connection failed: the reply came in a content coding the bench does not read: br"


def test_gzip_bomb_is_cut_at_the_limit_without_inflating_it_whole(run: Run, fake_upstream: FakeUpstream) -> None:
    bomb = gzip.compress(bytes(32 << 20))  # 32 MB of zeros in about 32 KB
    assert len(bomb) < 64 * 1024
    fake_upstream.script("bomb", raw=(sized(bomb, "content-encoding: gzip"),), after="keep")
    fake_upstream.script("small", raw=(sized(completion("warm")),), after="keep")

    async def scenario() -> tuple[HttpReply, int]:
        origin = Http1Origin(fake_upstream.base_url, "tests")
        head_bytes = origin.head("/chat/completions", None)
        try:
            # A first call, so the connection, buffers and lazy imports are not counted.
            await origin.post(head_bytes, HELLO.parts_for("small"), limit=1 << 20, connect_timeout=5)
            before, _ = tracemalloc.get_traced_memory()
            tracemalloc.reset_peak()
            reply = await origin.post(head_bytes, HELLO.parts_for("bomb"), limit=1 << 20, connect_timeout=5)
            return reply, tracemalloc.get_traced_memory()[1] - before
        finally:
            origin.close()

    tracemalloc.start()
    try:
        reply, grown = run(scenario())
    finally:
        tracemalloc.stop()
    assert (reply.status, len(reply.body), reply.body.count(0), reply.cut) == (200, 1 << 20, 1 << 20, True)
    assert grown < 8 << 20  # a few copies of the 1 MB kept, never the 32 MB it inflates to


def test_gzip_bomb_through_chat_is_a_failure(
    run: Run, fake_upstream: FakeUpstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(client, "MAX_RESPONSE_BYTES", 1 << 20)
    fake_upstream.script("bomb", raw=(sized(gzip.compress(bytes(8 << 20)), "content-encoding: gzip"),))
    failed = run(failure(fake_upstream, "bomb"))
    assert (failed.kind, failed.status, failed.message) == (
        FailureKind.upstream_error,
        200,
        "response larger than 1 MB",
    )


# -- the body limit ------------------------------------------------------------------------------

FRAMINGS: dict[str, Callable[[bytes], bytes]] = {
    "content-length": sized,
    "chunked": lambda body: head("transfer-encoding: chunked") + chunked(body, [700, 700]),
    "until-close": lambda body: head() + body,
}


@pytest.mark.parametrize("framing", sorted(FRAMINGS))
def test_body_longer_than_the_limit_is_cut_and_not_reused(run: Run, fake_upstream: FakeUpstream, framing: str) -> None:
    fake_upstream.script("long", raw=(FRAMINGS[framing](PATTERN[:5000]),), after="keep")
    fake_upstream.script("short", raw=(sized(completion("fine")),), after="keep")
    cut, after = run(posts(fake_upstream, "long", "short", limit=1000))
    assert (cut.status, cut.body, cut.cut) == (200, PATTERN[:1000], True)
    assert (after.status, after.body, after.cut) == (200, completion("fine"), False)
    assert fake_upstream.connections_opened == 2


def test_body_exactly_at_the_limit_is_whole(run: Run, fake_upstream: FakeUpstream) -> None:
    fake_upstream.script("full", raw=(sized(PATTERN[:1000]),), after="keep")
    first, second = run(posts(fake_upstream, "full", "full", limit=1000))
    assert (first.body, first.cut, second.body, second.cut) == (PATTERN[:1000], False, PATTERN[:1000], False)
    assert fake_upstream.connections_opened == 1


def test_reply_over_max_response_bytes_fails_the_seat(
    run: Run, fake_upstream: FakeUpstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(client, "MAX_RESPONSE_BYTES", 1 << 20)
    big = completion("x" * (1 << 20))
    fake_upstream.script("huge", raw=(sized(big),), after="keep")
    failed = run(failure(fake_upstream, "huge"))
    assert (failed.kind, failed.status, failed.message) == (
        FailureKind.upstream_error,
        200,
        "response larger than 1 MB",
    )


# -- the head limit ------------------------------------------------------------------------------

LONG_HEADS = {
    "one long header": [f"x-padding: {'a' * 17000}"],
    "many short headers": [f"x-h{i}: 1" for i in range(2000)],  # 'x-hN: 1\r\n': about 19 KB, 8 KB of names and values
}
HEAD_TOO_LONG = "connection failed: the reply's head is longer than 16 KB"


@pytest.mark.parametrize("shape", sorted(LONG_HEADS))
def test_head_over_16kb_in_one_write_with_its_body(run: Run, fake_upstream: FakeUpstream, shape: str) -> None:
    body = completion("too late")
    reply = head(f"content-length: {len(body)}", *LONG_HEADS[shape]) + body
    assert len(reply) > 16 * 1024
    fake_upstream.script("bloated", raw=(reply,), after="keep")
    failed = run(failure(fake_upstream, "bloated"))
    assert (failed.kind, str(failed)) == (FailureKind.connection, HEAD_TOO_LONG)


@pytest.mark.parametrize("shape", sorted(LONG_HEADS))
def test_head_over_16kb_in_pieces(run: Run, fake_upstream: FakeUpstream, shape: str) -> None:
    body = completion("too late")
    reply = head(f"content-length: {len(body)}", *LONG_HEADS[shape]) + body
    fake_upstream.script("bloated", raw=pieces(reply, 4096), after="keep")
    failed = run(failure(fake_upstream, "bloated"))
    assert (failed.kind, str(failed)) == (FailureKind.connection, HEAD_TOO_LONG)


ENDLESS_HEADS = {
    "header lines": b"".join(b"x-more: %05d\r\n" % i for i in range(1400)),
    "one header line": b"x-endless: " + b"a" * 20000,
}


@pytest.mark.parametrize("shape", sorted(ENDLESS_HEADS))
def test_head_that_never_ends_is_refused_before_it_is_whole(run: Run, fake_upstream: FakeUpstream, shape: str) -> None:
    # 20 KB of head and no blank line: refused as it passes 16 KB, not when the seat times out.
    endless = head().removesuffix(b"\r\n") + ENDLESS_HEADS[shape]
    fake_upstream.script("endless", raw=(endless[:8000], endless[8000:]), after="hang")
    failed = run(failure(fake_upstream, "endless"))
    assert (failed.kind, str(failed)) == (FailureKind.connection, HEAD_TOO_LONG)


def test_head_just_under_16kb_is_read(run: Run, fake_upstream: FakeUpstream) -> None:
    body = completion("just fits")
    reply = head(f"content-length: {len(body)}", f"x-padding: {'a' * 15000}") + body
    fake_upstream.script("roomy", raw=(reply,))
    assert run(answers(fake_upstream, "roomy")) == ["just fits"]


# -- keep-alive ----------------------------------------------------------------------------------


def test_connection_idle_past_idle_seconds_is_not_reused(
    run: Run, fake_upstream: FakeUpstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(http1, "IDLE_SECONDS", 0.0)  # every kept connection is already too old
    fake_upstream.script("m", reply="again")
    assert run(answers(fake_upstream, "m", "m", "m")) == ["again", "again", "again"]
    assert fake_upstream.connections_opened == 3


def test_kept_alive_connection_closed_by_the_server_while_idle(run: Run, fake_upstream: FakeUpstream) -> None:
    fake_upstream.script("m", reply="still here")

    async def scenario() -> list[str]:
        pool = UpstreamPool()
        try:
            first = await pool.chat(endpoint(fake_upstream), HELLO.parts_for("m"), 5)
            fake_upstream.close_idle()  # the server's idle timeout, between two seats
            second = await pool.chat(endpoint(fake_upstream), HELLO.parts_for("m"), 5)
            return [first.answer, second.answer]
        finally:
            await pool.aclose()

    assert run(scenario()) == ["still here", "still here"]
    assert fake_upstream.connections_opened == 2  # exactly one new connection
    assert [request.json["model"] for request in fake_upstream.chat_requests] == ["m", "m"]


def test_server_closing_a_new_connection_after_the_request_is_not_resent(run: Run, fake_upstream: FakeUpstream) -> None:
    fake_upstream.script("rude", raw=())  # reads the request, hangs up without a byte
    failed = run(failure(fake_upstream, "rude"))
    assert (failed.kind, str(failed)) == (FailureKind.connection, "connection failed: the server closed the connection")
    assert [request.json["model"] for request in fake_upstream.chat_requests] == ["rude"]
    assert fake_upstream.connections_opened == 1


def test_kept_alive_connection_closed_after_the_request_is_resent_once(run: Run, fake_upstream: FakeUpstream) -> None:
    # On a kept-alive connection the client cannot tell "closed before reading" from "read, then closed":
    # it sends once more on a new connection, and only once.
    fake_upstream.script("ok", reply="fine")
    fake_upstream.script("rude", raw=())
    failed = run(failure(fake_upstream, "rude", before=["ok"]))
    assert (failed.kind, str(failed)) == (FailureKind.connection, "connection failed: the server closed the connection")
    assert [request.json["model"] for request in fake_upstream.chat_requests] == ["ok", "rude", "rude"]
    assert fake_upstream.connections_opened == 2


def test_reply_dropped_midway_on_a_kept_alive_connection_is_not_resent(run: Run, fake_upstream: FakeUpstream) -> None:
    body = completion("half")
    fake_upstream.script("ok", reply="fine")
    fake_upstream.script("half", raw=(sized(body)[:-10],))
    failed = run(failure(fake_upstream, "half", before=["ok"]))
    assert str(failed) == "connection failed: the connection dropped before the whole reply arrived"
    assert [request.json["model"] for request in fake_upstream.chat_requests] == ["ok", "half"]


# -- large requests ------------------------------------------------------------------------------


class Watched:
    """A transport whose writes are logged (the rest passes through)."""

    def __init__(self, transport: asyncio.BaseTransport, calls: list[str]) -> None:
        self._transport = transport
        self._calls = calls

    def write(self, data: bytes | memoryview) -> None:
        self._calls.append("write")
        cast(asyncio.Transport, self._transport).write(data)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)


def congested(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Make every new connection's socket send buffer tiny, as on a slow link, so a large request
    fills the transport's buffer and the client has to wait for it to drain (flow control). Returns
    the log of the transport's write calls and the pause_writing/resume_writing calls."""
    calls: list[str] = []

    class Congested(http1._Exchange):
        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            super().connection_made(transport)
            transport.get_extra_info("socket").setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 8192)
            self.transport = cast(asyncio.Transport, Watched(transport, calls))

        def pause_writing(self) -> None:
            calls.append("pause")
            super().pause_writing()

        def resume_writing(self) -> None:
            calls.append("resume")
            super().resume_writing()

    monkeypatch.setattr(http1, "_Exchange", Congested)
    return calls


def assert_flow_controlled(calls: list[str]) -> None:
    """The transport asked the client to pause, and the client wrote nothing until it was told to resume."""
    assert calls.count("pause") >= 1
    assert calls.count("pause") == calls.count("resume")
    paused = False
    for call in calls:
        assert not (paused and call == "write"), calls
        paused = call == "pause" or (paused and call != "resume")


def large_body() -> tuple[bytes, ...]:
    # About 1.3 MB of messages, not a multiple of the 256 KB slice, in the three pieces seats send.
    text = (PATTERN.hex() * 40)[:1_300_001]
    parts = ChatBody.from_request({"messages": [{"role": "user", "content": text}]}).parts_for("big")
    assert len(parts) == 3 and sum(map(len, parts)) > 4 * http1.SLICE
    return parts


async def sent(fake: FakeUpstream, *bodies: Sequence[bytes]) -> list[str]:
    """Each body (as pieces) sent in turn through one pool."""
    pool = UpstreamPool()
    try:
        return [(await pool.chat(endpoint(fake), body, 5)).answer for body in bodies]
    finally:
        await pool.aclose()


def test_large_request_arrives_byte_identical(
    run: Run, fake_upstream: FakeUpstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = congested(monkeypatch)
    parts = large_body()
    fake_upstream.script("big", reply="read it all")
    assert run(sent(fake_upstream, parts, parts)) == ["read it all", "read it all"]
    assert [request.body for request in fake_upstream.chat_requests] == [b"".join(parts)] * 2
    assert fake_upstream.connections_opened == 1
    assert_flow_controlled(calls)


# -- TLS -----------------------------------------------------------------------------------------


@pytest.fixture
def authority() -> trustme.CA:
    return trustme.CA()


@pytest.fixture
def tls_fake(authority: trustme.CA) -> Iterator[FakeUpstream]:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    authority.issue_cert("127.0.0.1").configure_cert(context)
    with FakeUpstream(tls=context) as fake:
        yield fake


@pytest.fixture
def fresh_tls() -> Iterator[None]:
    """http1 builds its TLS context once per process: built again here, and after, from the environment."""
    http1._tls.cache_clear()
    yield
    http1._tls.cache_clear()


@pytest.fixture
def trusting(authority: trustme.CA, fresh_tls: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The bench trusts the throwaway CA the way a user would make it: SSL_CERT_FILE."""
    bundle = tmp_path / "ca.pem"
    authority.cert_pem.write_to_path(str(bundle))
    monkeypatch.setenv("SSL_CERT_FILE", str(bundle))


def test_https_endpoint(run: Run, tls_fake: FakeUpstream, trusting: None, monkeypatch: pytest.MonkeyPatch) -> None:
    assert tls_fake.base_url.startswith("https://127.0.0.1:")
    tls_fake.script("secure", reply="over tls")
    assert run(answers(tls_fake, "secure", "secure")) == ["over tls", "over tls"]
    assert tls_fake.connections_opened == 1


def test_large_request_over_https(
    run: Run, tls_fake: FakeUpstream, trusting: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = congested(monkeypatch)
    parts = large_body()
    tls_fake.script("big", reply="read it all")
    assert run(sent(tls_fake, parts)) == ["read it all"]
    assert [request.body for request in tls_fake.chat_requests] == [b"".join(parts)]
    assert_flow_controlled(calls)


def test_untrusted_certificate_is_a_connection_failure(
    run: Run, tls_fake: FakeUpstream, fresh_tls: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    tls_fake.script("secure", reply="over tls")
    failed = run(failure(tls_fake, "secure"))
    assert failed.kind is FailureKind.connection
    assert str(failed).startswith(
        "connection failed: [SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed: "
        "unable to get local issuer certificate"
    )
    assert tls_fake.chat_requests == []
