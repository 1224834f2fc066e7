"""Notification targets: where new alerts are sent (Apprise URLs), added, listed, removed and tried.

A URL is checked by Apprise, sealed with the home's secret.key (like a provider key) and never shown
again: lists, the changes log and errors carry its `label` (scheme and host) only.
"""

from __future__ import annotations

import re
import time
from typing import TYPE_CHECKING, Any

from benchwarmers.bench.names import suggest
from benchwarmers.bench.notify import apprise_send
from benchwarmers.errors import Conflict, InvalidRequest, NotFound, Unavailable
from benchwarmers.store import notify as notify_rows
from benchwarmers.store.changes import record_change

if TYPE_CHECKING:
    from benchwarmers.bench.state import BenchState

NAME = re.compile(r"^[a-z0-9][a-z0-9._-]{0,63}$")
URL_CAP = 2000  # characters: Apprise URLs with a few tokens and options fit many times over
TEST_TITLE = "Benchwarmers: test notification"
TEST_BODY = "This target will get the bench's new alerts (went paid, retiring, failing, verdicts owed, low disk)."


def check_name(name: object) -> str:
    if not isinstance(name, str) or not NAME.match(name):
        raise InvalidRequest(
            f"target name {name!r} is not valid: lower-case letters, digits, '.', '_' or '-' (at most 64), "
            "starting with a letter or digit",
            param="name",
            code="invalid_name",
        )
    return name


def _default_name(label: str) -> str:
    scheme, _, host = label.partition("://")
    name = re.sub(r"[^a-z0-9._-]+", "-", f"{scheme}-{host}".lower()).strip("-._")
    return (name or "target")[:64]


def _check_url(url: object) -> str:
    if not isinstance(url, str) or not url.strip() or len(url) > URL_CAP:
        raise InvalidRequest(
            f"url must be an Apprise URL of at most {URL_CAP} characters, e.g. ntfy://TOPIC or json://HOST/PATH",
            param="url",
            code="invalid_notify_url",
        )
    url = url.strip()
    apprise_send.check_url(url)
    return url


class NotifyTargets:
    def __init__(self, state: BenchState) -> None:
        self.state = state

    async def add(self, url: str, name: str | None = None, *, actor: str | None = None) -> dict[str, Any]:
        """Store a target (its URL sealed); alerts raised from now on are sent to it."""
        url = _check_url(url)
        label = apprise_send.label(url)
        name = check_name(name) if name is not None else _default_name(label)
        async with self.state.write() as conn:
            if await notify_rows.get_target(conn, name) is not None:
                raise Conflict(
                    f"a notification target named {name!r} exists: remove it first, or give --name another name",
                    param="name",
                    code="target_exists",
                )
            now = time.time()
            await notify_rows.add_target(conn, name=name, url_enc=self.state.secrets.encrypt(url), label=label, now=now)
            public = {"name": name, "label": label, "created_at": now}
            await record_change(
                conn, actor=actor or self.state.actor, subject="notify", name=name, action="add", after=public
            )
        return {**public, "sent": 0, "pending": 0, "failed": 0, "last_error": None}

    async def list_targets(self) -> list[dict[str, Any]]:
        """Every target with what was sent to it: sent, pending (queued or being retried), failed (given up)."""
        async with self.state.read() as conn:
            targets = await notify_rows.list_targets(conn)
            rows = await notify_rows.deliveries(conn)
        listed = []
        for target in targets:
            mine = [r for r in rows if r["target_id"] == target["id"]]
            errors = [r["last_error"] for r in mine if r["last_error"]]
            listed.append(
                {
                    "name": target["name"],
                    "label": target["label"],
                    "created_at": target["created_at"],
                    "sent": sum(1 for r in mine if r["sent_at"] is not None),
                    "pending": sum(1 for r in mine if r["sent_at"] is None and r["gave_up_at"] is None),
                    "failed": sum(1 for r in mine if r["gave_up_at"] is not None),
                    "last_error": errors[-1] if errors else None,
                }
            )
        return listed

    async def _target(self, conn: Any, name: str) -> dict[str, Any]:
        target = await notify_rows.get_target(conn, name)
        if target is None:
            names = [t["name"] for t in await notify_rows.list_targets(conn)]
            known = f" Targets: {', '.join(names)}." if names else " There are none: add one with `notify add URL`."
            raise NotFound(
                f"no notification target {name!r}.{suggest(name, names)}{known}", param="name", code="target_not_found"
            )
        return target

    async def remove(self, name: str, *, actor: str | None = None) -> dict[str, Any]:
        async with self.state.write() as conn:
            target = await self._target(conn, name)
            await notify_rows.remove_target(conn, target["id"])
            public = {"name": name, "label": target["label"]}
            await record_change(
                conn, actor=actor or self.state.actor, subject="notify", name=name, action="remove", before=public
            )
        return {**public, "removed": True}

    def url_of(self, target: dict[str, Any]) -> str:
        url = self.state.secrets.decrypt(target["url_enc"])
        if url is None:
            raise Unavailable(
                f"the URL of notification target {target['name']!r} was sealed with another secret.key: "
                "remove the target and add it again",
                code="target_unreadable",
            )
        return url

    async def test(self, name: str) -> dict[str, Any]:
        """Send a test notification to one target now; the reply says whether the service took it."""
        async with self.state.read() as conn:
            target = await self._target(conn, name)
        error = await apprise_send.send(self.url_of(target), title=TEST_TITLE, body=TEST_BODY, warning=False)
        return {
            "name": name,
            "label": target["label"],
            "status": "ok" if error is None else "failed",
            "error": error,
        }
