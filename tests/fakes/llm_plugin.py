"""A tiny `llm` plugin, registered through llm's real `register_models` hook (the `llm_plugin` fixture).

- `bench-echo` (sync and async) answers with what it was given: llm's system prompt, every message of
  the conversation as `role: text`, and the options it got; it reports usage 12 in, 3 out.
- `bench-sync` has only a sync model, so the client runs it in a thread; it names that thread.
- `bench-keyed` needs the key `benchtest` (`llm keys set benchtest`, or $LLMTEST_KEY), and says it.
- `bench-script` raises whatever the test put in `RAISE`, waits forever when `HANG` is set, else answers
  with the next of `REPLIES` (or "scripted answer").
- `bench-local` is sync only and needs no key, like a plugin that runs its model in this process; it
  counts its calls in `LOCAL_CALLS` and, while `LOCAL_OPEN` is clear, holds each call until it is set.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncGenerator, Iterator
from typing import Any

import llm
import orjson
from llm.parts import TextPart
from pydantic import Field

RAISE: list[BaseException] = []
REPLIES: list[str] = []
HANG = threading.Event()
LOCAL_CALLS: list[str] = []
LOCAL_OPEN = threading.Event()


class EchoOptions(llm.Options):
    temperature: float | None = Field(None, ge=0, le=2)
    max_output_tokens: int | None = None


def described(prompt: llm.Prompt) -> str:
    lines = [f"system: {prompt.system}"]
    for message in prompt.messages:
        lines.append(f"{message.role}: " + "".join(p.text for p in message.parts if isinstance(p, TextPart)))
    options = {name: value for name, value in prompt.options.model_dump().items() if value is not None}
    lines.append(f"options: {orjson.dumps(options).decode()}")
    return "\n".join(lines)


class Echo(llm.Model):
    model_id = "bench-echo"
    Options = EchoOptions

    def execute(self, prompt: Any, stream: bool, response: Any, conversation: Any) -> Iterator[str]:
        yield "sync " + described(prompt)
        response.set_usage(input=12, output=3)


class AsyncEcho(llm.AsyncModel):
    model_id = "bench-echo"
    Options = EchoOptions

    async def execute(self, prompt: Any, stream: bool, response: Any, conversation: Any) -> AsyncGenerator[str, None]:
        yield "async " + described(prompt)
        response.set_usage(input=12, output=3)


class SyncOnly(llm.Model):
    model_id = "bench-sync"

    def execute(self, prompt: Any, stream: bool, response: Any, conversation: Any) -> Iterator[str]:
        yield f"{prompt.prompt} (in {threading.current_thread().name.rsplit('_', 1)[0]})"


class Keyed(llm.KeyModel):
    model_id = "bench-keyed"
    needs_key = "benchtest"
    key_env_var = "LLMTEST_KEY"

    def execute(self, prompt: Any, stream: bool, response: Any, conversation: Any, key: str | None) -> Iterator[str]:
        yield f"sync keyed answer with a key of {len(key or '')} characters"


class AsyncKeyed(llm.AsyncKeyModel):
    model_id = "bench-keyed"
    needs_key = "benchtest"
    key_env_var = "LLMTEST_KEY"

    async def execute(
        self, prompt: Any, stream: bool, response: Any, conversation: Any, key: str | None
    ) -> AsyncGenerator[str, None]:
        yield f"keyed answer; a careless provider says the key was {key}"


class Script(llm.Model):
    model_id = "bench-script"

    def execute(self, prompt: Any, stream: bool, response: Any, conversation: Any) -> Iterator[str]:
        yield "sync scripted answer"


class AsyncScript(llm.AsyncModel):
    model_id = "bench-script"

    async def execute(self, prompt: Any, stream: bool, response: Any, conversation: Any) -> AsyncGenerator[str, None]:
        if HANG.is_set():
            await asyncio.Event().wait()
        if RAISE:
            raise RAISE.pop(0)
        yield REPLIES.pop(0) if REPLIES else "scripted answer"


class Local(llm.Model):
    model_id = "bench-local"

    def execute(self, prompt: Any, stream: bool, response: Any, conversation: Any) -> Iterator[str]:
        LOCAL_CALLS.append(prompt.prompt)
        LOCAL_OPEN.wait(30)
        yield f"local answer to {prompt.prompt}"


@llm.hookimpl
def register_models(register: Any) -> None:
    register(Echo(), AsyncEcho())
    register(SyncOnly())
    register(Keyed(), AsyncKeyed())
    register(Script(), AsyncScript())
    register(Local())
