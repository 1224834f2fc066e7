"""Log records from the bench and from uvicorn as they arrive (the server logs from its own thread)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager


class Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.setFormatter(logging.Formatter("%(name)s %(levelname)s %(message)s"))
        self.lines: list[tuple[int, str]] = []
        self.arrived = threading.Event()

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append((record.levelno, self.format(record)))
        self.arrived.set()


@contextmanager
def recording() -> Iterator[Records]:
    """The bench's records from INFO up, and uvicorn's (it logs an exception that escapes the app)."""
    handler = Records()
    bench, uvicorn = logging.getLogger("benchwarmers"), logging.getLogger("uvicorn.error")
    level = bench.level
    bench.setLevel(logging.INFO)
    for logger in (bench, uvicorn):
        logger.addHandler(handler)
    try:
        yield handler
    finally:
        for logger in (bench, uvicorn):
            logger.removeHandler(handler)
        bench.setLevel(level)
