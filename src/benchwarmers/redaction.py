"""Nothing private is ever written down.

Provider keys, gateway keys, the admin token, image data and the query strings of image URLs must
never reach the database, logs, errors, exports or pages. Everything that records text from a
request or an upstream passes through here first:

- `redact_request`: the request as stored, every image, audio or file payload a placeholder;
- `scrub_text`: error text (from upstreams, refreshes), scrubbed of anything secret-shaped;
- `scrub_answer`: a model's answer, scrubbed of the secrets the bench knows (an answer is content:
  key-shaped examples in it stay as written).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urlsplit

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
_GATEWAY_KEY = re.compile(r"(?<![A-Za-z0-9_-])bwk_[A-Za-z0-9_-]{20,}")
_USERINFO = re.compile(r"(?<=://)[^/\s:@]+:[^/\s@]+@")
# An http(s) URL (also JSON-escaped, https:\/\/...) with a query string or fragment: keep the address.
_URL_QUERY = re.compile(r"((?i:\bhttps?):(?:\\?/){2}[^\s?#\"'<>\\]*(?:\\/[^\s?#\"'<>\\]*)*)[?#][^\s\"'<>\\]*")
QUERY_PLACEHOLDER = "?..."
# Raw base64 (not a data URL) in any string of a stored request: long runs only, so words, hashes and
# separators ("-----") stay; a run counts only with two of upper-case, lower-case and digits in it.
_MIN_RUN = 256
_BASE64_RUN = re.compile(rf"[A-Za-z0-9+/_-]{{{_MIN_RUN},}}={{0,2}}")
_MIXED = (re.compile(r"[A-Z]"), re.compile(r"[a-z]"), re.compile(r"[0-9]"))
_BASE64_ITEM = re.compile(r"[A-Za-z0-9+/_\-\r\n]{32,}={0,2}")
# Fields that name a payload's media type beside its `data` (Anthropic, Gemini, others).
_MEDIA_TYPE_KEYS = ("media_type", "mime_type", "mimeType", "mediaType")


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


def without_query(url: str) -> str:
    """A stored URL as it may be shown: any query string or fragment replaced by `?...`."""
    cut = min((i for i in (url.find("?"), url.find("#")) if i >= 0), default=-1)
    return url if cut < 0 else url[:cut] + QUERY_PLACEHOLDER


def url_secrets(url: str) -> list[str]:
    """What an image URL carries that must not be written down even when quoted back: its query string
    and fragment, each query value (as sent and decoded), its password, and its userinfo as `user:pw@`
    (removed where it follows `://`, however short)."""
    if not url[:8].lower().startswith(("http://", "https://")):
        return []
    try:
        parts = urlsplit(url)
        password = parts.password
    except ValueError:
        return [url]
    userinfo, at, _ = parts.netloc.rpartition("@")
    found = [parts.query, parts.fragment, password or "", userinfo + at if userinfo else ""]
    for piece in parts.query.split("&"):
        value = piece.partition("=")[2]
        found += [value, unquote(value)]
    return list(dict.fromkeys(secret for secret in found if secret))


def _replace_run(match: re.Match[str]) -> str:
    run = match.group(0)
    if sum(1 for pattern in _MIXED if pattern.search(run)) < 2:
        return run
    return f"[data: base64, {_size_label(_base64_bytes(len(run.rstrip('='))))}]"


def _replace_data_url(match: re.Match[str]) -> str:
    return _data_placeholder(_base64_bytes(match.end(1) - match.start(1)))


def scrub_data_urls(text: str) -> str:
    """Replace every inline base64 data URL with its placeholder; the rest is unchanged."""
    if "base64," not in text:
        return text
    return _DATA_URL.sub(_replace_data_url, text)


def scrub_payloads(text: str) -> str:
    """Replace every data URL and every long base64 run with its placeholder."""
    text = scrub_data_urls(text)
    if len(text) >= _MIN_RUN:
        text = _BASE64_RUN.sub(_replace_run, text)
    return text


def scrub_url_queries(text: str) -> str:
    """Replace the query string and fragment of every http(s) URL in `text` with `?...`."""
    if ("?" not in text and "#" not in text) or ":" not in text:
        return text
    return _URL_QUERY.sub(lambda m: m.group(1) + QUERY_PLACEHOLDER, text)


def scrub_urls(text: str) -> str:
    """Every http(s) URL in `text` without `user:password@`, query string or fragment."""
    if "://" in text and "@" in text:
        text = _USERINFO.sub(REDACTED + "@", text)
    return scrub_url_queries(text)


def _remove_secrets(text: str, secrets: Iterable[str]) -> str:
    # Longest first: a query string goes whole before the values inside it are looked for.
    for secret in sorted({s for s in secrets if s and len(s) >= _MIN_SECRET_LEN}, key=len, reverse=True):
        if secret in text:
            text = text.replace(secret, REDACTED)
    return text


def _remove_userinfo(text: str, secrets: Iterable[str]) -> str:
    """An image URL's `user:pw@` (url_secrets) where a quoted URL carries it, however short, the host
    kept; before _remove_secrets, which would leave the user name beside a redacted password."""
    if "://" not in text:
        return text
    for userinfo in {s for s in secrets if s.endswith("@")}:
        text = text.replace("://" + userinfo, "://" + REDACTED + "@")
    return text


def scrub_text(text: str, secrets: Iterable[str] = ()) -> str:
    """Error text as it may be kept: no data URLs or base64 runs, none of the given secrets, no bearer
    tokens, key-shaped strings, URL passwords, or URL query strings and fragments."""
    text = scrub_payloads(text)
    text = _remove_secrets(_remove_userinfo(text, secrets), secrets)
    # Cheap substring checks first: most texts contain none of these.
    if "earer" in text or "EARER" in text:
        text = _BEARER.sub(lambda m: m.group(1) + REDACTED, text)
    if any(prefix in text for prefix in _KEY_PREFIXES):
        text = _KEYS.sub(REDACTED, text)
    return scrub_urls(text)


def scrub_answer(text: str, secrets: Iterable[str] = ()) -> str:
    """A model's answer as it may be kept and shown: no data URLs or base64 runs, none of the given
    secrets and nothing shaped like a gateway key. Other key-shaped text is content (an `sk-...` in
    an example)."""
    text = scrub_payloads(text)
    text = _remove_secrets(_remove_userinfo(text, secrets), secrets)
    if "bwk_" in text:
        text = _GATEWAY_KEY.sub(REDACTED, text)
    return text


# -- the request as stored -------------------------------------------------------------------------


def _payload_placeholder(media_type: str | None, payload: str) -> str:
    """A raw base64 payload (no data URL around it): its kind from the media type, and its size."""
    if payload.startswith("data:"):
        return image_placeholder(payload)
    kind = "file"
    if media_type is None or media_type.startswith("image/"):
        kind = "image"
    elif media_type.startswith("audio/"):
        kind = "audio"
    chars = len(payload.rstrip("=")) - payload.count("\n") - payload.count("\r")
    return f"[{kind}: {media_type or 'base64'}, {_size_label(_base64_bytes(chars))}]"


@dataclass
class Redactor:
    """Walks a request, replacing every media payload with a placeholder; notes the secrets of the
    image URLs it met (query strings, passwords) so they can be scrubbed wherever they come back."""

    hidden: list[str]

    def image(self, url: str) -> dict[str, Any]:
        self.hidden += url_secrets(url)
        return {"type": "text", "text": image_placeholder(url)}

    def part(self, part: dict[str, Any]) -> dict[str, Any] | None:
        """Placeholder text part for a part that carries media, or None to walk the part."""
        kind = part.get("type")
        if kind in ("image_url", "input_image"):
            ref = part.get("image_url")
            url = ref.get("url") if isinstance(ref, dict) else ref
            if kind == "image_url" or isinstance(url, str):
                return self.image(url if isinstance(url, str) else "")
        source = part.get("source")
        # Anthropic-style; a `text` source is a document's text, not a payload.
        if kind in ("image", "document") and isinstance(source, dict) and source.get("type") != "text":
            if isinstance(source.get("url"), str):
                return self.image(source["url"])
            if isinstance(source.get("data"), str):
                media = source.get("media_type")
                text = _payload_placeholder(media if isinstance(media, str) else None, source["data"])
                return {"type": "text", "text": text}
        if kind == "input_audio":
            audio = part.get("input_audio")
            data = audio.get("data") if isinstance(audio, dict) else None
            fmt = audio.get("format") if isinstance(audio, dict) else None
            size = _size_label(_base64_bytes(len(data))) if isinstance(data, str) else "unknown size"
            return {"type": "text", "text": f"[audio: {fmt or 'unknown format'}, {size}]"}
        if kind in ("file", "input_file"):
            file = part.get("file") if kind == "file" else part
            data = file.get("file_data") if isinstance(file, dict) else None
            if isinstance(data, str):
                name = file.get("filename") if isinstance(file, dict) else None
                size = _size_label(_data_url_bytes(data)) if data.startswith("data:") else "inline"
                return {"type": "text", "text": f"[file: {name or 'unnamed'}, {size}]"}
        return None

    def images(self, items: list[Any]) -> list[Any]:
        """An Ollama-style `images` list: base64 strings (or URLs), each a placeholder."""
        out: list[Any] = []
        for item in items:
            if isinstance(item, str) and item[:8].lower().startswith(("data:", "http://", "https://")):
                out.append(self.image(item)["text"])
            elif isinstance(item, str) and _BASE64_ITEM.fullmatch(item):
                out.append(_payload_placeholder(None, item))
            else:
                out.append(self.value(item))
        return out

    def value(self, value: Any) -> Any:
        if isinstance(value, str):
            # URLs written in text or other fields lose their secrets too (the seats get them as sent).
            return scrub_urls(scrub_payloads(value))
        if isinstance(value, list):
            return [self.value(item) for item in value]
        if not isinstance(value, dict):
            return value
        replaced = self.part(value)
        if replaced is not None:
            return replaced
        media = next((value[k] for k in _MEDIA_TYPE_KEYS if isinstance(value.get(k), str)), None)
        if value.get("type") == "text":
            media = None
        out: dict[Any, Any] = {}
        for key, item in value.items():
            if key == "data" and media is not None and isinstance(item, str):
                out[key] = _payload_placeholder(media, item)
            elif key == "images" and isinstance(item, list):
                out[key] = self.images(item)
            else:
                out[key] = self.value(item)
        return out


@dataclass(frozen=True)
class RedactedRequest:
    stored: dict[str, Any]  # the request as it may be written down
    hidden: tuple[str, ...]  # secrets its image URLs carried, to scrub from answers and errors


def redact_request(body: dict[str, Any]) -> RedactedRequest:
    """A copy of a request safe to store: every image, audio or file payload a placeholder, in every
    shape a client can send (OpenAI, Responses, Anthropic and Ollama parts, data URLs and long base64
    runs in any string: metadata, tool-call arguments). The input is untouched."""
    redactor = Redactor(hidden=[])
    stored = redactor.value(body)
    return RedactedRequest(stored=stored, hidden=tuple(dict.fromkeys(redactor.hidden)))


def redact_messages(messages: list[Any]) -> list[Any]:
    """A copy of chat messages safe to store: images become placeholders; the input is untouched."""
    redacted: list[Any] = Redactor(hidden=[]).value(list(messages))
    return redacted
