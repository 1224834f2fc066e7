"""Call ids: `p20261129-231501-7f3a` for a panel, `<panel>.member1` / `.explorer2` / `.merger` for seats."""

from __future__ import annotations

import secrets
import time


class PanelIds:
    """Issues panel ids, never the same one twice in this process (4 hex digits per second)."""

    def __init__(self) -> None:
        self._second = ""
        self._used: set[str] = set()

    def new(self, now: float | None = None) -> str:
        stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime(now if now is not None else time.time()))
        if stamp != self._second:
            self._second, self._used = stamp, set()
        while True:
            suffix = secrets.token_hex(2)
            if suffix not in self._used:
                self._used.add(suffix)
                return f"p{stamp}-{suffix}"


def seat_call(panel_id: str, kind: str, index: int | None = None) -> str:
    return f"{panel_id}.{kind}{index if index is not None else ''}"
