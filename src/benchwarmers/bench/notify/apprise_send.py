"""Sending one notification through Apprise (ntfy, Slack, Discord, email, Matrix, webhooks...).

Apprise is an optional extra (`pip install 'benchwarmers[notify]'`), imported on first use: a bench
with no target never loads it, and one with a target but without Apprise says how to install it.
A target's URL holds its secrets (tokens, passwords), so nothing here logs or returns it: what may
be shown is `label()` (scheme and host), and Apprise's own log, which prints whole URLs when it
debugs, is kept out of the bench's log (its warnings come back scrubbed, as the failure's reason).
"""

from __future__ import annotations

import ipaddress
import logging
import re
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from benchwarmers.errors import InvalidRequest, Unavailable

if TYPE_CHECKING:
    import apprise

SEND_TIMEOUT = 15.0  # seconds for one target, connecting and answering (Apprise's own are 4 s each)
INSTALL = "pip install 'benchwarmers[notify]' (or pip install apprise) where the bench runs"


def installed() -> bool:
    """Whether Apprise can be imported here (without importing it: ~0.2 s of plugins)."""
    import importlib.util

    try:
        return importlib.util.find_spec("apprise") is not None
    except ValueError:  # in sys.modules as None: blocked
        return False


def _apprise() -> Any:
    try:
        import apprise
    except ImportError:
        raise Unavailable(
            f"notifications need the Apprise library, which is not installed: {INSTALL}, then try again.",
            code="notify_unavailable",
        ) from None
    # Apprise debug-logs whole URLs (secrets and all) and errors with the URL it could not parse:
    # none of it may reach the bench's log. Failures are reported by the bench, scrubbed.
    quiet = logging.getLogger("apprise")
    if quiet.propagate:
        quiet.propagate = False
        quiet.addHandler(logging.NullHandler())
    return apprise


def _one(url: str) -> apprise.Apprise:
    box: apprise.Apprise = _apprise().Apprise()
    if not box.add(url):
        raise InvalidRequest(
            "Apprise does not understand this URL: give one of its service URLs, e.g. ntfy://TOPIC, "
            "slack://TOKEN_A/TOKEN_B/TOKEN_C, discord://WEBHOOK_ID/WEBHOOK_TOKEN, mailto://USER:PASSWORD@HOST "
            "or json://HOST/PATH (the list: https://github.com/caronc/apprise/wiki).",
            param="url",
            code="invalid_notify_url",
        )
    return box


def check_url(url: str) -> None:
    """Refuse a URL Apprise cannot send to (before it is stored)."""
    _one(url)


def _hostname(host: str) -> bool:
    """True for a host that is a machine's name or address, not a token written in the host's place
    (Slack's and Discord's URLs begin with their tokens)."""
    if host == "localhost" or "." in host:
        try:
            ipaddress.ip_address(host)
        except ValueError:
            return bool(re.fullmatch(r"[a-z0-9.-]+", host)) and not host.startswith(".")
        return True
    return False


def label(url: str) -> str:
    """What may be shown of a target: its scheme and its host when that is a real host name, else
    only the scheme (`slack://…`): never a user, password, token, path or query."""
    parts = urlsplit(url.strip())
    scheme = parts.scheme.lower() or "?"
    try:
        host = (parts.hostname or "").lower()
        port = parts.port
    except ValueError:
        host, port = "", None
    if host and _hostname(host):
        return f"{scheme}://{host}:{port}" if port else f"{scheme}://{host}"
    return f"{scheme}://…"


def scrub(text: str, url: str) -> str:
    """`text` without any piece of `url` but its scheme and host (Apprise's messages may quote them)."""
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    keep = {parts.scheme.lower(), host} if _hostname(host) else {parts.scheme.lower()}
    for piece in sorted(set(re.split(r"[/:@?&=#,+ ]+", url)), key=len, reverse=True):
        if len(piece) >= 3 and piece.lower() not in keep:
            text = text.replace(piece, "…")
    return text


async def send(url: str, *, title: str, body: str, warning: bool = True) -> str | None:
    """Send one notification; None when the service took it, else why not (no secret in it)."""
    box = _one(url)
    apprise = _apprise()
    seen: list[str] = []
    result = await box.async_notify(
        body=body,
        title=title,
        notify_type=apprise.NotifyType.WARNING if warning else apprise.NotifyType.INFO,
        timeout=SEND_TIMEOUT,  # Apprise stops waiting for the service then
        log_callback=lambda entry, _service: seen.append(entry.message),
        log_level=logging.WARNING,
    )
    if result.status == apprise.AppriseResultStatus.SUCCESS:
        return None
    reason = result.status.name.lower()
    return scrub(f"{reason}: {seen[-1]}" if seen else reason, url)[:200]
