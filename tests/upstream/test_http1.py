"""The seat client's HTTP/1.1 (upstream/http1.py) reading replies from the fake provider over real
sockets: framings, interim replies, content codings, the body and head limits.

Every test runs on asyncio's loop and on uvloop (the `run` fixture, tests/support/http1_fixtures.py). The fake
writes these replies by hand (`raw=`: pieces in turn, each its own write), so a test says byte for byte
what comes over the wire.
"""

from __future__ import annotations

import gzip
import tracemalloc
import zlib
from collections.abc import Callable

import pytest

from benchwarmers.upstream import client
from benchwarmers.upstream.failures import FailureKind
from benchwarmers.upstream.http1 import Http1Origin, HttpReply
from tests.fakes.upstream import FakeUpstream
from tests.fakes.wire import bytewise, chunked, completion, pieces, reply_head, sized
from tests.support.http1_fixtures import HELLO, Run, answers, failure, posts

# 0..255 over and over: a cut in the wrong place, or bytes out of order, never look right by accident.
PATTERN = bytes(range(256)) * 64


# -- framings ------------------------------------------------------------------------------------


def test_chunked_reply_in_several_chunks_then_reused(run: Run, fake_upstream: FakeUpstream) -> None:
    reply = reply_head("transfer-encoding: chunked") + chunked(completion("one two three"), [5, 17, 1, 40])
    fake_upstream.script("chunky", raw=(reply,), after="keep")
    assert run(answers(fake_upstream, "chunky", "chunky")) == ["one two three", "one two three"]
    assert fake_upstream.connections_opened == 1


def test_chunk_boundaries_split_across_writes(run: Run, fake_upstream: FakeUpstream) -> None:
    # Every byte its own write: sizes, extensions, CRLFs and the trailer cut anywhere the reads fall.
    body = completion("split " * 50)
    fake_upstream.script("split", raw=bytewise(reply_head("transfer-encoding: chunked") + chunked(body, [3, 1, 200])))
    (reply,) = run(posts(fake_upstream, "split"))
    assert (reply.status, reply.body, reply.cut) == (200, body, False)
    assert reply.headers["transfer-encoding"] == "chunked"


@pytest.mark.parametrize("status", ["HTTP/1.1 200 OK", "HTTP/1.0 200 OK"])
def test_reply_without_length_ends_when_the_server_closes(run: Run, fake_upstream: FakeUpstream, status: str) -> None:
    body = completion("until the end")
    fake_upstream.script("old", raw=(reply_head(status=status), body[:20], body[20:]))
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


def test_compressed_body_that_ends_early_is_a_connection_failure(run: Run, fake_upstream: FakeUpstream) -> None:
    packed = gzip.compress(completion("squeezed " * 100))
    fake_upstream.script("short", raw=(sized(packed[: len(packed) // 2], "content-encoding: gzip"),))
    failed = run(failure(fake_upstream, "short"))
    assert (failed.kind, str(failed)) == (
        FailureKind.connection,
        "connection failed: the reply's gzip body ends before its compressed stream does",
    )


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
    "chunked": lambda body: reply_head("transfer-encoding: chunked") + chunked(body, [700, 700]),
    "until-close": lambda body: reply_head() + body,
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
    reply = reply_head(f"content-length: {len(body)}", *LONG_HEADS[shape]) + body
    assert len(reply) > 16 * 1024
    fake_upstream.script("bloated", raw=(reply,), after="keep")
    failed = run(failure(fake_upstream, "bloated"))
    assert (failed.kind, str(failed)) == (FailureKind.connection, HEAD_TOO_LONG)


@pytest.mark.parametrize("shape", sorted(LONG_HEADS))
def test_head_over_16kb_in_pieces(run: Run, fake_upstream: FakeUpstream, shape: str) -> None:
    body = completion("too late")
    reply = reply_head(f"content-length: {len(body)}", *LONG_HEADS[shape]) + body
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
    endless = reply_head().removesuffix(b"\r\n") + ENDLESS_HEADS[shape]
    fake_upstream.script("endless", raw=(endless[:8000], endless[8000:]), after="hang")
    failed = run(failure(fake_upstream, "endless"))
    assert (failed.kind, str(failed)) == (FailureKind.connection, HEAD_TOO_LONG)


def test_head_just_under_16kb_is_read(run: Run, fake_upstream: FakeUpstream) -> None:
    body = completion("just fits")
    reply = reply_head(f"content-length: {len(body)}", f"x-padding: {'a' * 15000}") + body
    fake_upstream.script("roomy", raw=(reply,))
    assert run(answers(fake_upstream, "roomy")) == ["just fits"]


def test_reply_without_length_cut_by_a_reset_is_dropped(run: Run, fake_upstream: FakeUpstream) -> None:
    # Only a close ends such a reply; a reset means the server died mid-reply.
    fake_upstream.script("crash", raw=(reply_head() + completion("cut short")[:30],), after="reset")
    failed = run(failure(fake_upstream, "crash"))
    assert str(failed) == "connection failed: the connection dropped before the whole reply arrived"
