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
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import orjson

from benchwarmers import __version__
from benchwarmers.upstream.anthropic_client import (
    ANTHROPIC_KIND,
    api_path,
    auth_headers,
    messages_request,
    read_message,
)
from benchwarmers.upstream.failures import (
    FailureKind,
    UpstreamFailure,
    classify_response,
    connection_failure,
    error_message_from_body,
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
from benchwarmers.upstream.responses_client import read_response, responses_request
from benchwarmers.upstream.truncation import cap_text, read_limit, salvage

# aiohttp is a third of a CLI command's start-up: imported where a session is made or used, so a
# command that never calls a provider (`collection list`) does not load it.
if TYPE_CHECKING:
    import aiohttp

# A listing or admin reply bigger than this is refused; a seat's reply is read up to its answer cap
# instead (upstream/truncation.py).
MAX_RESPONSE_BYTES = 64 * 1024 * 1024
USER_AGENT = f"benchwarmers/{__version__}"
_DROPPED_FIELDS = frozenset({"model", "stream", "stream_options", "bench"})


@dataclass(frozen=True)
class EndpointRef:
    name: str
    base_url: str
    api_key: str | None
    kind: str = "openai"


class ChatBody:
    """The caller's request, serialised once per panel and stamped with each seat's model.

    The messages (possibly megabytes of images) are encoded once and shared by every seat:
    `parts_for` returns the body as pieces that reference them, never a copy per seat.
    """

    __slots__ = ("_fields", "_head", "_messages")

    def __init__(self, fields: dict[str, Any], messages: Any) -> None:
        self._fields = fields
        self._messages = b"" if messages is None else orjson.dumps(messages)
        self._head = self._encode_fields(fields)

    @classmethod
    def from_request(cls, body: Mapping[str, Any]) -> ChatBody:
        """Keep every field except `model`, `stream`, `stream_options` and `bench`."""
        fields = {key: value for key, value in body.items() if key not in _DROPPED_FIELDS}
        messages = fields.pop("messages", None)
        return cls(fields, messages)

    @staticmethod
    def _encode_fields(fields: Mapping[str, Any]) -> bytes:
        # Everything between `"stream":false` and the messages.
        rest = orjson.dumps(dict(fields))[1:-1]
        return b"," + rest if rest else b""

    def parts_for(self, model_id: str, overrides: Mapping[str, Any] | None = None) -> tuple[bytes, ...]:
        """The JSON body for one seat as pieces: `model` first, `stream: false`, the shared messages.

        `overrides` replace top-level fields for this seat only (a value of None removes one).
        """
        head = self._head
        if overrides:
            merged = {**self._fields, **overrides}
            head = self._encode_fields({key: value for key, value in merged.items() if value is not None})
        start = b'{"model":' + orjson.dumps(model_id) + b',"stream":false' + head
        if not self._messages:
            return (start + b"}",)
        return (start + b',"messages":', self._messages, b"}")

    def for_model(self, model_id: str, overrides: Mapping[str, Any] | None = None) -> bytes:
        """The same body as one `bytes` (a copy: seats use `parts_for`)."""
        return b"".join(self.parts_for(model_id, overrides))


@dataclass
class ChatResult:
    answer: str
    usage: dict[str, Any] | None
    status: int
    headers: dict[str, str]
    seconds: float
    model: str | None
    tool_calls: list[dict[str, Any]] = field(default_factory=list)  # chat-completion shape
    finish_reason: str | None = None
    truncated_at: int | None = None  # the answer was cut to its first this many bytes (the answer cap)


@dataclass
class _Reply:
    status: int
    headers: dict[str, str]
    body: bytes
    seconds: float
    cut: bool = False  # the body is only its first bytes: the read stopped at its limit


def bounded(result: ChatResult, cap: int | None, cut: bool = False) -> ChatResult:
    """The result with its answer at most `cap` bytes. A `cut` reply (read only in part) keeps no tool
    calls or usage: what the salvage closed of them is not what the model sent."""
    if cap is not None:
        result.answer, result.truncated_at = cap_text(result.answer, cap)
    if cut:
        result.tool_calls, result.usage = [], None
        if result.truncated_at is None:
            result.truncated_at = len(result.answer.encode("utf-8", "surrogatepass"))
    if result.truncated_at is not None:
        result.finish_reason = "length"
    return result


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
    if endpoint.kind == ANTHROPIC_KIND:
        return auth_headers(endpoint.api_key)
    return {"Authorization": f"Bearer {endpoint.api_key}"} if endpoint.api_key else {}


def _secrets(endpoint: EndpointRef) -> tuple[str, ...]:
    return (endpoint.api_key,) if endpoint.api_key else ()


def _origin(url: str) -> tuple[str, str]:
    parts = urlsplit(url)
    return parts.scheme.lower(), parts.netloc.rpartition("@")[2].lower()


def _text_answer(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(part["text"] for part in content if isinstance(part, dict) and isinstance(part.get("text"), str))
    return str(content)


def _not_json(reply: _Reply, secrets: tuple[str, ...]) -> UpstreamFailure:
    snippet = error_message_from_body(reply.body[:2000])
    return UpstreamFailure(
        FailureKind.upstream_error,
        f"response is not JSON: {snippet}" if snippet else "empty response",
        status=reply.status,
        headers=reply.headers,
        secrets=secrets,
    )


def _parsed(reply: _Reply, secrets: tuple[str, ...]) -> Any:
    """The reply's JSON; of a cut reply, what its first bytes hold (upstream/truncation.py)."""
    if reply.cut:
        data = salvage(reply.body)
        if data is None:
            raise _not_json(reply, secrets)
        return data
    try:
        return orjson.loads(reply.body)
    except orjson.JSONDecodeError:
        raise _not_json(reply, secrets) from None


def _chat_result(reply: _Reply, secrets: tuple[str, ...]) -> ChatResult:
    data = _parsed(reply, secrets)
    if isinstance(data, list) or (isinstance(data, dict) and data.get("error")):
        raise classify_response(reply.status, reply.headers, reply.body, secrets)
    choices = data.get("choices") if isinstance(data, dict) else None
    choice = choices[0] if isinstance(choices, list) and choices else None
    if not isinstance(choice, dict):
        raise UpstreamFailure(
            FailureKind.upstream_error,
            "response is not a chat completion (no choices)",
            status=reply.status,
            headers=reply.headers,
        )
    if choice.get("error"):
        # OpenRouter reports a provider failure inside the choice.
        raise classify_response(reply.status, reply.headers, orjson.dumps({"error": choice["error"]}), secrets)
    message = choice.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    usage = data.get("usage")
    model = data.get("model")
    finish = choice.get("finish_reason")
    return ChatResult(
        answer=_text_answer(content),
        usage=usage if isinstance(usage, dict) else None,
        status=reply.status,
        headers=reply.headers,
        seconds=reply.seconds,
        model=model if isinstance(model, str) else None,
        tool_calls=tool_calls_of(message),
        finish_reason=finish if isinstance(finish, str) else None,
    )


def tool_calls_of(message: Any) -> list[dict[str, Any]]:
    """A chat message's function calls as `{id, type, function: {name, arguments}}`, arguments a string
    (some providers send them as an object); anything else in the list is left out."""
    raw = message.get("tool_calls") if isinstance(message, dict) else None
    found: list[dict[str, Any]] = []
    for index, call in enumerate(raw if isinstance(raw, list) else ()):
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(function, dict) or not isinstance(function.get("name"), str):
            continue
        arguments = function.get("arguments")
        if not isinstance(arguments, str):
            arguments = orjson.dumps(arguments if arguments is not None else {}).decode()
        call_id = call.get("id")
        found.append(
            {
                "id": call_id if isinstance(call_id, str) and call_id else f"call_{index}",
                "type": "function",
                "function": {"name": function["name"], "arguments": arguments},
            }
        )
    return found


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
        reply = await self._post_seat(endpoint, "/chat/completions", body, timeout, cap)
        return bounded(_chat_result(reply, _secrets(endpoint)), cap, reply.cut)

    async def respond(
        self,
        endpoint: EndpointRef,
        body: bytes | Sequence[bytes],
        timeout: float,  # noqa: ASYNC109
        cap: int | None = None,
    ) -> ChatResult:
        """A seat on a Responses-API endpoint: the chat body sent as `POST {base}/responses`, the
        Response read back as a chat result (upstream/responses_client.py)."""
        reply = await self._post_seat(endpoint, "/responses", responses_request(body), timeout, cap)
        secrets = _secrets(endpoint)
        data = _parsed(reply, secrets) if reply.cut else None
        text, calls, usage, finish, model = read_response(reply.status, reply.headers, reply.body, secrets, data)
        result = ChatResult(text, usage, reply.status, reply.headers, reply.seconds, model, calls, finish)
        return bounded(result, cap, reply.cut)

    async def message(
        self,
        endpoint: EndpointRef,
        body: bytes | Sequence[bytes],
        timeout: float,  # noqa: ASYNC109
        cap: int | None = None,
        output_cap: int | None = None,
    ) -> ChatResult:
        """A seat on an Anthropic-format endpoint: the chat body sent as `POST {base}/v1/messages`, the
        Message read back as a chat result (upstream/anthropic_client.py). `output_cap` is the model's
        known output limit, what max_tokens defaults to."""
        path = api_path(endpoint.base_url, "messages")
        reply = await self._post_seat(endpoint, path, messages_request(body, output_cap), timeout, cap)
        secrets = _secrets(endpoint)
        data = _parsed(reply, secrets) if reply.cut else None
        text, calls, usage, finish, model = read_message(reply.status, reply.headers, reply.body, secrets, data)
        result = ChatResult(text, usage, reply.status, reply.headers, reply.seconds, model, calls, finish)
        return bounded(result, cap, reply.cut)

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
        secrets = _secrets(endpoint)
        if not 200 <= reply.status < 300:
            raise classify_response(reply.status, reply.headers, reply.body, secrets)
        try:
            return orjson.loads(reply.body)
        except orjson.JSONDecodeError:
            raise _not_json(reply, secrets) from None

    async def _post_seat(
        self,
        endpoint: EndpointRef,
        path: str,
        body: bytes | Sequence[bytes],
        timeout: float,  # noqa: ASYNC109
        cap: int | None = None,
    ) -> _Reply:
        """One seat's POST on `http1` (a status other than 2xx is raised as its failure): `timeout` covers
        the wait for a slot, the connection and the reply.
        With an answer `cap` the reply is read up to `read_limit(cap)` bytes and may come back `cut`
        (its connection closed, never reused); without one, a reply past MAX_RESPONSE_BYTES fails."""
        limit = MAX_RESPONSE_BYTES if cap is None else read_limit(cap)
        parts = (body,) if isinstance(body, bytes) else tuple(body)
        secrets = _secrets(endpoint)
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
        return _Reply(reply.status, reply.headers, reply.body, time.perf_counter() - started, reply.cut)

    async def _exchange(
        self,
        endpoint: EndpointRef,
        method: str,
        url: str,
        content: bytes | None,
        timeout: float,  # noqa: ASYNC109
        *,
        send_key: bool,
    ) -> _Reply:
        headers = {"content-type": "application/json"} if content is not None else {}
        if send_key:
            headers |= key_headers(endpoint)
        import aiohttp

        secrets = _secrets(endpoint)
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
                    return _Reply(
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
