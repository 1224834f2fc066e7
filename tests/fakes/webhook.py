"""A webhook receiver on 127.0.0.1: what Apprise's `json://` target posts to, recorded for a test.

    with WebhookReceiver() as hook:
        url = hook.apprise_url("/alerts")   # json://127.0.0.1:PORT/alerts
        ...
        assert [r.body for r in hook.received] == [...]

`fail_next(n)` answers the next n posts with 500 (a service that is down for a while).
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self


@dataclass(frozen=True)
class Received:
    path: str
    headers: dict[str, str]
    body: Any


class WebhookReceiver:
    def __init__(self) -> None:
        self.received: list[Received] = []
        self._failing = 0
        self._lock = threading.Condition()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length)
                with receiver._lock:
                    receiver.received.append(
                        Received(self.path, {k.lower(): v for k, v in self.headers.items()}, json.loads(raw or b"null"))
                    )
                    failing = receiver._failing > 0
                    receiver._failing -= failing
                    receiver._lock.notify_all()
                self.send_response(500 if failing else 200)
                self.send_header("content-length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:  # quiet: pytest shows what matters
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, name="webhook", daemon=True)

    def apprise_url(self, path: str = "/hook") -> str:
        return f"json://127.0.0.1:{self.port}{path}"

    def wait_for(self, count: int, timeout: float = 30.0) -> list[Received]:
        """What was received once at least `count` posts came (or the timeout passed)."""
        with self._lock:
            self._lock.wait_for(lambda: len(self.received) >= count, timeout)
            return list(self.received)

    def fail_next(self, count: int) -> None:
        with self._lock:
            self._failing = count

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
