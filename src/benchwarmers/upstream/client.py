"""Talking to OpenAI-compatible providers: one pooled client per endpoint, no retries.

The bench never retries a seat ("not retried into the limit"): every failure comes back at once
as an `UpstreamFailure` with a scrubbed message, and the bench decides what it means.

Seats go through the lean HTTP/1.1 client in `http1.py`, listings and admin calls through aiohttp.
Measured side by side against the same local provider (docs/BENCHMARKS.md), a seat call costs
httpx2 about 860 µs of CPU, aiohttp about 130 µs and `http1` less again; a five-seat panel makes five.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import orjson

from benchwarmers import __version__
from benchwarmers.upstream.anthropic_client import AnthropicClient, auth_headers
from benchwarmers.upstream.chat_wire import ChatBody as ChatBody  # where the bench has always found it
from benchwarmers.upstream.chat_wire import (
    ChatResult,
    EndpointRef,
    Reply,
    bounded,
    chat_result,
    key_secrets,
    not_json,
)
from benchwarmers.upstream.failures import (
    FailureKind,
    UpstreamFailure,
    classify_response,
    connection_failure,
    timeout_failure,
)
from benchwarmers.upstream.http1 import (
    ConnectTimeout,
    Http1Origin,
    HttpReply,
    MalformedReply,
    ReplyDropped,
    ServerClosed,
)
from benchwarmers.upstream.kinds import Wire, endpoint_kind
from benchwarmers.upstream.responses_client import ResponsesClient
from benchwarmers.upstream.truncation import read_limit

# aiohttp is a third of a CLI command's start-up: imported where a session is made or used, so a
# command that never calls a provider (`collection list`) does not load it.
if TYPE_CHECKING:
    import aiohttp

# A listing or admin reply bigger than this is refused; a seat's reply is read up to its answer cap
# instead (upstream/truncation.py).
MAX_RESPONSE_BYTES = 64 * 1024 * 1024
USER_AGENT = f"benchwarmers/{__version__}"


class _Connection:
    """One endpoint's keep-alive connections (seats on `http1`, the rest on an aiohttp session,
    made when first needed) and the gate that bounds its concurrent calls."""

    def __init__(self, per_endpoint: int, connect_timeout: float) -> None:
        self.per_endpoint = per_endpoint
        self.connect_timeout = connect_timeout
        self._session: aiohttp.ClientSession | None = None
        self.origin: Http1Origin | None = None
        self.heads: dict[tuple[str, str | None], bytes] = {}  # (base URL + path, key): request head
        self.gate = asyncio.Semaphore(per_endpoint)
        self.active = 0
        self.retired = False

    @property
    def session(self) -> aiohttp.ClientSession:
        if self._session is None:
            import aiohttp

            self._session = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(limit=self.per_endpoint, ttl_dns_cache=300),
                timeout=aiohttp.ClientTimeout(total=None, connect=self.connect_timeout),
                headers={"user-agent": USER_AGENT, "accept": "application/json"},
                trust_env=False,
                auto_decompress=True,
            )
        return self._session

    def head(self, endpoint: EndpointRef, path: str) -> tuple[Http1Origin, bytes]:
        """The seat request's origin and head for this endpoint, built once."""
        key = (endpoint.base_url + path, endpoint.api_key)
        head = self.heads.get(key)
        if self.origin is None or head is None:
            self.origin = self.origin or Http1Origin(endpoint.base_url, USER_AGENT)
            head = self.heads[key] = self.origin.head(path, None, key_headers(endpoint))
        return self.origin, head

    async def close(self) -> None:
        if self.origin is not None:
            self.origin.close()
        if self._session is not None:
            await self._session.close()


def key_headers(endpoint: EndpointRef) -> dict[str, str]:
    """How the endpoint's key is sent: a bearer token, or Anthropic's `x-api-key` and version."""
    if endpoint_kind(endpoint.kind).wire is Wire.messages:
        return auth_headers(endpoint.api_key)
    return {"Authorization": f"Bearer {endpoint.api_key}"} if endpoint.api_key else {}


def _origin(url: str) -> tuple[str, str]:
    parts = urlsplit(url)
    return parts.scheme.lower(), parts.netloc.rpartition("@")[2].lower()


class UpstreamPool:
    """Keep-alive clients per endpoint, at most `per_endpoint` calls in flight on each."""

    def __init__(self, per_endpoint: int = 16, connect_timeout: float = 5.0) -> None:
        self._per_endpoint = per_endpoint
        self._connect_timeout = connect_timeout
        self._connections: dict[str, _Connection] = {}
        self._closing: set[asyncio.Task[None]] = set()

    def configure(self, per_endpoint: int) -> None:
        """Change the bound on calls in flight per endpoint; clients are rebuilt as calls finish."""
        if per_endpoint != self._per_endpoint:
            self._per_endpoint = per_endpoint
            for name in list(self._connections):
                self.forget(name)

    def _connection(self, name: str) -> _Connection:
        connection = self._connections.get(name)
        if connection is None:
            connection = _Connection(self._per_endpoint, self._connect_timeout)
            self._connections[name] = connection
        return connection

    # The timeout is enforced inside with asyncio.timeout (covering the wait for a slot), so
    # callers pass a number rather than wrapping the call themselves.
    async def chat(
        self,
        endpoint: EndpointRef,
        body: bytes | Sequence[bytes],
        timeout: float,  # noqa: ASYNC109
        cap: int | None = None,
    ) -> ChatResult:
        """POST one chat completion. `timeout` bounds the whole call, waiting for a slot included;
        `cap` bounds the answer (in bytes) and how much of the reply is read."""
        reply = await self.post_seat(endpoint, "/chat/completions", body, timeout, cap)
        return bounded(chat_result(reply, key_secrets(endpoint)), cap, reply.cut)

    async def seat(
        self,
        endpoint: EndpointRef,
        body: bytes | Sequence[bytes],
        timeout: float,  # noqa: ASYNC109
        cap: int | None = None,
        concurrency: int | None = None,
        output_cap: int | None = None,
    ) -> ChatResult:
        """The pool as a `SeatClient` (upstream/seat_client.py): chat completions; the endpoint's own
        bound on calls at once is the pool's (`concurrency` is the llm client's), no output cap."""
        return await self.chat(endpoint, body, timeout, cap)

    async def respond(
        self,
        endpoint: EndpointRef,
        body: bytes | Sequence[bytes],
        timeout: float,  # noqa: ASYNC109
        cap: int | None = None,
    ) -> ChatResult:
        """A seat on a Responses-API endpoint (upstream/responses_client.py), sent through this pool."""
        return await ResponsesClient(self).seat(endpoint, body, timeout, cap)

    async def message(
        self,
        endpoint: EndpointRef,
        body: bytes | Sequence[bytes],
        timeout: float,  # noqa: ASYNC109
        cap: int | None = None,
        output_cap: int | None = None,
    ) -> ChatResult:
        """A seat on an Anthropic-format endpoint (upstream/anthropic_client.py), sent through this pool."""
        return await AnthropicClient(self).seat(endpoint, body, timeout, cap, output_cap=output_cap)

    async def request_json(
        self,
        endpoint: EndpointRef,
        method: str,
        url: str,
        json: Any = None,
        timeout: float = 20.0,  # noqa: ASYNC109
    ) -> Any:
        """Call a listing or admin URL and return its JSON.

        A relative `url` is appended to the endpoint's base URL. The key is sent only to the base
        URL's own origin, so an absolute URL elsewhere never receives it.
        """
        if "://" not in url:
            url = endpoint.base_url.rstrip("/") + "/" + url.lstrip("/")
        content = None if json is None else orjson.dumps(json)
        send_key = _origin(url) == _origin(endpoint.base_url)
        reply = await self._exchange(endpoint, method.upper(), url, content, timeout, send_key=send_key)
        secrets = key_secrets(endpoint)
        if not 200 <= reply.status < 300:
            raise classify_response(reply.status, reply.headers, reply.body, secrets)
        try:
            return orjson.loads(reply.body)
        except orjson.JSONDecodeError:
            raise not_json(reply, secrets) from None

    async def post_seat(
        self,
        endpoint: EndpointRef,
        path: str,
        body: bytes | Sequence[bytes],
        timeout: float,  # noqa: ASYNC109
        cap: int | None = None,
    ) -> Reply:
        """One seat's POST on `http1` (a status other than 2xx is raised as its failure): `timeout` covers
        the wait for a slot, the connection and the reply.
        With an answer `cap` the reply is read up to `read_limit(cap)` bytes and may come back `cut`
        (its connection closed, never reused); without one, a reply past MAX_RESPONSE_BYTES fails."""
        limit = MAX_RESPONSE_BYTES if cap is None else read_limit(cap)
        parts = (body,) if isinstance(body, bytes) else tuple(body)
        secrets = key_secrets(endpoint)
        async with self._turn(endpoint, timeout) as connection:
            started = time.perf_counter()
            origin, head = connection.head(endpoint, path)
            try:
                reply: HttpReply = await origin.post(
                    head, parts, limit=limit, connect_timeout=min(self._connect_timeout, timeout)
                )
            except ConnectTimeout:
                raise UpstreamFailure(FailureKind.connection, "connect timeout", secrets=secrets) from None
            except (ServerClosed, ReplyDropped, MalformedReply) as exc:
                raise UpstreamFailure(FailureKind.connection, str(exc), secrets=secrets) from None
            except OSError as exc:
                # Refused, reset, unreachable, a TLS failure: the provider is not reachable as it should be.
                raise connection_failure(exc, secrets) from None
        if reply.cut and cap is None:
            raise UpstreamFailure(
                FailureKind.upstream_error,
                f"response larger than {MAX_RESPONSE_BYTES // (1024 * 1024)} MB",
                status=reply.status,
            )
        if not 200 <= reply.status < 300:
            raise classify_response(reply.status, reply.headers, reply.body, secrets)
        return Reply(reply.status, reply.headers, reply.body, time.perf_counter() - started, reply.cut)

    async def _exchange(
        self,
        endpoint: EndpointRef,
        method: str,
        url: str,
        content: bytes | None,
        timeout: float,  # noqa: ASYNC109
        *,
        send_key: bool,
    ) -> Reply:
        headers = {"content-type": "application/json"} if content is not None else {}
        if send_key:
            headers |= key_headers(endpoint)
        import aiohttp

        secrets = key_secrets(endpoint)
        async with self._turn(endpoint, timeout) as connection:
            started = time.perf_counter()
            try:
                async with connection.session.request(
                    method,
                    url,
                    data=content,
                    headers=headers,
                    allow_redirects=False,
                    timeout=aiohttp.ClientTimeout(total=None, connect=min(self._connect_timeout, timeout)),
                ) as response:
                    body = await _read_capped(response)
                    return Reply(
                        status=response.status,
                        headers={name.lower(): value for name, value in response.headers.items()},
                        body=body,
                        seconds=time.perf_counter() - started,
                    )
            except aiohttp.ConnectionTimeoutError:
                # The host did not accept a connection in time: unreachable, not a slow model.
                raise UpstreamFailure(FailureKind.connection, "connect timeout", secrets=secrets) from None
            except aiohttp.ClientConnectorError as exc:
                raise connection_failure(exc.os_error or exc, secrets) from None
            except aiohttp.ClientPayloadError:
                raise UpstreamFailure(
                    FailureKind.connection, "the connection dropped before the whole reply arrived", secrets=secrets
                ) from None
            except aiohttp.ServerDisconnectedError:
                raise UpstreamFailure(
                    FailureKind.connection, "the server closed the connection", secrets=secrets
                ) from None
            except aiohttp.ClientError as exc:
                # Refused, reset, malformed: the provider is not reachable as it should be.
                raise connection_failure(exc, secrets) from None

    @asynccontextmanager
    async def _turn(self, endpoint: EndpointRef, timeout: float) -> AsyncIterator[_Connection]:  # noqa: ASYNC109
        """A call's turn on its endpoint: a free slot, then the call, all within `timeout`."""
        connection = self._connection(endpoint.name)
        # Counted before waiting, so `forget` never closes a client a waiting call is about to use.
        connection.active += 1
        acquired = False
        try:
            async with asyncio.timeout(timeout):
                async with connection.gate:
                    acquired = True
                    yield connection
        except TimeoutError:
            raise timeout_failure(timeout, "" if acquired else "waiting for a free connection") from None
        finally:
            connection.active -= 1
            if connection.retired and connection.active == 0:
                self._close_later(connection)

    def forget(self, endpoint_name: str) -> None:
        """Drop an endpoint's client (edited or removed); it closes once its calls finish."""
        connection = self._connections.pop(endpoint_name, None)
        if connection is None:
            return
        connection.retired = True
        if connection.active == 0:
            self._close_later(connection)

    def _close_later(self, connection: _Connection) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            # No loop: nothing is in flight, and an idle client holds no sockets worth awaiting.
            return
        task = loop.create_task(connection.close())
        self._closing.add(task)
        task.add_done_callback(self._closing.discard)

    async def aclose(self) -> None:
        connections = list(self._connections.values())
        self._connections.clear()
        for connection in connections:
            await connection.close()
        if self._closing:
            await asyncio.gather(*self._closing, return_exceptions=True)


async def _read_capped(response: aiohttp.ClientResponse) -> bytes:
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.content.iter_any():
        size += len(chunk)
        if size > MAX_RESPONSE_BYTES:
            raise UpstreamFailure(
                FailureKind.upstream_error,
                f"response larger than {MAX_RESPONSE_BYTES // (1024 * 1024)} MB",
                status=response.status,
            )
        chunks.append(chunk)
    return b"".join(chunks)
