"""A running bench's collections as `llm` models: `llm -m bench/reviewers 'prompt'` runs a panel.

`register_models` asks the bench at BENCHWARMERS_URL (default http://127.0.0.1:8123) for its
collections (`GET /v1/models`: each collection in each of its reply modes, `bench/NAME`,
`bench/NAME:pick`, ...) and registers each as a model. With no bench there, it registers nothing
and says nothing, within a second: `llm` starts as fast as before; a bench that refuses (a key it
requires, say) is named on stderr with what to do. The key is BENCHWARMERS_KEY, or
`llm keys set benchwarmers`, when the bench requires one.

Each collection is registered as a sync and an async model. A prompt is one
`POST /v1/chat/completions` to the bench, the conversation and image attachments
included; the reply is the panel's answer, and what `llm logs` keeps of it (`response_json`) holds
the panel id and every seat's call id, for the verdicts the bench learns from
(`benchwarmers verdict CALL --useful`). Options: `-o shape review` (the task shape the panel counts
under), `-o nominees groq/x,groq/y` (seated beside the members), `-o temperature 0.2`,
`-o max_tokens 500`.

This plugin speaks HTTP to a bench like any other caller and imports nothing of it. A bench running
llm's plugins itself (BENCH_CLIENT=llm) blocks this one by its name, `benchwarmers`: a bench never
lists, nor seats, its own collections.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import AsyncGenerator, Iterator
from typing import Any, cast

import httpx2
import llm
from llm.parts import AttachmentPart, TextPart
from pydantic import Field

NAME = "benchwarmers"  # the entry point's name: what a bench blocks, and the key's alias
DEFAULT_URL = "http://127.0.0.1:8123"
# Listing: a bench on loopback answers in milliseconds; anything slower is treated as no bench.
LIST_TIMEOUT = httpx2.Timeout(2.0, connect=0.5)
# A panel runs every seat to its own timeout and may add a merger after.
PANEL_TIMEOUT = httpx2.Timeout(900.0, connect=5.0)
# `llm` asks for its models several times a run: the bench is asked once in this long.
LISTING_SECONDS = 30.0
IMAGE_TYPES = {"image/png", "image/jpeg", "image/gif", "image/webp"}

_listed: dict[tuple[str, str | None], tuple[float, list[dict[str, Any]]]] = {}
_lock = threading.Lock()


def bench_url() -> str:
    return os.environ.get("BENCHWARMERS_URL", DEFAULT_URL).rstrip("/")


def bench_key() -> str | None:
    return llm.get_key(alias=NAME, env="BENCHWARMERS_KEY")


def _headers(key: str | None) -> dict[str, str]:
    headers = {"accept": "application/json", "user-agent": "llm-benchwarmers"}
    if key:
        headers["authorization"] = f"Bearer {key}"
    return headers


def collections() -> list[dict[str, Any]]:
    """The bench's collections as `/v1/models` lists them; none when no bench answers."""
    url, key = bench_url(), bench_key()
    with _lock:
        cached = _listed.get((url, key))
        if cached is not None and time.monotonic() - cached[0] < LISTING_SECONDS:
            return cached[1]
        status, listing = 0, None
        try:
            response = httpx2.get(f"{url}/v1/models", headers=_headers(key), timeout=LIST_TIMEOUT, trust_env=False)
            status, listing = response.status_code, response.json()
        except (httpx2.HTTPError, httpx2.InvalidURL, ValueError):
            pass  # no bench there, or not a bench: nothing to register, nothing to say
        data = listing.get("data") if isinstance(listing, dict) and status == 200 else None
        if isinstance(listing, dict) and status != 200:
            # A bench that refuses is there: say why its collections are missing, once.
            sys.stderr.write(f"llm-benchwarmers: {refusal(url, status, listing)}\n")
        entries = data if isinstance(data, list) else []
        found = [e for e in entries if isinstance(e, dict) and isinstance(e.get("id"), str)]
        _listed[(url, key)] = (time.monotonic(), found)
        return found


def refusal(url: str, status: int, data: Any) -> str:
    """The bench's own message, and what to do when it is about the key."""
    error = data.get("error") if isinstance(data, dict) else None
    message = error.get("message") if isinstance(error, dict) else str(data)[:300]
    text = f"the bench at {url} refused ({status}): {message}"
    if status == 401:
        text += " (set BENCHWARMERS_KEY, or `llm keys set benchwarmers`, to a gateway key)"
    return text


def _image(attachment: llm.Attachment) -> dict[str, Any]:
    url = attachment.url if attachment.url and attachment.url.startswith("https://") else None
    if url is None:
        url = f"data:{attachment.resolve_type()};base64,{attachment.base64_content()}"
    return {"type": "image_url", "image_url": {"url": url}}


def chat_messages(prompt: llm.Prompt) -> list[dict[str, Any]]:
    """The conversation llm holds (system, earlier turns, this prompt) as chat messages."""
    messages: list[dict[str, Any]] = []
    for message in prompt.messages:
        if message.role not in ("system", "user", "assistant"):
            continue  # tool turns: this model offers no tools
        text = "".join(p.text for p in message.parts if isinstance(p, TextPart))
        images = [_image(p.attachment) for p in message.parts if isinstance(p, AttachmentPart) and p.attachment]
        if message.role == "system" and messages and messages[0] == {"role": "system", "content": text}:
            continue
        content: Any = [{"type": "text", "text": text}, *images] if images else text
        messages.append({"role": message.role, "content": content})
    return messages


class BenchError(llm.ModelError):
    """The bench refused the prompt, or could not be reached: its own message, and what to do."""


class BenchOptions(llm.Options):
    """`-o shape review`, `-o nominees groq/x,groq/y`, `-o temperature 0.2`, `-o max_tokens 500`."""

    shape: str | None = Field(None, description="the task shape the panel is counted under, e.g. review")
    nominees: str | None = Field(None, description="comma-separated models to seat beside the members")
    temperature: float | None = Field(None, ge=0, le=2, description="sent to every seat")
    max_tokens: int | None = Field(None, gt=0, description="the most each seat may write")


class Panel:
    """What the sync and the async model share: one collection of the bench in one reply mode
    (`bench/NAME`, `bench/NAME:pick`, ...), the request a prompt makes, the reply it reads."""

    def __init__(self, entry: dict[str, Any]) -> None:
        self.entry = entry
        together = entry.get("together")
        sees = isinstance(together, dict) and "vision" in (together.get("capabilities") or ())
        self.attachment_types = IMAGE_TYPES if sees else set()

    def __str__(self) -> str:
        description = self.entry.get("description") or ""
        members = ", ".join(self.entry.get("members") or ())
        return f"Benchwarmers: {self.entry['id']} ({self.entry.get('reply')}) {description} [{members}]".rstrip()

    def request(self, prompt: llm.Prompt) -> dict[str, Any]:
        body: dict[str, Any] = {"model": self.entry["id"], "messages": chat_messages(prompt)}
        options = cast(BenchOptions, prompt.options)
        if options.temperature is not None:
            body["temperature"] = options.temperature
        if options.max_tokens is not None:
            body["max_tokens"] = options.max_tokens
        bench: dict[str, Any] = {}
        if options.shape:
            bench["shape"] = options.shape
        if options.nominees:
            bench["with"] = [name.strip() for name in options.nominees.split(",") if name.strip()]
        if bench:
            body["bench"] = bench
        return body

    @staticmethod
    def unreachable(url: str, exc: Exception) -> BenchError:
        return BenchError(
            f"no bench answered at {url} ({type(exc).__name__}): start one with `benchwarmers serve`, "
            "or set BENCHWARMERS_URL to where it runs"
        )

    @staticmethod
    def answer(url: str, reply: httpx2.Response, response: llm.Response | llm.AsyncResponse) -> str:
        """The panel's reply; its panel id, call ids and usage kept on llm's response for `llm logs`."""
        try:
            data = reply.json()
        except ValueError:
            status = reply.status_code
            raise BenchError(f"{url} answered {status} with a body that is not JSON: is it a bench?") from None
        if reply.status_code != 200:
            raise BenchError(refusal(url, reply.status_code, data))
        bench = data.get("bench") or {}
        response.response_json = {
            "id": data.get("id"),
            "model": data.get("model"),
            "panel": bench.get("panel"),
            "calls": [
                {"call": seat.get("call"), "alias": seat.get("alias"), "status": seat.get("status")}
                for seat in bench.get("seats") or ()
            ],
            "bench": bench,
        }
        usage = data.get("usage") or {}
        response.set_usage(input=usage.get("prompt_tokens"), output=usage.get("completion_tokens"))
        choices = data.get("choices") or [{}]
        return str((choices[0].get("message") or {}).get("content") or "")


class Collection(llm.Model):
    can_stream = False  # a panel's answer comes whole, once every seat is in

    class Options(BenchOptions):
        pass

    def __init__(self, entry: dict[str, Any]) -> None:
        self.model_id, self.panel = entry["id"], Panel(entry)
        self.attachment_types = self.panel.attachment_types

    def __str__(self) -> str:
        return str(self.panel)

    def execute(
        self, prompt: llm.Prompt, stream: bool, response: llm.Response, conversation: llm.Conversation | None
    ) -> Iterator[str]:
        url, key = bench_url(), bench_key()
        try:
            with httpx2.Client(timeout=PANEL_TIMEOUT, trust_env=False) as client:
                body = self.panel.request(prompt)
                reply = client.post(f"{url}/v1/chat/completions", json=body, headers=_headers(key))
        except httpx2.HTTPError as exc:
            raise Panel.unreachable(url, exc) from None
        yield Panel.answer(url, reply, response)


class AsyncCollection(llm.AsyncModel):
    """The same for llm's async API (`llm.get_async_model("bench/reviewers")`)."""

    can_stream = False

    class Options(BenchOptions):
        pass

    def __init__(self, entry: dict[str, Any]) -> None:
        self.model_id, self.panel = entry["id"], Panel(entry)
        self.attachment_types = self.panel.attachment_types

    def __str__(self) -> str:
        return str(self.panel)

    async def execute(
        self,
        prompt: llm.Prompt,
        stream: bool,
        response: llm.AsyncResponse,
        conversation: llm.AsyncConversation | None,
    ) -> AsyncGenerator[str, None]:
        url, key = bench_url(), bench_key()
        try:
            async with httpx2.AsyncClient(timeout=PANEL_TIMEOUT, trust_env=False) as client:
                body = self.panel.request(prompt)
                reply = await client.post(f"{url}/v1/chat/completions", json=body, headers=_headers(key))
        except httpx2.HTTPError as exc:
            raise Panel.unreachable(url, exc) from None
        yield Panel.answer(url, reply, response)


@llm.hookimpl
def register_models(register: Any) -> None:
    for entry in collections():
        register(Collection(entry), AsyncCollection(entry))
