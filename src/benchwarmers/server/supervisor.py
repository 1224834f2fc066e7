"""`serve --workers N`'s manager: uvicorn's, except that a worker which fails to start is started again.

uvicorn's `Multiprocess` stops every worker, and itself, as soon as one exits with its start-up
failure code (3): an app that failed to start would fail the same way on every restart
(encode/uvicorn discussion 2440). That holds before any worker has served. Once one has, the app
is known to work and a start-up that failed was a failure of the moment (a database outage is
waited out by the worker itself, server/startup.py; a worker can still fail on a full disk or a
database refusing connections for maintenance): the worker is started again after a pause that
doubles from FIRST_PAUSE to LONGEST_PAUSE, starting over once a worker has started, and the
workers that do serve keep serving meanwhile.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from socket import socket

from uvicorn.config import STARTUP_FAILURE, Config
from uvicorn.supervisors.multiprocess import Multiprocess, Process

from benchwarmers.server.startup import pauses

logger = logging.getLogger("uvicorn.error")

FIRST_PAUSE = 1.0
LONGEST_PAUSE = 30.0
READY_TIMEOUT = 1.0  # seconds a starting worker has to say whether it serves yet (its own thread answers)


def restart_pauses() -> Iterator[float]:
    return pauses(FIRST_PAUSE, LONGEST_PAUSE)


class Supervisor(Multiprocess):
    """Multiprocess, restarting a worker that failed its start-up once the bench has served."""

    def __init__(self, config: Config, sockets: list[socket]) -> None:
        super().__init__(config, sockets)
        self.served = False  # a worker of this run has finished its start-up, or `serve` opened the bench
        self.failed_to_start = False  # stopped because no worker could start
        self._starting: set[int] = set()  # slots whose worker has not said it serves yet
        self._due: dict[int, float] = {}  # slot -> when its worker is started again
        self._pauses = restart_pauses()

    def init_processes(self) -> None:
        super().init_processes()
        self._starting = set(range(len(self.processes)))

    def _start_worker(self, idx: int) -> None:
        process = Process(self.config, self.sockets)
        process.start()
        self.processes[idx] = process
        self._starting.add(idx)

    def _note_started(self) -> None:
        """Ask each starting worker whether it serves yet (before anyone's failure is judged)."""
        for idx in sorted(self._starting):
            process = self.processes[idx]
            if process.process.is_alive() and process.is_ready(timeout=READY_TIMEOUT):
                self._starting.discard(idx)
                self.served = True
                self._pauses = restart_pauses()

    def keep_subprocess_alive(self) -> None:
        if self.should_exit.is_set():
            return
        self._note_started()
        for idx, process in enumerate(self.processes):
            due = self._due.get(idx)
            if due is not None:  # a worker that failed to start, waiting out its pause
                if process.process.is_alive():  # replaced meanwhile (SIGHUP restarts every slot)
                    del self._due[idx]
                elif time.monotonic() >= due:
                    del self._due[idx]
                    self._start_worker(idx)
                continue
            if process.is_alive(timeout=self.config.timeout_worker_healthcheck):
                continue
            process.kill()  # hung, or already gone
            process.join()
            self._starting.discard(idx)
            if self.should_exit.is_set():
                return
            if process.exitcode == STARTUP_FAILURE:
                if not self.served:  # nothing has started in this run: the app cannot, as uvicorn says
                    logger.error(f"Child process [{process.pid}] failed to start, stopping the parent process.")
                    self.failed_to_start = True
                    self.should_exit.set()
                    return
                pause = next(self._pauses)
                logger.error(f"Child process [{process.pid}] failed to start; starting another in {pause:.0f} s.")
                self._due[idx] = time.monotonic() + pause
                continue
            logger.info(f"Child process [{process.pid}] died")
            self._start_worker(idx)

    def handle_ttou(self) -> None:
        last = len(self.processes) - 1
        super().handle_ttou()
        if len(self.processes) == last:  # that slot is gone, and with it any restart it waited for
            self._due.pop(last, None)
            self._starting.discard(last)
