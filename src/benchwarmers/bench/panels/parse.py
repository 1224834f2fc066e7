"""Reading a panel request: which collection, which options, how big. Pure functions."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any
from urllib.parse import urlsplit

from benchwarmers.bench.core import estimate as est
from benchwarmers.errors import InvalidRequest
from benchwarmers.redaction import redact_messages

PREFIX = "bench/"
SUFFIXES = ("merged", "all", "pick")
STRUCTURED = ("json_object", "json_schema")  # response_format types that need one parsable message
TOKENS_PER_IMAGE = est.TOKENS_PER_IMAGE


@dataclass(frozen=True)
class BenchOptions:
    """The `"bench": {...}` object a caller may send beside the OpenAI fields."""

    reply: str | None = None
    nominees: tuple[str, ...] = ()
    shape: str | None = None


@dataclass(frozen=True)
class ModelName:
    collection: str
    suffix: str | None  # "merged" | "all" | "pick" | None


@dataclass
class Content:
    """What the messages hold: text size and images (counted once, for the estimate and seating).

    Only counts: keeping the URLs would keep megabytes of data URLs alive for the whole panel.
    """

    text_chars: int = 0
    images: int = 0
    symbols: int = 0  # code symbols in the sampled text (estimate.symbol_count): code or prose
    looked_at: int = 0

    @property
    def kind(self) -> str:
        return est.kind_of(self.symbols, self.looked_at)

    def add_text(self, text: str) -> None:
        self.text_chars += len(text)
        symbols, looked_at = est.symbol_count(text)
        self.symbols += symbols
        self.looked_at += looked_at


@dataclass(frozen=True)
class PanelRequest:
    """A chat request's body, and what the steps of its panel read of it, each read once: the server
    (a replay's stream), the refusals (bench options) and the seating (stream, usage) share it."""

    body: dict[str, Any]

    @classmethod
    def of(cls, body: dict[str, Any] | PanelRequest) -> PanelRequest:
        return body if isinstance(body, PanelRequest) else cls(body)

    @cached_property
    def stream(self) -> bool:
        return bool(self.body.get("stream"))

    @cached_property
    def include_usage(self) -> bool:
        options = self.body.get("stream_options")
        return isinstance(options, dict) and bool(options.get("include_usage"))

    @cached_property
    def options(self) -> BenchOptions:
        """Parsed when first asked for, so a bad `bench` object is refused where it always was."""
        return parse_options(self.body)


def parse_model_name(model: Any) -> ModelName | None:
    """`bench/<name>[:merged|:all|:pick]` → its parts; None when it is not a bench model name at all."""
    if not isinstance(model, str) or not model.startswith(PREFIX):
        return None
    name, _, suffix = model[len(PREFIX) :].partition(":")
    if suffix and suffix not in SUFFIXES:
        raise InvalidRequest(
            f"model {model!r} has an unknown suffix ':{suffix}'; use ':merged', ':all' or ':pick'",
            param="model",
        )
    return ModelName(collection=name, suffix=suffix or None)


def parse_options(body: dict[str, Any]) -> BenchOptions:
    raw = body.get("bench")
    if raw is None:
        return BenchOptions()
    if not isinstance(raw, dict):
        raise InvalidRequest('"bench" must be an object such as {"reply": "merged"}', param="bench")
    unknown = set(raw) - {"reply", "with", "shape"}
    if unknown:
        raise InvalidRequest(
            f"unknown bench option(s): {', '.join(sorted(unknown))}; known: reply, with, shape", param="bench"
        )
    reply = raw.get("reply")
    if reply is not None and reply not in SUFFIXES:
        raise InvalidRequest("bench.reply must be 'all', 'merged' or 'pick'", param="bench.reply")
    nominees = raw.get("with") or []
    if isinstance(nominees, str):
        nominees = [nominees]
    if not isinstance(nominees, list) or not all(isinstance(n, str) and n for n in nominees):
        raise InvalidRequest("bench.with must be a list of model aliases", param="bench.with")
    shape = raw.get("shape")
    if shape is not None and not isinstance(shape, str):
        raise InvalidRequest("bench.shape must be a string such as 'review'", param="bench.shape")
    return BenchOptions(reply=reply, nominees=tuple(dict.fromkeys(nominees)), shape=shape or None)


def check_messages(body: dict[str, Any]) -> list[dict[str, Any]]:
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise InvalidRequest("messages must be a non-empty list of chat messages", param="messages")
    for index, message in enumerate(messages):
        if not isinstance(message, dict) or not isinstance(message.get("role"), str):
            raise InvalidRequest(f"messages[{index}] must be an object with a role", param="messages")
    return messages


def read_content(messages: list[dict[str, Any]]) -> Content:
    """Count text characters (system text included) and collect image URLs, refusing unsafe ones."""
    content = Content()
    for index, message in enumerate(messages):
        value = message.get("content")
        if isinstance(value, str):
            content.add_text(value)
        elif isinstance(value, list):
            for part in value:
                if not isinstance(part, dict):
                    continue
                kind = part.get("type")
                if kind == "text" and isinstance(part.get("text"), str):
                    content.add_text(part["text"])
                elif kind == "image_url":
                    url = _image_url(part)
                    check_image_url(url, index)
                    content.images += 1
    return content


def _image_url(part: dict[str, Any]) -> str:
    image = part.get("image_url")
    url = image.get("url") if isinstance(image, dict) else image
    if not isinstance(url, str):
        raise InvalidRequest("an image_url part needs image_url.url", param="messages")
    return url


def check_image_url(url: str, index: int) -> None:
    """Only https:// and data:image/...;base64 reach a model; the gateway never fetches either."""
    if url.startswith("data:"):
        head = url[5:60].lower()
        if head.startswith("image/") and ";base64," in url[:200]:
            return
        raise InvalidRequest(f"messages[{index}]: a data URL image must be data:image/...;base64,...", param="messages")
    try:
        parts = urlsplit(url[:2048])
    except ValueError:  # a bracketed host that is not an IPv6 address: "https://[", "https://[]"
        raise InvalidRequest(
            f"messages[{index}]: the image URL is not a valid URL; send an https:// URL or a data:image/...;base64 URL",
            param="messages",
        ) from None
    if parts.scheme == "https" and parts.hostname:
        return
    shown = f"{parts.scheme}:" if parts.scheme else "a relative URL"
    raise InvalidRequest(
        f"messages[{index}]: image URL scheme {shown} is refused; send an https:// URL or a data:image/...;base64 URL",
        param="messages",
    )


def request_text(messages: list[dict[str, Any]]) -> str:
    """The conversation as plain text, images as placeholders (what a merger or decision model reads)."""
    lines = []
    for message in redact_messages(messages):
        value = message.get("content")
        if isinstance(value, list):
            value = "\n".join(str(p.get("text", "")) for p in value if isinstance(p, dict))
        lines.append(f"{message.get('role', 'user')}: {value or ''}")
    return "\n\n".join(lines)


def estimate_tokens(text_chars: int, images: int, kind: str = est.CODE) -> int:
    """The default estimate for `kind` (code: the lower characters a token, so the higher count)."""
    return est.estimate(text_chars, images, kind).tokens


def needs_one_message(body: dict[str, Any]) -> bool:
    """A request whose caller reads one message, not a panel: it offers tools or asks for JSON."""
    fmt = body.get("response_format")
    return bool(body.get("tools")) or (isinstance(fmt, dict) and fmt.get("type") in STRUCTURED)


def reply_mode(options: BenchOptions, name: ModelName, collection_reply: str, body: dict[str, Any]) -> str:
    """The request's bench.reply, else the model-name suffix; else `pick` when the caller needs one
    message (tools, JSON), else the collection's own."""
    return options.reply or name.suffix or ("pick" if needs_one_message(body) else collection_reply)


def check_n(body: dict[str, Any]) -> None:
    """A panel gives one reply: `n` above 1 is refused, never silently cut to one choice."""
    n = body.get("n")
    if n is None or n == 1:
        return
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        raise InvalidRequest("n must be a whole number, 1 or more (a panel replies once: send 1)", param="n")
    raise InvalidRequest(
        f"n={n} is not served: a panel gives one reply, and every seat's own answer is in bench.seats. "
        "Leave n out (or send 1); for several answers, read bench.seats or use reply 'all'.",
        param="n",
        code="n_not_supported",
    )
