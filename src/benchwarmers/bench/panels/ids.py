"""Call ids: `p20261129-231501-7f3a09c2` for a panel, `<panel>.member1` / `.explorer2` / `.merger`
for seats.

A panel id is unique because the panel's row is reserved (inserted under its primary key) before
any model is called: a process that draws an id another process holds draws again. The 32 random
bits of the suffix make that rare; the reservation makes a duplicate impossible.
"""

from __future__ import annotations

import secrets
import time


class PanelIds:
    """Draws panel ids, never the same one twice in this process."""

    def __init__(self) -> None:
        self._second = ""
        self._used: set[str] = set()

    def new(self, now: float | None = None) -> str:
        stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime(now if now is not None else time.time()))
        if stamp != self._second:
            self._second, self._used = stamp, set()
        while True:
            suffix = secrets.token_hex(4)
            if suffix not in self._used:
                self._used.add(suffix)
                return f"p{stamp}-{suffix}"


def seat_call(panel_id: str, kind: str, index: int | None = None) -> str:
    return f"{panel_id}.{kind}{index if index is not None else ''}"
