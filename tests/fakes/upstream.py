"""A fake OpenAI-compatible provider: a real HTTP/1.1 server on 127.0.0.1.

It runs on its own event loop (a background thread, or the foreground when run as a module), so
tests drive it over real sockets exactly like a provider: latency, scripted errors with headers,
Gemini-style array bodies, streaming, connections dropped mid-body and requests that never end.

    python -m tests.fakes.upstream --port 8999 --latency 0.05

runs it standalone for load tests: every model answers after that latency.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import random
import re
import ssl
import threading
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any

import orjson

from tests.fakes import agents, anthropic
from tests.fakes import behaviour as scripted
from tests.fakes.behaviour import Behaviour, echoed, hostile_chunks, text_chars
from tests.fakes.ratelimit import RateLimit, admit
from tests.fakes.wire import Response, default_error, encode, error_body, read_chunked, send

_WORDS = re.compile(r"\S+\s*")


@dataclass
class RecordedRequest:
    method: str
    path: str
    query: str
    headers: dict[str, str]
    json: Any
    body: bytes
    at: float = field(default_factory=time.monotonic)  # when it arrived
    limited: bool = False  # answered 429 because a rate limit (`FakeUpstream.limit`) was used up


@dataclass
class _Listing:
    payload: Any
    status: int
    keyed: bool


class FakeUpstream:
    """Scripted OpenAI-compatible provider on 127.0.0.1; `base_url` ends in `/v1`. The same models
    answer in Anthropic's format under `anthropic_url` (tests/fakes/anthropic.py)."""

    def __init__(
        self,
        port: int = 0,
        *,
        host: str = "127.0.0.1",
        default_latency: float | tuple[float, float] | None = None,
        require_key: str | None = None,
        record: bool = True,
        tls: ssl.SSLContext | None = None,  # served over https with this context's certificate
    ) -> None:
        self.host = host
        self.tls = tls
        self.port = port
        # None: unscripted models answer 404 like OpenAI; a number (or a range to draw from): every model answers.
        self.default_latency = default_latency
        self.require_key = require_key
        self.record = record
        self.requests: list[RecordedRequest] = []
        self.in_flight = 0
        self.peak_in_flight = 0
        # Accepted TCP connections: shows whether a client pools keep-alive connections.
        self.connections_opened = 0
        self._scripts: dict[str, Behaviour] = {}
        self._listings: dict[str, _Listing] = {}
        self._passthrough: dict[str, str] = {}
        self._limits: dict[str | None, RateLimit] = {}  # None: the whole endpoint
        self.clock: Callable[[], float] = time.time  # the wall clock daily allowances reset by
        # What the Anthropic listing says of a model beyond its id (max_input_tokens, capabilities...).
        self.anthropic_facts: dict[str, dict[str, Any]] = {}
        self.anthropic_page = 1000  # the most models a listing page holds, whatever `limit` asks
        self._ids = itertools.count(1)
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self._idle: set[asyncio.StreamWriter] = set()  # kept-alive connections waiting for a request
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    # -- scripting -------------------------------------------------------------------------

    def script(self, model_id: str, **behaviour: Any) -> None:
        """Set how `model_id` answers; see `Behaviour` for the knobs (unknown ones raise TypeError).

        `headers` ride on every response of that model; `body` replaces the response body
        (any status, 200 included); error statuses without `body` get OpenAI-style bodies.
        """
        self._scripts[model_id] = Behaviour(**behaviour)

    def listing(self, path: str, payload: Any, *, status: int = 200, keyed: bool | None = None) -> None:
        """Serve `payload` as JSON at `path` (GET or POST).

        `keyed` (default: on for `/api/show`): `payload` is a dict keyed by the posted `model` or
        `name`; an unknown name gets Ollama's 404.
        """
        self._listings[path] = _Listing(payload, status, path.endswith("/api/show") if keyed is None else keyed)

    def passthrough(self, prefix: str, to: str) -> None:
        """Answer `{prefix}/{path}` as `{to}/{path}` (recorded under the path asked for), the way Open
        WebUI's `/openai/{path}` passes a request on to its first connection's base URL."""
        self._passthrough[prefix.rstrip("/") + "/"] = to.rstrip("/") + "/"

    def limit(
        self,
        *,
        requests: int | None = None,
        tokens: int | None = None,
        period: float = 60.0,
        model: str | None = None,
        announce: bool = False,
        resets: int | None = None,
    ) -> RateLimit:
        """Enforce a rate limit on one model, or (`model=None`) on every chat call together;
        `resets` (seconds after 00:00 UTC) makes it a fixed daily allowance on `clock`."""
        self._limits[model] = RateLimit(requests, tokens, 86400 if resets is not None else period, announce, resets)
        return self._limits[model]

    @property
    def refused(self) -> int:
        """Calls answered 429 because a rate limit was used up."""
        return sum(limit.refused for limit in self._limits.values())

    def reset(self) -> None:
        self._scripts.clear()
        self._listings.clear()
        self._passthrough.clear()
        self._limits.clear()
        self.clock = time.time
        self.anthropic_facts.clear()
        self.anthropic_page = 1000
        self.clear()

    def clear(self) -> None:
        self.requests.clear()
        self.peak_in_flight = self.in_flight

    @property
    def chat_requests(self) -> list[RecordedRequest]:
        return [r for r in self.requests if r.path.endswith("/chat/completions")]

    @property
    def root_url(self) -> str:
        return f"{'https' if self.tls else 'http'}://{self.host}:{self.port}"

    @property
    def base_url(self) -> str:
        return f"{self.root_url}/v1"

    @property
    def anthropic_url(self) -> str:
        """The Anthropic face's base URL, as the Anthropic SDKs (and `--kind anthropic`) take one."""
        return self.root_url + anthropic.PREFIX

    @property
    def message_requests(self) -> list[RecordedRequest]:
        return [r for r in self.requests if r.path == anthropic.PREFIX + "/v1/messages"]

    # -- lifecycle -------------------------------------------------------------------------

    def start(self) -> None:
        if self._thread is not None:
            return
        loop = asyncio.new_event_loop()
        self._loop = loop
        self._thread = threading.Thread(target=loop.run_forever, name="fake-upstream", daemon=True)
        self._thread.start()
        self._call(self._open)

    def stop(self) -> None:
        if self._thread is None or self._loop is None:
            return
        self._call(self._close)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
        self._loop.close()
        self._thread = None
        self._loop = None

    def __enter__(self) -> FakeUpstream:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def _call(self, factory: Callable[[], Coroutine[Any, Any, None]]) -> None:
        assert self._loop is not None
        asyncio.run_coroutine_threadsafe(factory(), self._loop).result(timeout=10)

    def close_idle(self) -> None:
        """Close every kept-alive connection waiting for its next request, as a server's idle timeout does."""

        async def close() -> None:
            writers = list(self._idle)
            for writer in writers:
                writer.close()
            await asyncio.gather(*(writer.wait_closed() for writer in writers), return_exceptions=True)

        self._call(close)

    async def _open(self) -> None:
        self._server = await asyncio.start_server(self._connection, self.host, self.port, backlog=2048, ssl=self.tls)
        self.port = self._server.sockets[0].getsockname()[1]

    async def _close(self) -> None:
        if self._server is not None:
            self._server.close()
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        if self._server is not None:
            await self._server.wait_closed()
            self._server = None
        await asyncio.sleep(0)

    async def serve_forever(self) -> None:
        """Run in the foreground (standalone mode) until cancelled."""
        await self._open()
        print(f"fake upstream at {self.base_url}", flush=True)
        assert self._server is not None
        try:
            await self._server.serve_forever()
        finally:
            await self._close()

    # -- HTTP/1.1 ----------------------------------------------------------------------------

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        self.connections_opened += 1
        try:
            while True:
                self._idle.add(writer)
                head = await reader.readuntil(b"\r\n\r\n")
                self._idle.discard(writer)
                lines = head[:-4].decode("latin-1").split("\r\n")
                method, target, version = lines[0].split(" ", 2)
                headers: dict[str, str] = {}
                for line in lines[1:]:
                    name, _, value = line.partition(":")
                    headers[name.strip().lower()] = value.strip()
                if headers.get("transfer-encoding", "").lower() == "chunked":
                    body = await read_chunked(reader)
                else:
                    length = int(headers.get("content-length") or 0)
                    body = await reader.readexactly(length) if length else b""
                keep = await self._respond(method, target, headers, body, writer)
                if not keep or version != "HTTP/1.1" or headers.get("connection", "").lower() == "close":
                    break
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError, ValueError):
            pass
        except asyncio.CancelledError:
            # Only `stop` cancels these; ending quietly keeps asyncio from logging it as an error.
            pass
        finally:
            self._tasks.discard(task)
            self._idle.discard(writer)
            writer.close()

    async def _respond(
        self, method: str, target: str, headers: dict[str, str], body: bytes, writer: asyncio.StreamWriter
    ) -> bool:
        path, _, query = target.partition("?")
        try:
            data = orjson.loads(body) if body else None
        except orjson.JSONDecodeError:
            data = None
        recorded = RecordedRequest(method, path, query, headers, data, body)
        if self.record:
            self.requests.append(recorded)
        prefix = next((p for p in self._passthrough if path.startswith(p)), None)
        if prefix is not None:
            path = self._passthrough[prefix] + path.removeprefix(prefix)
        if path.startswith(anthropic.PREFIX + "/"):
            return await self._anthropic(method, path, query, headers, data, writer, recorded)
        token = headers.get("authorization", "").removeprefix("Bearer ").strip()
        if self.require_key is not None and token != self.require_key:
            return await send(writer, Response(401, orjson.dumps(default_error(401, "", token))))
        if path in self._listings:
            return await send(writer, self._serve_listing(self._listings[path], data))
        if path.endswith("/chat/completions") and method == "POST":
            return await self._chat(data, token, writer, recorded)
        if path.endswith("/responses") and method == "POST":
            return await self._chat(data, token, writer, recorded, face="responses")
        if path == "/v1/models":
            models = [
                {"id": model, "object": "model", "created": 1_700_000_000, "owned_by": "fake"}
                for model in self._scripts
            ]
            return await send(writer, Response(200, orjson.dumps({"object": "list", "data": models})))
        error = error_body(f"Unknown path {path}", "invalid_request_error", "unknown_url")
        return await send(writer, Response(404, orjson.dumps(error)))

    async def _anthropic(
        self,
        method: str,
        path: str,
        query: str,
        headers: dict[str, str],
        data: Any,
        writer: asyncio.StreamWriter,
        recorded: RecordedRequest,
    ) -> bool:
        refused = anthropic.refusal(headers, self.require_key)
        if refused is not None:
            return await send(writer, refused, {"request-id": f"req_{next(self._ids)}"})
        if path in self._listings:
            return await send(writer, self._serve_listing(self._listings[path], data))
        if path == anthropic.PREFIX + "/v1/models" and method == "GET":
            page = anthropic.listing(list(self._scripts), self.anthropic_facts, query, self.anthropic_page)
            return await send(writer, page)
        if path == anthropic.PREFIX + "/v1/messages" and method == "POST":
            return await self._chat(data, anthropic.api_key(headers), writer, recorded, face="anthropic")
        return await send(writer, anthropic.error_response(404, f"Not found: {method} {path}"))

    def _serve_listing(self, listing: _Listing, data: Any) -> Response:
        payload = listing.payload
        if listing.keyed:
            name = (data.get("model") or data.get("name")) if isinstance(data, dict) else None
            if not isinstance(payload, dict) or name not in payload:
                return Response(404, orjson.dumps({"error": f"model '{name}' not found"}))
            payload = payload[name]
        raw, content_type = encode(payload)
        return Response(listing.status, raw, content_type)

    def _behaviour(self, model: str) -> Behaviour | None:
        behaviour = self._scripts.get(model)
        if behaviour is None and self.default_latency is not None:
            behaviour = Behaviour(latency=self.default_latency)
            self._scripts.setdefault(model, behaviour)
        return behaviour

    async def _chat(
        self, data: Any, token: str, writer: asyncio.StreamWriter, recorded: RecordedRequest, face: str = "chat"
    ) -> bool:
        """A chat completion, a Responses-API call or (`face="anthropic"`) a Messages call: the same
        models, limits and failures."""
        speaks = anthropic.in_words if face == "anthropic" else lambda response, *_: response
        if not isinstance(data, dict):
            error = error_body("We could not parse the JSON body of your request.", "invalid_request_error", None)
            return await send(writer, speaks(Response(400, orjson.dumps(error)), Behaviour(), "", {}))
        model = str(data.get("model"))
        if face == "responses":
            data = agents.chat_view(data)
        elif face == "anthropic":
            data = anthropic.chat_view(data)
        behaviour = self._behaviour(model)
        if behaviour is None:
            missing = Response(404, orjson.dumps(default_error(404, model, token)))
            return await send(writer, speaks(missing, Behaviour(), model, data))
        limits = [limit for key, limit in self._limits.items() if key is None or key == model]
        refused, announced = admit(limits, model, data, recorded.at, self.clock())
        if refused is not None:
            recorded.limited = True
            return await send(writer, speaks(refused, behaviour, model, data), announced)
        self.in_flight += 1
        self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
        try:
            latency = behaviour.latency
            delay = random.uniform(*latency) if isinstance(latency, tuple) else latency
            if delay > 0:
                await asyncio.sleep(delay)
            if behaviour.hang:
                await asyncio.Event().wait()
            extra = {**behaviour.headers, **announced}
            extra.setdefault("x-request-id", f"req_{next(self._ids)}")
            if behaviour.raw is not None:
                return await scripted.by_hand(behaviour, writer)
            if behaviour.truncated_chunks or behaviour.trickle > 0:
                return await hostile_chunks(behaviour, extra, writer)
            if behaviour.huge:
                return await scripted.huge_answer(behaviour, model, extra, writer, face)
            failure = scripted.failure(behaviour, model, token, data)
            if failure is not None and behaviour.body is None:  # a scripted body is sent as it is
                failure = speaks(failure, behaviour, model, data)
            if failure is None and face == "responses":
                return await self._respond_responses(behaviour, model, token, data, extra)(writer)
            if failure is None and face == "anthropic":
                return await self._respond_message(behaviour, model, token, data, extra)(writer)
            if failure is None and data.get("stream"):
                return await self._stream(behaviour, model, token, data, extra, writer)
            response = failure or Response(200, orjson.dumps(self._completion(behaviour, model, token, data)))
            return await send(writer, response, extra, drop=behaviour.drop)
        finally:
            self.in_flight -= 1

    def _answer(self, behaviour: Behaviour, model: str, token: str, data: dict[str, Any]) -> str:
        if behaviour.empty:
            return ""
        if behaviour.echo:
            return echoed(token, data)
        if behaviour.respond is not None:
            return behaviour.respond(data)
        return behaviour.reply if behaviour.reply is not None else f"answer from {model}"

    def _usage(self, behaviour: Behaviour, data: dict[str, Any], answer: str) -> dict[str, Any]:
        if behaviour.usage is not None:
            return behaviour.usage
        prompt, completion = scripted.tokens(text_chars(data)), scripted.tokens(len(answer))
        return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}

    def _respond_responses(
        self, behaviour: Behaviour, model: str, token: str, data: dict[str, Any], extra: dict[str, str]
    ) -> Callable[[asyncio.StreamWriter], Coroutine[Any, Any, bool]]:
        calls = agents.tool_calls_for(behaviour.tool_call, behaviour.tool_name, data)
        answer = "" if calls else self._answer(behaviour, model, token, data)
        final = agents.response_object(model, answer, calls, self._usage(behaviour, data, answer))
        if data.get("stream"):
            return lambda writer: agents.stream_events(writer, agents.response_events(final), extra, behaviour.drop)
        return lambda writer: send(writer, Response(200, orjson.dumps(final)), extra, drop=behaviour.drop)

    def _respond_message(
        self, behaviour: Behaviour, model: str, token: str, data: dict[str, Any], extra: dict[str, str]
    ) -> Callable[[asyncio.StreamWriter], Coroutine[Any, Any, bool]]:
        calls = agents.tool_calls_for(behaviour.tool_call, behaviour.tool_name, data)
        answer = "" if calls else self._answer(behaviour, model, token, data)
        final = anthropic.message(model, answer, calls, anthropic.usage(behaviour.usage, data, answer))
        extra = {"request-id": extra.pop("x-request-id", ""), **extra}
        if data.get("stream"):
            return lambda writer: agents.stream_events(writer, anthropic.events(final), extra, behaviour.drop)
        return lambda writer: send(writer, Response(200, orjson.dumps(final)), extra, drop=behaviour.drop)

    def _completion(self, behaviour: Behaviour, model: str, token: str, data: dict[str, Any]) -> dict[str, Any]:
        calls = agents.tool_calls_for(behaviour.tool_call, behaviour.tool_name, data)
        answer = "" if calls else self._answer(behaviour, model, token, data)
        message = {"role": "assistant", "content": None, "tool_calls": calls} if calls else None
        choice = {
            "index": 0,
            "message": message or {"role": "assistant", "content": answer},
            "logprobs": None,
            "finish_reason": "tool_calls" if calls else "stop",
        }
        return {
            "id": f"chatcmpl-{next(self._ids)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [choice],
            "usage": self._usage(behaviour, data, answer),
        }

    async def _stream(
        self,
        behaviour: Behaviour,
        model: str,
        token: str,
        data: dict[str, Any],
        extra: dict[str, str],
        writer: asyncio.StreamWriter,
    ) -> bool:
        calls = agents.tool_calls_for(behaviour.tool_call, behaviour.tool_name, data)
        answer = "" if calls else self._answer(behaviour, model, token, data)
        options = data.get("stream_options")
        with_usage = isinstance(options, dict) and bool(options.get("include_usage"))
        base: dict[str, Any] = {
            "id": f"chatcmpl-{next(self._ids)}",
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": model,
        }

        def chunk(delta: dict[str, Any], finish: str | None) -> dict[str, Any]:
            choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
            return {**base, "choices": [choice], **({"usage": None} if with_usage else {})}

        events = [chunk({"role": "assistant", "content": ""}, None)]
        events += [chunk({"content": piece}, None) for piece in _WORDS.findall(answer)]
        events += [chunk(delta, None) for delta in agents.chat_deltas(calls)]
        events.append(chunk({}, "tool_calls" if calls else "stop"))
        if with_usage:
            events.append({**base, "choices": [], "usage": self._usage(behaviour, data, answer)})
        head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\n"
        head += "transfer-encoding: chunked\r\n" + "".join(f"{k}: {v}\r\n" for k, v in extra.items())
        writer.write(head.encode("latin-1") + b"\r\n")
        frames = [b"data: " + orjson.dumps(event) + b"\n\n" for event in events] + [b"data: [DONE]\n\n"]
        for index, frame in enumerate(frames):
            if index and behaviour.slow_stream > 0:
                await asyncio.sleep(behaviour.slow_stream)
            writer.write(b"%x\r\n%s\r\n" % (len(frame), frame))
            await writer.drain()
            if behaviour.drop and index == 1:
                return False
        writer.write(b"0\r\n\r\n")
        await writer.drain()
        return True


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Fake OpenAI-compatible provider for load tests.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--latency", type=float, default=0.05, help="seconds before every answer")
    parser.add_argument("--require-key", default=None, help="answer 401 unless this bearer key is sent")
    parser.add_argument(
        "--reviewers",
        action="store_true",
        help="serve only the suite's four scripted reviewers (finder, flag-all, flag-none, wrong-line)",
    )
    args = parser.parse_args(argv)
    fake = FakeUpstream(
        args.port,
        host=args.host,
        default_latency=None if args.reviewers else args.latency,
        require_key=args.require_key,
        record=False,
    )
    if args.reviewers:
        from benchwarmers.bench.suite.tasks import load_tasks
        from tests.fakes import reviewers

        tasks = load_tasks()
        for name, make in reviewers.REVIEWERS.items():
            fake.script(name, respond=make(tasks), latency=args.latency)
    run_forever(fake)


def run_forever(fake: FakeUpstream) -> None:
    """Serve in the foreground until interrupted (load tests run the fake in its own process)."""
    try:
        # Optional speed-up for load tests; plain asyncio works too.
        import uvloop

        runner: Callable[[Coroutine[Any, Any, None]], None] = uvloop.run
    except ImportError:
        runner = asyncio.run
    with contextlib.suppress(KeyboardInterrupt):
        runner(fake.serve_forever())


if __name__ == "__main__":
    main()
