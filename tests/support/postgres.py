"""A throwaway PostgreSQL cluster for the session, and one fresh database per test made from a migrated
template (CREATE DATABASE ... TEMPLATE copies files: milliseconds, where migrating would take a second).

The cluster starts on first use only, so a run without PostgreSQL tests never pays for it.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import subprocess
import tempfile
import uuid
from dataclasses import dataclass
from pathlib import Path

import pytest

PG_BIN = next(iter(sorted(Path("/usr/lib/postgresql").glob("*/bin"), reverse=True)), None)
TEMPLATE = "bench_template"


def as_postgres(*command: str) -> None:
    # initdb refuses to run as root; CI runs as root, so the cluster belongs to the postgres user.
    prefix = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
    subprocess.run([*prefix, *command], check=True, capture_output=True, timeout=60)


def skip_without_postgres() -> None:
    if PG_BIN is None or (os.geteuid() == 0 and shutil.which("runuser") is None):
        pytest.skip("PostgreSQL server binaries are not installed (apt-get install postgresql)")
    pytest.importorskip("asyncpg", reason="the postgres extra is not installed (pip install 'benchwarmers[postgres]')")


@dataclass
class Cluster:
    """One `postgres` server: start, stop (as a crash would), and a database per test."""

    root: Path
    port: int

    @property
    def data(self) -> Path:
        return self.root / "data"

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def url(self, name: str) -> str:
        return f"postgresql+asyncpg://bench@{self.address}/{name}"

    def start(self) -> None:
        assert PG_BIN is not None
        options = f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=300"
        log = str(self.root / "log")
        as_postgres(str(PG_BIN / "pg_ctl"), "-D", str(self.data), "-l", log, "-w", "-o", options, "start")

    def stop(self, mode: str = "immediate") -> None:
        assert PG_BIN is not None
        as_postgres(str(PG_BIN / "pg_ctl"), "-D", str(self.data), "-m", mode, "-w", "stop")

    def execute(self, *statements: str, database: str = "postgres") -> None:
        import asyncpg

        async def main() -> None:
            conn = await asyncpg.connect(host="127.0.0.1", port=self.port, user="bench", database=database)
            try:
                for statement in statements:
                    await conn.execute(statement)
            finally:
                await conn.close()

        asyncio.run(main())

    def new_database(self) -> str:
        """A fresh database at the newest schema; its URL."""
        name = f"bench_{uuid.uuid4().hex[:12]}"
        self.execute(f"CREATE DATABASE {name} TEMPLATE {TEMPLATE}")
        return self.url(name)

    def empty_database(self) -> str:
        """A fresh database with no schema at all (for migration tests); its URL."""
        name = f"bench_{uuid.uuid4().hex[:12]}"
        self.execute(f"CREATE DATABASE {name}")
        return self.url(name)

    def dump(self, url: str) -> bytes:
        """`pg_dump` of the database at `url` (every row, as text)."""
        assert PG_BIN is not None
        name = url.rsplit("/", 1)[1]
        command = [str(PG_BIN / "pg_dump"), "-h", "127.0.0.1", "-p", str(self.port), "-U", "bench", name]
        return subprocess.run(command, check=True, capture_output=True, timeout=60).stdout

    def drop(self, url: str) -> None:
        self.execute(f"DROP DATABASE IF EXISTS {url.rsplit('/', 1)[1]} WITH (FORCE)")


def start_cluster(port: int) -> Cluster:
    skip_without_postgres()
    assert PG_BIN is not None
    # Outside pytest's private temp folders: the postgres user must be able to reach it.
    root = Path(tempfile.mkdtemp(prefix="bench-pg-"))
    if os.geteuid() == 0:
        shutil.chown(root, "postgres")
    cluster = Cluster(root, port)
    as_postgres(str(PG_BIN / "initdb"), "-D", str(cluster.data), "-A", "trust", "-U", "bench")
    cluster.start()
    cluster.execute(f"CREATE DATABASE {TEMPLATE}")
    from benchwarmers.store.db import create_engine, migrate

    async def migrate_template() -> None:
        engine = create_engine(cluster.url(TEMPLATE))
        await migrate(engine)
        await engine.dispose()

    asyncio.run(migrate_template())
    return cluster


def remove_cluster(cluster: Cluster) -> None:
    # Already stopped when a test that stopped it failed before starting it again.
    with contextlib.suppress(subprocess.CalledProcessError):
        cluster.stop()
    shutil.rmtree(cluster.root, ignore_errors=True)
