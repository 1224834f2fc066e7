"""Gateway keys: made, shown once, kept as a SHA-256, checked on every call, revoked at once.

The pure parts (making a key, hashing it) stand alone (reading the Authorization header is the
server's, in `server/auth.py`); `Keys`
does the rest against the database, caching the keys until the changes log moves, so a key made
or revoked by the CLI or the dashboard counts on the very next request in every process.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import re
import secrets
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlalchemy.exc import SQLAlchemyError

from benchwarmers.bench.budget_rules import check_budget
from benchwarmers.bench.caller import Caller
from benchwarmers.bench.names import collection_name, suggest
from benchwarmers.errors import Conflict, InvalidRequest, NotFound, Unauthorized
from benchwarmers.store import keys as key_rows
from benchwarmers.store.changes import record_change

if TYPE_CHECKING:
    from benchwarmers.bench.state import BenchState

log = logging.getLogger("benchwarmers.keys")

PREFIX = "bwk_"
KEY_BYTES = 32  # 43 URL-safe characters after the prefix
NAME = re.compile(r"^[a-z0-9][a-z0-9._-]{0,63}$")
# `local` is the caller without a key: a key by that name could judge every local call.
RESERVED_NAMES = frozenset({"local"})
MAX_RPM = 100_000
TOUCH_EVERY = 60.0  # seconds: "last used" is written at most this often per key


def new_key() -> str:
    return PREFIX + secrets.token_urlsafe(KEY_BYTES)


def hash_key(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def _refused(message: str, code: str) -> Unauthorized:
    return Unauthorized(message, code=code)


@dataclass(frozen=True)
class KeyRecord:
    name: str
    sha256: str
    last4: str
    collections: frozenset[str] | None  # None = every collection
    rpm: int | None
    daily_panels: int | None
    daily_tokens: int | None
    created_at: float
    last_used_at: float | None
    revoked_at: float | None

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> KeyRecord:
        scope = row["collections"]
        return cls(
            name=row["name"],
            sha256=row["sha256"],
            last4=row["last4"],
            collections=None if scope is None else frozenset(scope),
            rpm=row["rpm"],
            daily_panels=row.get("daily_panels"),
            daily_tokens=row.get("daily_tokens"),
            created_at=row["created_at"],
            last_used_at=row["last_used_at"],
            revoked_at=row["revoked_at"],
        )

    def caller(self) -> Caller:
        return Caller(
            name=self.name,
            collections=self.collections,
            judges_own_only=True,
            rpm=self.rpm,
            daily_panels=self.daily_panels,
            daily_tokens=self.daily_tokens,
        )

    def public(self) -> dict[str, Any]:
        """The key as shown anywhere after it is made: never the key, only its last four characters."""
        return {
            "name": self.name,
            "last4": self.last4,
            "collections": None if self.collections is None else sorted(self.collections),
            "rpm": self.rpm,
            "daily_panels": self.daily_panels,
            "daily_tokens": self.daily_tokens,
            "created_at": self.created_at,
            "last_used_at": self.last_used_at,
            "revoked_at": self.revoked_at,
        }

    def logged(self) -> dict[str, Any]:
        """What the changes log keeps of a key: who and what it may call, never the key or its hash."""
        public = self.public()
        return {k: public[k] for k in ("name", "last4", "collections", "rpm", "daily_panels", "daily_tokens")}


def check_name(name: object) -> str:
    if not isinstance(name, str) or not NAME.match(name):
        raise InvalidRequest(
            f"key name {name!r} is not valid: lower-case letters, digits, '.', '_' or '-' (at most 64)",
            param="name",
        )
    if name in RESERVED_NAMES:
        raise InvalidRequest(f"key name {name!r} is reserved for callers without a key", param="name")
    return name


def check_rpm(rpm: Any) -> int | None:
    if rpm is None:
        return None
    if isinstance(rpm, bool) or not isinstance(rpm, int) or not 1 <= rpm <= MAX_RPM:
        raise InvalidRequest(f"rpm must be a whole number of requests a minute from 1 to {MAX_RPM}", param="rpm")
    return rpm


def check_scope(wanted: Any, known: Iterable[str]) -> list[str] | None:
    """The collections a key may call, as names without `bench/`; None means every collection."""
    if wanted is None:
        return None
    if not isinstance(wanted, list) or not all(isinstance(c, str) for c in wanted):
        raise InvalidRequest("collections must be a list of collection names, or null for all", param="collections")
    if not wanted:
        raise InvalidRequest(
            "collections is empty: name at least one collection, or leave it out for all", param="collections"
        )
    known = sorted(known)
    names = sorted({collection_name(c) for c in wanted})
    for name in names:
        if name not in known:
            listing = ", ".join(f"bench/{k}" for k in known) or "none yet"
            raise NotFound(
                f"no collection bench/{name}.{suggest(name, known, prefix='bench/')} Collections: {listing}",
                param="collections",
                code="collection_not_found",
            )
    return names


class Keys:
    """Gateway keys for one process: the database is the truth, the cache follows the changes log."""

    def __init__(self, state: BenchState) -> None:
        self.state = state
        self._version: int | None = None
        self._by_hash: dict[str, KeyRecord] = {}
        self._touched: dict[str, float] = {}

    # -- managing -------------------------------------------------------------------------------

    async def create(
        self,
        name: object,
        collections: list[str] | None = None,
        rpm: int | None = None,
        *,
        daily_panels: int | None = None,
        daily_tokens: int | None = None,
        actor: str | None = None,
    ) -> tuple[str, dict[str, Any]]:
        """A new key and its public record. The key is in the return value and nowhere else."""
        name = check_name(name)
        rpm = check_rpm(rpm)
        budgets = {
            "daily_panels": check_budget(daily_panels, "daily_panels"),
            "daily_tokens": check_budget(daily_tokens, "daily_tokens"),
        }
        key = new_key()
        scope = check_scope(collections, (await self.state.snapshot()).collections)
        now = time.time()
        async with self.state.write() as conn:
            values = {
                "sha256": hash_key(key),
                "last4": key[-4:],
                "collections": scope,
                "rpm": rpm,
                **budgets,
                "created_at": now,
                "last_used_at": None,
                "revoked_at": None,
            }
            existing = await key_rows.get_key(conn, name)
            if existing is not None and existing["revoked_at"] is None:
                raise Conflict(
                    f"a gateway key named {name!r} exists already; revoke it first or pick another name",
                    param="name",
                    code="key_exists",
                )
            if existing is not None:
                # A caller is its name: a new key by this name would read and judge the old key's panels.
                raise Conflict(
                    f"the name {name!r} belonged to a gateway key that was revoked, and a name is never given "
                    "to a second key (it would see the first one's panels); pick another name",
                    param="name",
                    code="key_name_revoked",
                )
            await key_rows.insert_key(conn, name=name, **values)
            record = KeyRecord.from_row({"name": name, **values})
            await record_change(
                conn,
                actor=actor or self.state.actor,
                subject="key",
                name=name,
                action="create",
                after=record.logged(),
            )
        return key, record.public()

    async def list_keys(self, *, include_revoked: bool = False) -> list[dict[str, Any]]:
        async with self.state.read() as conn:
            rows = await key_rows.list_keys(conn, include_revoked=include_revoked)
        return [KeyRecord.from_row(row).public() for row in rows]

    async def edit(self, name: str, *, actor: str | None = None, **changes: Any) -> dict[str, Any]:
        """Change a key's rpm or daily budgets (None: unchanged; 0: no limit); the key itself stays."""
        values: dict[str, Any] = {}
        for field, value in changes.items():
            if field not in ("rpm", "daily_panels", "daily_tokens"):
                raise InvalidRequest(f"a key's {field} cannot be edited", param=field)
            if value is None:
                continue
            if field == "rpm":
                values[field] = None if value == 0 else check_rpm(value)
            else:
                values[field] = check_budget(value, field)
        async with self.state.write() as conn:
            row = await self._active(conn, name)
            before = KeyRecord.from_row(row)
            after = KeyRecord.from_row({**row, **values})
            if after == before:
                return after.public()
            await key_rows.update_key(conn, name, values)
            await record_change(
                conn,
                actor=actor or self.state.actor,
                subject="key",
                name=name,
                action="update",
                before=before.logged(),
                after=after.logged(),
            )
        return after.public()

    async def _active(self, conn: Any, name: str) -> dict[str, Any]:
        row = await key_rows.get_key(conn, name)
        if row is None:
            names = [r["name"] for r in await key_rows.list_keys(conn, include_revoked=False)]
            raise NotFound(f"no gateway key named {name!r}.{suggest(name, names)}", param="name")
        if row["revoked_at"] is not None:
            raise Conflict(f"gateway key {name!r} is revoked already", param="name", code="key_revoked")
        return row

    async def revoke(self, name: str, *, actor: str | None = None) -> dict[str, Any]:
        now = time.time()
        async with self.state.write() as conn:
            row = await self._active(conn, name)
            await key_rows.revoke_key(conn, name, now)
            record = KeyRecord.from_row({**row, "revoked_at": now})
            await record_change(
                conn,
                actor=actor or self.state.actor,
                subject="key",
                name=name,
                action="revoke",
                before=KeyRecord.from_row(row).logged(),
            )
        return record.public()

    # -- checking -------------------------------------------------------------------------------

    async def verify(self, token: str) -> KeyRecord:
        """The key's record; 401 saying whether it is unknown or revoked. Notes when it was used."""
        digest = hash_key(token)
        await self._refresh()
        record = self._by_hash.get(digest)
        # The lookup is by hash, so timing says nothing of the key; the comparison is constant-time anyway.
        if record is None or not hmac.compare_digest(record.sha256, digest):
            raise _refused(
                f"unknown gateway key ending {token[-4:]}: it was never made here or has been replaced; "
                "make one with `benchwarmers key create NAME` or on the dashboard's Settings",
                "invalid_api_key",
            )
        if record.revoked_at is not None:
            raise _refused(
                f"gateway key {record.name!r} (ending {record.last4}) was revoked; ask for a new key",
                "revoked_api_key",
            )
        await self._touch(record)
        return record

    async def _refresh(self) -> None:
        version = (await self.state.snapshot()).version
        if version == self._version:
            return
        async with self.state.read() as conn:
            rows = await key_rows.list_keys(conn)
        self._by_hash = {row["sha256"]: KeyRecord.from_row(row) for row in rows}
        self._version = version

    async def _touch(self, record: KeyRecord) -> None:
        # One small write a minute per key, not one per request.
        now = time.time()
        if now - self._touched.get(record.sha256, 0.0) < TOUCH_EVERY:
            return
        self._touched[record.sha256] = now
        try:
            async with self.state.write() as conn:
                await key_rows.touch_key(conn, record.sha256, now)
        except SQLAlchemyError as exc:
            # "Last used" is a courtesy: a busy database must not refuse the call.
            log.warning("could not note when key %r was last used: %s", record.name, type(exc).__name__)
