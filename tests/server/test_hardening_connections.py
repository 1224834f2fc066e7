"""Connections: read deadlines (slowloris), refusals that reach clients that write before they read,
aborted uploads, the login limit's address, and `serve` on a busy port."""

from __future__ import annotations

import contextlib
import logging
import select
import selectors
import socket
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import httpx2
import orjson
import pytest
from typer.testing import CliRunner

from benchwarmers.cli.app import app as cli
from benchwarmers.server.body import TOO_LARGE
from benchwarmers.server.listen import late_reply
from tests.support.benchserver import BenchServer, free_port
from tests.support.logrecords import Records, recording

DEADLINE = 1.0  # the read deadlines of the servers below, in seconds
BODY_DEADLINE = 3.0  # and their deadline for a whole body
CONNECTIONS = 600
TOKEN = "admin-token-for-hardening-tests-01"


@pytest.fixture
def records() -> Iterator[Records]:
    with recording() as handler:
        yield handler


@pytest.fixture
def quick_server(tmp_path: Path) -> Iterator[BenchServer]:
    deadlines = {"header_timeout": DEADLINE, "body_timeout": DEADLINE, "body_deadline": BODY_DEADLINE}
    server = BenchServer(tmp_path / "home", listen=deadlines).start()
    try:
        yield server
    finally:
        server.stop()


def _slowloris(port: int, kind: int) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port))
    if kind == 0:  # headers that never end
        sock.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Padding: a")
    elif kind == 1:  # a body that stops halfway
        sock.sendall(
            b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b'Content-Length: 1000\r\n\r\n{"model": "bench/'
        )
    # kind 2: connects and says nothing
    return sock


def test_slowloris_connections_are_closed_within_the_read_deadline(quick_server):
    sockets = [_slowloris(quick_server.port, i % 3) for i in range(CONNECTIONS)]
    dripping = _slowloris(quick_server.port, 0)  # sends a header byte on every turn: a total deadline, not an idle one
    opened = time.monotonic()
    selector = selectors.DefaultSelector()
    for sock in [*sockets, dripping]:
        sock.setblocking(False)
        selector.register(sock, selectors.EVENT_READ)
    still_open = {*sockets, dripping}
    replies: dict[socket.socket, bytes] = {}
    try:
        while still_open and time.monotonic() - opened < DEADLINE + 15:  # bounded: it stops by itself
            if dripping in still_open:
                with contextlib.suppress(OSError):  # closed under it: the select below sees it
                    dripping.send(b"a")
            for key, _ in selector.select(timeout=0.1):
                sock = key.fileobj
                assert isinstance(sock, socket.socket)
                try:
                    data = sock.recv(65536)
                except ConnectionResetError:
                    data = b""
                if data:
                    replies[sock] = replies.get(sock, b"") + data
                else:
                    selector.unregister(sock)
                    still_open.discard(sock)
        closed_within = time.monotonic() - opened
    finally:
        for sock in [*sockets, dripping]:
            sock.close()
    assert len(still_open) == 0
    # A body that stopped halfway is answered 408 (no reply had started); the others are just closed.
    assert replies == {sock: late_reply(True, DEADLINE) for i, sock in enumerate(sockets) if i % 3 == 1}
    assert late_reply(True, DEADLINE).startswith(b"HTTP/1.1 408 Request Timeout\r\n")
    assert orjson.loads(late_reply(True, DEADLINE).partition(b"\r\n\r\n")[2]) == {
        "error": {
            "message": "no byte of the request body arrived for 1 s, so the connection is closed: send the body "
            "without pauses",
            "type": "invalid_request_error",
            "param": None,
            "code": "request_timeout",
        }
    }
    assert closed_within < DEADLINE + 5
    assert httpx2.get(f"{quick_server.url}/healthz").status_code == 200


def test_a_dripping_body_is_answered_408_and_closed_by_the_body_deadline(quick_server, records):
    with socket.create_connection(("127.0.0.1", quick_server.port)) as sock:
        sock.sendall(
            b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b"Content-Length: 100000\r\n\r\n"
        )
        sock.setblocking(False)
        started, reply = time.monotonic(), b""
        closed = False
        while not closed and time.monotonic() - started < BODY_DEADLINE + 15:  # bounded: it stops by itself
            with contextlib.suppress(OSError):  # closed under it: the read below sees it
                sock.send(b" ")  # a byte a quarter of the stall timeout: it never stalls, it is only slow
            readable, _, _ = select.select([sock], [], [], DEADLINE / 4)
            if readable:
                data = sock.recv(65536)
                reply += data
                closed = not data
        took = time.monotonic() - started
    head, _, payload = reply.partition(b"\r\n\r\n")
    assert head.split(b"\r\n") == [
        b"HTTP/1.1 408 Request Timeout",
        b"content-type: application/json",
        b"content-length: %d" % len(payload),
        b"connection: close",
    ]
    assert orjson.loads(payload) == {
        "error": {
            "message": "the request body did not arrive within 3 s of its headers, so the connection is closed: "
            "send it faster (on a slow link, send images as https:// URLs; BENCHWARMERS_BODY_DEADLINE sets the time)",
            "type": "invalid_request_error",
            "param": None,
            "code": "request_timeout",
        }
    }
    assert closed and took < BODY_DEADLINE + 5
    assert records.arrived.wait(timeout=10)
    assert [line.partition(" (request req-")[0] for _, line in records.lines] == [
        "benchwarmers.server INFO request body too slow, answered 408 and closed: POST /v1/chat/completions"
    ]
    assert httpx2.get(f"{quick_server.url}/healthz").status_code == 200


def test_a_body_that_keeps_coming_is_not_cut_off(quick_server):
    body = orjson.dumps({"call": "p20260101-000000-0000.member1", "useful": True, "note": "x" * 400})
    pieces = [body[i : i + 120] for i in range(0, len(body), 120)]
    with socket.create_connection(("127.0.0.1", quick_server.port)) as sock:
        sock.sendall(
            b"POST /bench/verdict HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b"Connection: close\r\nContent-Length: %d\r\n\r\n" % len(body)
        )
        for piece in pieces:  # a slow client: each pause is shorter than the deadline, the whole is longer
            time.sleep(DEADLINE / 3)
            sock.sendall(piece)
        reply = b""
        while chunk := sock.recv(65536):
            reply += chunk
    assert len(pieces) * DEADLINE / 3 > DEADLINE
    head, _, payload = reply.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 404 ")
    assert orjson.loads(payload)["error"]["message"] == (
        "no call 'p20260101-000000-0000.member1': use a call id from a panel's bench.seats"
    )


def test_a_kept_alive_connection_gets_a_new_header_deadline_for_each_request(quick_server):
    with socket.create_connection(("127.0.0.1", quick_server.port)) as sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        first = b""
        while not first.endswith(b"}"):  # the whole first reply (a small JSON object)
            first += sock.recv(65536)
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Padding: a")  # never finished
        sock.settimeout(DEADLINE + 10)
        assert sock.recv(65536) == b""  # closed by the deadline, not by the 10 s bound here
    assert first.startswith(b"HTTP/1.1 200 OK\r\n")


# -- refusals that reach clients which write the whole body before reading --------------------------


def _urllib_post(url: str, size: int, **headers: str) -> urllib.error.HTTPError:
    head = b'{"model": "bench/solo", "messages": [{"role": "user", "content": "'
    body = head + b"x" * (size - len(head) - 4) + b'"}]}'
    request = urllib.request.Request(url, data=body, headers={"Content-Type": "application/json", **headers})
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=60)
    return refused.value


def test_urllib_gets_its_413_for_a_25_mb_body(quick_server):
    refused = _urllib_post(f"{quick_server.v1}/chat/completions", 25_000_000)
    assert refused.code == 413
    assert orjson.loads(refused.read()) == {
        "error": {"message": TOO_LARGE, "type": "invalid_request_error", "param": None, "code": "request_too_large"}
    }


def test_urllib_gets_its_401_for_a_large_body_without_a_key(tmp_path):
    server = BenchServer(tmp_path / "home", require_keys=True).start()
    try:
        refused = _urllib_post(f"{server.v1}/chat/completions", 5_000_000)
    finally:
        server.stop()
    assert refused.code == 401
    assert orjson.loads(refused.read())["error"]["code"] == "missing_api_key"


def test_an_aborted_upload_is_one_info_line(quick_server, records):
    with socket.create_connection(("127.0.0.1", quick_server.port)) as sock:
        sock.sendall(
            b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b'Content-Length: 100000\r\n\r\n{"model": "bench/'
        )
    assert records.arrived.wait(timeout=10)
    assert len(records.lines) == 1
    level, line = records.lines[0]
    assert level == logging.INFO
    assert line.startswith(
        "benchwarmers.server INFO client left while sending its request body: POST /v1/chat/completions (request req-"
    )
    assert httpx2.get(f"{quick_server.url}/healthz").status_code == 200
    assert len(records.lines) == 1


# -- the login limit's address ------------------------------------------------------------------------


def _wrong_logins(server: BenchServer, forwarded_for: list[str]) -> list[int]:
    return [
        httpx2.post(
            f"{server.url}/login", data={"token": "guess", "next": "/"}, headers={"X-Forwarded-For": address}
        ).status_code
        for address in forwarded_for
    ]


ROTATED = [f"198.51.100.{n}" for n in range(11)]


def test_the_login_limit_ignores_x_forwarded_for_from_an_untrusted_peer(tmp_path):
    server = BenchServer(tmp_path / "home", admin_token=TOKEN).start()
    try:
        assert _wrong_logins(server, ROTATED) == [401] * 10 + [429]
    finally:
        server.stop()


def test_behind_a_trusted_proxy_the_login_limit_counts_each_forwarded_address(tmp_path):
    server = BenchServer(tmp_path / "home", admin_token=TOKEN, trusted_proxies="127.0.0.1, ::1").start()
    try:
        assert _wrong_logins(server, ROTATED) == [401] * 11
        assert _wrong_logins(server, ["203.0.113.9"] * 11) == [401] * 10 + [429]
    finally:
        server.stop()


def test_trusted_proxies_must_be_addresses(tmp_path, monkeypatch):
    monkeypatch.setenv("BENCHWARMERS_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("BENCHWARMERS_TRUSTED_PROXIES", "127.0.0.1,proxy.lan")
    result = CliRunner().invoke(cli, ["serve"])
    assert (result.exit_code, result.stdout) == (1, "")
    assert result.stderr == (
        "error: settings: Value error, BENCHWARMERS_TRUSTED_PROXIES: 'proxy.lan' is not an IP address or network "
        "(give your reverse proxy's address, e.g. 127.0.0.1 or 172.17.0.0/16)\n"
    )


# -- serve on a busy port ------------------------------------------------------------------------------


def test_serve_on_a_busy_port_fails_at_once_with_one_line(tmp_path, monkeypatch):
    monkeypatch.setenv("BENCHWARMERS_HOME", str(tmp_path / "home"))
    port = free_port()
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", port))
        busy.listen()
        result = CliRunner().invoke(cli, ["serve", "--bind", f"127.0.0.1:{port}"])
    assert (result.exit_code, result.stdout) == (1, "")  # nothing said "serving on" first
    assert result.stderr == (
        f"error: cannot listen on 127.0.0.1:{port}: the port is already in use (by another bench, or another "
        "program). Stop that, or choose another port with --bind or BENCH_BIND.\n"
    )
    assert not (tmp_path / "home").exists()


def test_a_port_that_is_not_ascii_digits_is_refused_as_such(tmp_path, monkeypatch):
    monkeypatch.setenv("BENCHWARMERS_HOME", str(tmp_path / "home"))
    result = CliRunner().invoke(cli, ["serve", "--bind", "127.0.0.1:²"])
    assert (result.exit_code, result.stderr) == (
        1,
        "error: bind address '127.0.0.1:²' is not host[:port] with a port from 1 to 65535\n",
    )
