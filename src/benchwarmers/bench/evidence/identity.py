"""A listed model whose identity changed: a new `created`, fingerprint, context window or price.

The same id may then serve another model, so its evidence may describe the one before. A refresh
that sees such a change raises a `possibly_changed` alert (the newest change replaces an older open
one); the leaderboard flags the model until the user acknowledges the alert, or for
`FLAG_DAYS` days. The first time a model or a fact is seen is not a change, nor is going free ↔ priced.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection

from benchwarmers.store import alerts as alert_rows

KIND = "possibly_changed"
FLAG_DAYS = 30
_DAY = 86_400.0
# Facts that say which model this is, with how a change is named.
IDENTITY = (("created", "created"), ("fingerprint", "fingerprint"), ("context_window", "window"), ("price", "price"))
_PREFIX = "listing changed: "
_SUFFIX = "; its evidence so far may describe the model it replaced"


@dataclass(frozen=True)
class ListingChange:
    at: float
    what: str  # e.g. "window 8192 → 32768"

    def public(self) -> dict[str, Any]:
        return {"at": self.at, "what": self.what}


def _shown(fact: str, value: Any) -> str:
    if fact == "price" and isinstance(value, Mapping):
        return f"{value.get('prompt')}/{value.get('completion')}"
    return str(value)


def identity_change(before: Mapping[str, Any], after: Mapping[str, Any]) -> str | None:
    """What changed between two listings of one model (`old → new`, joined by "; "), or None."""
    changes = [
        f"{label} {_shown(fact, before[fact])} → {_shown(fact, after[fact])}"
        for fact, label in IDENTITY
        if before.get(fact) is not None
        and after.get(fact) is not None
        and before[fact] != after[fact]
        # Free ↔ priced is a transition `went_paid` and the explorer pool deal with, not a new model.
        and not (fact == "price" and True in (before.get("free"), after.get("free")))
    ]
    return "; ".join(changes) or None


def message(what: str) -> str:
    return _PREFIX + what + _SUFFIX


def what_of(text: str) -> str:
    return text.removeprefix(_PREFIX).removesuffix(_SUFFIX)


async def raise_change(conn: AsyncConnection, alias: str, what: str, now: float) -> None:
    """Raise the alert; an older open one about this model is resolved, so the newest change shows."""
    older = await alert_rows.open_alert(conn, KIND, alias)
    if older is not None:
        await alert_rows.resolve(conn, [older["id"]], now)
    await alert_rows.raise_alert(conn, kind=KIND, subject=alias, message=message(what), now=now)


async def flagged(conn: AsyncConnection, now: float) -> dict[str, ListingChange]:
    """alias → its listing change, for open alerts raised in the last FLAG_DAYS days."""
    rows = await alert_rows.open_since(conn, KIND, now - FLAG_DAYS * _DAY)
    return {r["subject"]: ListingChange(r["created_at"], what_of(r["message"])) for r in rows}
