"""The seat client's HTTP/1.1 (upstream/http1.py) connections to the fake provider: keep-alive (the
idle expiry, servers closing idle or fresh connections, the one re-send), large requests sent under
flow control, and TLS with a CA the user trusts, or not.

Every test runs on asyncio's loop and on uvloop (the `run` fixture, tests/support/http1_fixtures.py).
"""

from __future__ import annotations

import asyncio
import socket
import ssl
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, cast

import pytest
import trustme

from benchwarmers.upstream import http1
from benchwarmers.upstream.client import ChatBody, UpstreamPool
from benchwarmers.upstream.failures import FailureKind
from tests.fakes.upstream import FakeUpstream
from tests.fakes.wire import completion, sized
from tests.support.http1_fixtures import HELLO, Run, answers, endpoint, failure

PATTERN = bytes(range(256)) * 64


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


def test_https_endpoint(run: Run, tls_fake: FakeUpstream, trusting: None) -> None:
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
