"""A loop that runs inside `benchwarmers serve` as one asyncio task, started and stopped with it."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Self


class BackgroundJob:
    task_name = "benchwarmers-job"
    _task: asyncio.Task[None] | None = None

    def start(self) -> Self:
        self._task = asyncio.create_task(self.run(), name=self.task_name)
        return self

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def run(self) -> None:
        raise NotImplementedError
