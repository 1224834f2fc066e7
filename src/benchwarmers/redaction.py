"""Nothing private is ever written down.

Provider keys, gateway keys and image data must never reach logs, errors, exports or pages.
Everything that records text from a request or an upstream passes through here first.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit

REDACTED = "[redacted]"

# Shorter "secrets" would redact ordinary words; real keys are far longer.
_MIN_SECRET_LEN = 8
_MAX_PATH_CHARS = 200

# The payload class runs in C over megabytes; case-sensitive because IGNORECASE is 4x slower there.
_DATA_URL = re.compile(r"data:(?:[\w.+-]+/[\w.+-]+)?(?:;[\w.+-]+=[^;,\s\"']*)*;base64,([A-Za-z0-9+/_-]*)(=*)")
_BEARER = re.compile(r"(\bBearer\s+)[A-Za-z0-9._~+/=-]+", re.IGNORECASE)
# The look-behind keeps words like "risk-assessment-..." from reading as an "sk-" key.
_KEYS = re.compile(
    r"(?<![A-Za-z0-9_-])(?:bwk_[A-Za-z0-9_-]{20,}|sk-[A-Za-z0-9_-]{16,}"
    r"|AIza[0-9A-Za-z_-]{30,}|gsk_[A-Za-z0-9]{20,})"
)
_KEY_PREFIXES = ("bwk_", "sk-", "AIza", "gsk_")
_USERINFO = re.compile(r"(?<=://)[^/\s:@]+:[^/\s@]+@")


def _size_label(nbytes: int) -> str:
    kb = round(nbytes / 1024)
    if kb >= 1024:
        return f"{nbytes / (1024 * 1024):.1f} MB"
    # A non-empty image never reads as "0 KB".
    return f"{max(kb, 1) if nbytes else 0} KB"


def _base64_bytes(payload_chars: int) -> int:
    # Decoded size from the unpadded base64 length, without decoding.
    return payload_chars * 3 // 4


def _data_placeholder(nbytes: int) -> str:
    return f"[image: data URL, {_size_label(nbytes)}]"


def _data_url_bytes(url: str) -> int:
    comma = url.find(",")
    if comma < 0:
        return 0
    if ";base64" not in url[:comma].lower():
        return len(url) - comma - 1
    # Count, don't copy: the payload can be many megabytes.
    end = len(url) - (2 if url.endswith("==") else 1 if url.endswith("=") else 0)
    chars = end - comma - 1 - url.count("\n", comma, end) - url.count("\r", comma, end)
    return _base64_bytes(chars)


def image_placeholder(url: str) -> str:
    """What is stored in place of an image: its kind and size, or its address without secrets."""
    head = url[:64].lower()
    if head.startswith("data:"):
        return _data_placeholder(_data_url_bytes(url))
    if head.startswith(("http://", "https://")):
        parts = urlsplit(url)
        host = parts.netloc.rpartition("@")[2]
        path = parts.path
        if len(path) > _MAX_PATH_CHARS:
            path = path[:_MAX_PATH_CHARS] + "…"
        more = "?..." if (parts.query or parts.fragment) else ""
        return f"[image: {parts.scheme.lower()}://{host}{path}{more}]"
    scheme, sep, _ = url.partition(":")
    if sep and re.fullmatch(r"[A-Za-z][A-Za-z0-9+.-]{0,31}", scheme):
        return f"[image: {scheme.lower()} URL]"
    return "[image: unknown URL]"


def _replace_data_url(match: re.Match[str]) -> str:
    return _data_placeholder(_base64_bytes(match.end(1) - match.start(1)))


def scrub_data_urls(text: str) -> str:
    """Replace every inline base64 data URL with its placeholder; the rest is unchanged."""
    if "base64," not in text:
        return text
    return _DATA_URL.sub(_replace_data_url, text)


def scrub_text(text: str, secrets: Iterable[str] = ()) -> str:
    """Remove data URLs, the given secrets, bearer tokens, key-shaped strings and URL passwords."""
    text = scrub_data_urls(text)
    for secret in secrets:
        if secret and len(secret) >= _MIN_SECRET_LEN and secret in text:
            text = text.replace(secret, REDACTED)
    # Cheap substring checks first: most texts contain none of these.
    if "earer" in text or "EARER" in text:
        text = _BEARER.sub(lambda m: m.group(1) + REDACTED, text)
    if any(prefix in text for prefix in _KEY_PREFIXES):
        text = _KEYS.sub(REDACTED, text)
    if "://" in text and "@" in text:
        text = _USERINFO.sub(REDACTED + "@", text)
    return text


def _describe_part(part: dict[str, Any]) -> dict[str, Any] | None:
    """Placeholder text part for a part that carries media, or None to keep the part."""
    kind = part.get("type")
    if kind == "image_url":
        ref = part.get("image_url")
        url = ref.get("url") if isinstance(ref, dict) else ref
        return {"type": "text", "text": image_placeholder(url if isinstance(url, str) else "")}
    if kind == "input_audio":
        audio = part.get("input_audio")
        data = audio.get("data") if isinstance(audio, dict) else None
        fmt = audio.get("format") if isinstance(audio, dict) else None
        size = _size_label(_base64_bytes(len(data))) if isinstance(data, str) else "unknown size"
        return {"type": "text", "text": f"[audio: {fmt or 'unknown format'}, {size}]"}
    if kind == "file":
        file = part.get("file")
        data = file.get("file_data") if isinstance(file, dict) else None
        if isinstance(data, str):
            name = file.get("filename") if isinstance(file, dict) else None
            size = _size_label(_data_url_bytes(data)) if data.startswith("data:") else "inline"
            return {"type": "text", "text": f"[file: {name or 'unnamed'}, {size}]"}
    if kind == "text" and isinstance(part.get("text"), str):
        scrubbed = scrub_data_urls(part["text"])
        if scrubbed != part["text"]:
            return {**part, "text": scrubbed}
    return None


def redact_messages(messages: list[Any]) -> list[Any]:
    """A copy of chat messages safe to store: images become placeholders; the input is untouched."""
    redacted: list[Any] = []
    for message in messages:
        if not isinstance(message, dict):
            redacted.append(message)
            continue
        content = message.get("content")
        if isinstance(content, str):
            redacted.append({**message, "content": scrub_data_urls(content)})
        elif isinstance(content, list):
            parts: list[Any] = []
            for part in content:
                replacement = _describe_part(part) if isinstance(part, dict) else None
                parts.append(part if replacement is None else replacement)
            redacted.append({**message, "content": parts})
        else:
            redacted.append(dict(message))
    return redacted
