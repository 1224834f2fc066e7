"""`Bench`: the state one process holds — database engine, config snapshot, seat history, upstream
pool — and the services that act on it. The HTTP server, the CLI and the MCP server are callers."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from benchwarmers.bench.config import Snapshot, load_snapshot
from benchwarmers.settings import Settings
from benchwarmers.store import calls
from benchwarmers.store.changes import config_version
from benchwarmers.store.db import create_engine, migrate
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
        self.secrets = SecretBox(settings.home)
        self.upstream = UpstreamPool()
        self.history = History()
        self._snapshot: Snapshot | None = None
        self._snapshot_lock = asyncio.Lock()
        from benchwarmers.bench.admin import Admin
        from benchwarmers.bench.gateway import Gateway

        self.admin = Admin(self)
        self.gateway = Gateway(self)

    # -- lifecycle ---------------------------------------------------------------------------

    async def open(self) -> Bench:
        self.settings.ensure_home()
        self.engine = create_engine(self.settings.db_url)
        await migrate(self.engine)
        await self.reload_history()
        return self

    async def close(self) -> None:
        await self.upstream.aclose()
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
        """One transaction: everything inside commits together or not at all."""
        assert self.engine is not None, "Bench.open() first"
        async with self.engine.begin() as conn:
            yield conn

    # -- cached state --------------------------------------------------------------------------

    async def snapshot(self) -> Snapshot:
        """The config as of the newest change (one cheap query to know whether it moved)."""
        async with self.read() as conn:
            version = await config_version(conn)
            if self._snapshot is not None and self._snapshot.version == version:
                return self._snapshot
            async with self._snapshot_lock:
                if self._snapshot is None or self._snapshot.version != version:
                    self._snapshot = await load_snapshot(conn, self.secrets)
        return self._snapshot

    def invalidate(self) -> None:
        self._snapshot = None

    async def reload_history(self) -> None:
        async with self.read() as conn:
            self.history = History(
                last_seated=await calls.last_seated(conn),
                counts=await calls.verdict_counts(conn),
                loaded_at=time.time(),
            )

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
