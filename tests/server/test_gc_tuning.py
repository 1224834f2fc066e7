"""The server keeps the cyclic GC off its event loop while it serves (server/app.py), and gives the
process its defaults back when it stops."""

from __future__ import annotations

import asyncio
import gc
from pathlib import Path

from benchwarmers.server.app import create_app
from benchwarmers.settings import Settings


def test_serving_freezes_the_startup_heap_and_raises_the_threshold(tmp_path: Path) -> None:
    defaults = gc.get_threshold()
    app = create_app(Settings(home=tmp_path / "home"))

    async def serve_once() -> tuple[int, tuple[int, int, int]]:
        async with app.router.lifespan_context(app):
            return gc.get_freeze_count(), gc.get_threshold()

    frozen, serving = asyncio.run(serve_once())
    assert frozen > 50_000  # modules, the catalog and the app, at least
    assert serving == (20_000, 10, 100)
    assert gc.get_freeze_count() == 0
    assert gc.get_threshold() == defaults
