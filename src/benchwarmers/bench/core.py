"""`Bench`: the state one process holds — database engine, config snapshot, seat history, upstream
pool — and the services that act on it. The HTTP server, the CLI and the MCP server are callers."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from benchwarmers.bench.config_signal import ConfigSignal, Stamp
from benchwarmers.bench.snapshot import Snapshot, load_snapshot
from benchwarmers.settings import Settings
from benchwarmers.store import calls, roster
from benchwarmers.store.changes import CHANGED, config_version
from benchwarmers.store.db import create_engine, create_write_engine, migrate
from benchwarmers.store.secrets import SecretBox
from benchwarmers.upstream.client import UpstreamPool

HISTORY_TTL = 30.0  # seconds before seat history is re-read (picks up other processes' panels)


@dataclass
class History:
    """What seating needs from the call log, kept in memory and updated as panels run."""

    last_seated: dict[tuple[str, str], float] = field(default_factory=dict)
    counts: dict[tuple[str, str], tuple[int, int]] = field(default_factory=dict)
    loaded_at: float = 0.0


class Bench:
    def __init__(self, settings: Settings, *, actor: str = "cli") -> None:
        self.settings = settings
        self.actor = actor
        self.engine: AsyncEngine | None = None
        self.write_engine: AsyncEngine | None = None
        self.secrets = SecretBox(settings.home)
        self.upstream = UpstreamPool()
        self.history = History()
        self.streaking: set[int] = set()  # models whose failure streak is above zero
        self._snapshot: Snapshot | None = None
        self._snapshot_lock = asyncio.Lock()
        self.signal = ConfigSignal(settings.home, shared_database=not settings.db_url.startswith("sqlite"))
        self._stamp: Stamp = None
        self._checked_at = 0.0
        from benchwarmers.bench.admin.service import Admin
        from benchwarmers.bench.panels.service import Gateway

        self.admin = Admin(self)
        self.gateway = Gateway(self)

    # -- lifecycle ---------------------------------------------------------------------------

    async def open(self) -> Bench:
        self.settings.ensure_home()
        self.engine = create_engine(self.settings.db_url)
        self.write_engine = create_write_engine(self.settings.db_url, self.engine)
        await migrate(self.write_engine)
        await self.reload_history()
        return self

    async def close(self) -> None:
        await self.gateway.recorder.close()
        await self.upstream.aclose()
        if self.write_engine is not None and self.write_engine is not self.engine:
            await self.write_engine.dispose()
        if self.engine is not None:
            await self.engine.dispose()

    async def __aenter__(self) -> Bench:
        return await self.open()

    async def __aexit__(self, *_exc: object) -> None:
        await self.close()

    @asynccontextmanager
    async def read(self) -> AsyncIterator[AsyncConnection]:
        assert self.engine is not None, "Bench.open() first"
        async with self.engine.connect() as conn:
            yield conn

    @asynccontextmanager
    async def write(self) -> AsyncIterator[AsyncConnection]:
        """One transaction: everything inside commits together or not at all.

        When it recorded a config change, running servers are told once it has committed.
        """
        assert self.write_engine is not None, "Bench.open() first"
        changed = False
        async with self.write_engine.begin() as conn:
            try:
                yield conn
            finally:
                changed = bool(conn.info.pop(CHANGED, False))
        if changed:
            self.invalidate()
            async with self.read() as conn:
                self.signal.touch(await config_version(conn))

    # -- cached state --------------------------------------------------------------------------

    async def snapshot(self) -> Snapshot:
        """The config as of the newest change. Cheap when nothing changed (a stat call)."""
        cached = self._snapshot
        if cached is not None and self.signal.unchanged(self._stamp, self._checked_at):
            return cached
        stamp, checked_at = self.signal.stamp(), time.monotonic()
        async with self.read() as conn:
            version = await config_version(conn)
            if cached is None or cached.version != version:
                async with self._snapshot_lock:
                    if self._snapshot is None or self._snapshot.version != version:
                        self._snapshot = await load_snapshot(conn, self.secrets)
        self._stamp, self._checked_at = stamp, checked_at
        assert self._snapshot is not None
        return self._snapshot

    def invalidate(self) -> None:
        self._snapshot = None
        self._stamp = None

    async def reload_history(self) -> None:
        async with self.read() as conn:
            self.history = History(
                last_seated=await calls.last_seated(conn),
                counts=await calls.verdict_counts(conn),
                loaded_at=time.time(),
            )
            self.streaking = await roster.streaking_models(conn)

    async def fresh_history(self) -> History:
        if time.time() - self.history.loaded_at > HISTORY_TTL:
            await self.reload_history()
        return self.history

    def public_base_url(self) -> str:
        if self.settings.public_url:
            return self.settings.public_url.rstrip("/")
        host, port = self.settings.host_port()
        host = f"[{host}]" if ":" in host else host
        return f"http://{host}:{port}"
