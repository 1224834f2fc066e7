"""`BenchState`: what one process holds — database engines, the config snapshot, the seat history,
the upstream pool, the seat clients over it, the pacer and the secret box. Services receive it; it
knows none of them."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from benchwarmers.bench.budgets import Budgets
from benchwarmers.bench.calls.service import ModelCaller
from benchwarmers.bench.clients import SeatClients
from benchwarmers.bench.config_signal import ConfigSignal, Stamp
from benchwarmers.bench.core.estimate import Ratios
from benchwarmers.bench.history import SeatHistory
from benchwarmers.bench.metrics import Metrics
from benchwarmers.bench.pacing import Pacer, Scope
from benchwarmers.bench.snapshot import Snapshot, load_snapshot
from benchwarmers.bench.tracing import Tracing
from benchwarmers.catalog.pace import Limit
from benchwarmers.errors import StorageFull, Unavailable
from benchwarmers.settings import Settings
from benchwarmers.store import counts
from benchwarmers.store.changes import CHANGED, config_version
from benchwarmers.store.db import (
    LogFrames,
    checkpoint,
    create_engine,
    create_write_engine,
    migrate,
    ping,
    shown_url,
    unreachable,
    writer_left_open,
    writer_transaction,
)
from benchwarmers.store.disk import data_folder, disk_full, free_bytes, size_text
from benchwarmers.store.prompt_usage import recent_prompt_usage
from benchwarmers.store.secrets import SecretBox
from benchwarmers.upstream.client import UpstreamPool

# SQLite's log is checkpointed at most once a second, once it holds this many pages (SQLite's own
# autocheckpoint) or this many seconds after a commit. Counting commits instead (256) let the log
# go 5 s and 80 MB between checkpoints under load, where a commit carries dozens of panels.
CHECKPOINT_FRAMES = 1000
CHECKPOINT_SECONDS = 10.0
# How long a write waits for its turn on SQLite's one writer connection before the database counts
# as unreachable (503): what the writer pool's checkout timeout was.
WRITE_TURN_SECONDS = 60.0


class DatabaseUnavailable(Unavailable):
    """The database cannot be reached now: nothing was written by the request that got this; the
    next request tries again (connections are checked before use, so none needs a restart)."""

    code = "database_unavailable"

    def __init__(self) -> None:
        super().__init__(
            "the bench's database cannot be reached right now; nothing was recorded, try again shortly",
            headers={"Retry-After": "1"},
        )


def checkpoint_due(seconds_since_last: float, log_frames: Callable[[], int]) -> bool:
    """Whether a commit should start a checkpoint of SQLite's log (`log_frames` is read only when
    the time alone does not decide)."""
    if seconds_since_last < 1.0:
        return False
    return seconds_since_last >= CHECKPOINT_SECONDS or log_frames() >= CHECKPOINT_FRAMES


async def load_ratios(conn: AsyncConnection) -> Ratios:
    """Each model's characters a token, read again from its seats' reported usage (bench/panels/prompt_ratios.py)."""
    ratios = Ratios()
    for alias, kind, chars, prompt_tokens in await recent_prompt_usage(conn):
        ratios.observe(alias, kind, chars, prompt_tokens)
    return ratios


class BenchState:
    def __init__(self, settings: Settings, *, actor: str = "cli") -> None:
        self.settings = settings
        self.actor = actor  # written in the changes log for changes made through this process
        self.engine: AsyncEngine | None = None
        self.write_engine: AsyncEngine | None = None
        self.secrets = SecretBox(settings.home)
        self.upstream = UpstreamPool()
        self.clients = SeatClients(self.upstream, settings.client)
        # Slots under the providers' limits (bench/pacing.py); a day's allowance counted in memory
        # starts from what the call log says was spent since its reset.
        self.pacer = Pacer(settings.redis_url, seed=self._spent_since)
        # The one way a model is called: paced, classified and scrubbed (bench/calls/).
        self.calls = ModelCaller(self.clients, self.pacer, self.snapshot, settings.admin_token)
        self.history = SeatHistory()
        self.budgets = Budgets(self)  # daily budgets' tallies, corrected from the store (bench/budgets.py)
        self.ratios = Ratios()  # each model's characters a token, from its reported usage (panels/prompt_ratios.py)
        self.signal = ConfigSignal(
            settings.home, shared_database=not settings.db_url.startswith("sqlite"), redis_url=settings.redis_url
        )
        self._snapshot: Snapshot | None = None
        self._snapshot_lock = asyncio.Lock()
        self._stamp: Stamp = None
        self._checked_at = 0.0
        self._aliases: dict[int, str] | None = None  # model pk → alias, as of the last snapshot loaded
        self._history_read: asyncio.Future[None] | None = None  # the re-read or catch-up in flight
        self._metrics: Metrics | None = None
        self.tracing = Tracing(settings.otlp_endpoint)  # OpenTelemetry, when installed (bench/tracing.py)
        self._checkpoint: asyncio.Task[None] | None = None
        self._checkpointed_at = 0.0
        self._log_frames = LogFrames(settings.db_url)
        # SQLite: the writer's one connection stays checked out between transactions (a checkout
        # and a return cost more than a small transaction: 55 of its 95 µs), and writes in this
        # process take turns on it.
        self._writer: AsyncConnection | None = None
        self._write_turn = asyncio.Lock()
        self.data_folder = data_folder(settings.db_url, settings.home)
        # When a write last found the disk full (monotonic) and where, until a write succeeds: /readyz.
        self.last_full: tuple[float, str] | None = None

    async def _spent_since(self, scope: Scope, limit: Limit, since: float) -> int:
        alias, endpoint = (scope.name, None) if scope.kind == "model" else (None, scope.name)
        async with self.read() as conn:
            return await counts.spent_since(
                conn, alias=alias, endpoint=endpoint, since=since, tokens=limit.kind == "tokens"
            )

    @property
    def metrics(self) -> Metrics:
        """This process's figures (made on first use: CLI commands never load the client library)."""
        if self._metrics is None:
            self._metrics = Metrics(self.settings.metrics_dir)
        return self._metrics

    # -- lifecycle ---------------------------------------------------------------------------

    @property
    def opened(self) -> bool:
        return self.engine is not None

    @property
    def database_address(self) -> str:
        """Where the database is, as a log may say it (no user, password or query)."""
        return shown_url(self.settings.db_url)

    async def open(self) -> None:
        """Migrate the database and load what this process keeps of it.

        All or nothing: the engines are this state's only once everything is read, so a request
        served while the database is still away (server/startup.py waits for it) gets 503
        `database_unavailable`, never a read of a database not migrated yet. Raises as the
        database did, except that one that cannot be reached now (trying again later can help) is
        DatabaseUnavailable, the cause chained.
        """
        self.clients.check()
        self.settings.ensure_home()
        engine = create_engine(self.settings.db_url)
        write_engine = create_write_engine(self.settings.db_url, engine)
        try:
            await migrate(write_engine)
            async with engine.connect() as conn:
                history = await SeatHistory.load(conn)
                ratios = await load_ratios(conn)
        except BaseException as exc:
            if write_engine is not engine:
                await write_engine.dispose()
            await engine.dispose()
            if isinstance(exc, Exception) and (full := self._storage_full(exc)):
                raise full from exc
            if isinstance(exc, Exception) and unreachable(exc):
                raise DatabaseUnavailable() from exc
            raise
        self.engine, self.write_engine = engine, write_engine
        self.history, self.ratios = history, ratios

    async def close(self) -> None:
        await self.clients.aclose()
        await self.signal.aclose()
        await self.close_connections()

    async def close_connections(self) -> None:
        """Close every database connection this process holds (the next use opens new ones), once a
        checkpoint in progress is done with its own."""
        if self._checkpoint is not None:
            await asyncio.gather(self._checkpoint, return_exceptions=True)
        await self._drop_writer()
        self._log_frames.close()
        if self.write_engine is not None and self.write_engine is not self.engine:
            await self.write_engine.dispose()
        if self.engine is not None:
            await self.engine.dispose()

    async def _drop_writer(self) -> None:
        writer, self._writer = self._writer, None
        if writer is not None:
            with contextlib.suppress(Exception):
                await writer.close()

    @asynccontextmanager
    async def read(self) -> AsyncIterator[AsyncConnection]:
        if self.engine is None:
            raise DatabaseUnavailable()  # start-up is still waiting for the database (server/startup.py)
        try:
            async with self.engine.connect() as conn:
                yield conn
        except Exception as exc:
            if full := self._storage_full(exc):
                raise full from exc
            if unreachable(exc):
                raise DatabaseUnavailable() from exc
            raise

    async def ping(self) -> None:
        """One round trip to the database (raises when it cannot be reached)."""
        async with self.read() as conn:
            await ping(conn)

    @asynccontextmanager
    async def write(self) -> AsyncIterator[AsyncConnection]:
        """One transaction: everything inside commits together or not at all.

        When it recorded a config change, running servers are told once it has committed.
        """
        if self.write_engine is None:
            raise DatabaseUnavailable()
        changed = False
        try:
            async with self._transaction(self.write_engine) as conn:
                try:
                    yield conn
                finally:
                    changed = bool(conn.info.pop(CHANGED, False))
        except Exception as exc:
            if full := self._storage_full(exc):
                raise full from exc
            if unreachable(exc):
                raise DatabaseUnavailable() from exc
            raise
        self.last_full = None
        self._checkpoint_soon()
        if changed:
            self.invalidate()
            async with self.read() as conn:
                version = await config_version(conn)
            await self.signal.touch(version)

    @asynccontextmanager
    async def _transaction(self, engine: AsyncEngine) -> AsyncIterator[AsyncConnection]:
        """A transaction on a pooled connection (PostgreSQL), or on SQLite's writer connection."""
        if engine is self.engine:
            async with engine.begin() as conn:
                yield conn
            return
        async with self._writes_held():
            if self._writer is None or self._writer.closed or self._writer.invalidated:
                self._writer = await engine.connect()
            conn = self._writer
            try:
                async with writer_transaction(conn):
                    yield conn
            except BaseException:
                # A transaction that could not begin, commit or roll back leaves the connection
                # in a state not worth reasoning about: the next write opens a fresh one.
                if writer_left_open(conn):
                    await self._drop_writer()
                raise

    def _storage_full(self, exc: BaseException) -> StorageFull | None:
        """The refusal for an error that says the disk is full (None for any other error), noted for
        /readyz (bench/upkeep/disk.py)."""
        if isinstance(exc, StorageFull):
            return exc
        if not disk_full(exc):
            return None
        if self.settings.db_url.startswith("sqlite"):
            where = f"{self.data_folder}: {size_text(free_bytes(self.data_folder))} free"
        else:
            where = "the PostgreSQL server's disk: SQLSTATE 53100"
        self.last_full = (time.monotonic(), where)
        return StorageFull(where)

    def _checkpoint_soon(self) -> None:
        """A checkpoint of SQLite's log from a reader's connection (its own thread): the writer, in
        the event loop's thread, does none itself (store/inline_sqlite.py). At most once a second,
        and under light load only once the log holds CHECKPOINT_FRAMES pages or CHECKPOINT_SECONDS
        have passed: each one costs a few milliseconds whatever it copies (an fsync among them),
        and holds this process's writes back for its last step."""
        now = time.monotonic()
        if self.write_engine is self.engine or not checkpoint_due(now - self._checkpointed_at, self._log_frames):
            return
        if self._checkpoint is not None and not self._checkpoint.done():
            return
        self._checkpointed_at = now
        self._checkpoint = asyncio.get_running_loop().create_task(self._run_checkpoint())

    async def _run_checkpoint(self) -> None:
        # A checkpoint that fails is tried again after the next write; the log grows meanwhile.
        with contextlib.suppress(Exception):
            await self.checkpoint()

    async def checkpoint(self) -> None:
        """Copy SQLite's log into the database file and start it over (store/db.py `checkpoint`),
        from a reader's connection, with this process's writes held back for its last step."""
        async with self.read() as conn:
            await checkpoint(conn, self._writes_held())

    @asynccontextmanager
    async def _writes_held(self) -> AsyncIterator[None]:
        """This process's turn on SQLite's writer: its writes, or a checkpoint holding them back."""
        if self._write_turn.locked():
            async with asyncio.timeout(WRITE_TURN_SECONDS):
                await self._write_turn.acquire()
        else:
            await self._write_turn.acquire()  # no timer when nobody holds it (most writes)
        try:
            yield
        finally:
            self._write_turn.release()

    # -- cached state --------------------------------------------------------------------------

    async def snapshot(self) -> Snapshot:
        """The config as of the newest change. Cheap when nothing changed (a stat call).

        Safe under concurrent invalidation: the snapshot returned is the one this call loaded or
        found, never re-read from the cache after an await (another request may clear it).
        """
        cached = self._snapshot
        if (
            cached is not None
            and self.signal.unchanged(self._stamp, self._checked_at)
            and not await self.signal.newer_than(cached.version, self._checked_at)
        ):
            return cached
        stamp, checked_at = self.signal.stamp(), time.monotonic()
        async with self.read() as conn:
            version = await config_version(conn)
            if cached is None or cached.version != version:
                async with self._snapshot_lock:
                    current = self._snapshot
                    if current is None or current.version != version:
                        current = await load_snapshot(conn, self.secrets, self.settings.key_env_names)
                        self._snapshot = current
                        self._note_renames(current)
                    cached = current
        self._stamp, self._checked_at = stamp, checked_at
        return cached

    def _note_renames(self, snapshot: Snapshot) -> None:
        """A model renamed (by any process) makes the seat history, kept by alias, stale at once."""
        aliases = {model.pk: model.alias for model in snapshot.models.values()}
        before = self._aliases
        if before is not None and any(before.get(pk, alias) != alias for pk, alias in aliases.items()):
            self.history.expire()
        self._aliases = aliases

    def invalidate(self) -> None:
        self._snapshot = None
        self._stamp = None

    async def reload_history(self) -> None:
        async with self.read() as conn:
            self.history = await SeatHistory.load(conn)

    async def fresh_history(self) -> SeatHistory:
        """The seat history, re-read when it is stale and caught up with other processes' seats every
        second. One read at a time: the panels that arrive while it runs wait for that one (every
        panel starting its own, hundreds at once under load, slowed them all)."""
        now = time.time()
        if self.history.stale(now) or self.history.behind(now):
            if self._history_read is None or self._history_read.done():
                self._history_read = asyncio.ensure_future(self._read_history(now))
            # Shielded: a caller that goes away must not cancel the read the others wait for.
            await asyncio.shield(self._history_read)
        return self.history

    async def _read_history(self, now: float) -> None:
        if self.history.stale(now):
            await self.reload_history()
        else:
            async with self.read() as conn:
                await self.history.catch_up(conn, now)

    def public_base_url(self) -> str:
        if self.settings.public_url:
            return self.settings.public_url.rstrip("/")
        host, port = self.settings.host_port()
        host = f"[{host}]" if ":" in host else host
        return f"http://{host}:{port}"
