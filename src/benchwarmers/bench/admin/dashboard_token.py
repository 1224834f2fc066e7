"""The dashboard's own token, when gateway keys are required and no BENCHWARMERS_ADMIN_TOKEN is set.

With `BENCHWARMERS_REQUIRE_KEYS=1` apps hold gateway keys, and a key must never open the dashboard
or `/api`. So the dashboard gets a token of its own: `dashboard-token` in the data folder, 32 random
bytes, mode 0600 in the 0700 home. Whoever can read it is the bench's own user (who could run the
CLI anyway); `benchwarmers serve` prints a login URL holding it, and `benchwarmers dashboard-url`
prints it again. The browser exchanges it once for the session cookie (`server/routes/login.py`).

- Made atomically: written to a private temporary file and hard-linked into place, so a reader
  never sees half a token and two processes starting together end up with the same one.
- Kept across restarts: every worker of `serve --workers N`, and every server sharing the home,
  reads the same file, and a worker that uvicorn restarts must not end the sessions the others hold.
- Replaced on demand (`benchwarmers dashboard-url --rotate`): each server notices the file changed
  on its next admin request (one `stat`), and since a session is signed under a key derived from
  the token, every session made with the old one ends.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from pathlib import Path

from benchwarmers.errors import Unavailable
from benchwarmers.settings import Settings

TOKEN_FILE = "dashboard-token"  # noqa: S105 (a file name, not a password)
MIN_CHARS = 32


def uses_file(settings: Settings) -> bool:
    """Whether the dashboard's token is the file's: keys required, no admin token in the environment."""
    return settings.require_keys and settings.admin_token is None


def token_path(settings: Settings) -> Path:
    return settings.home / TOKEN_FILE


def read_or_make(path: Path) -> str:
    """The token in `path`, made first if there is none."""
    try:
        return _read(path)
    except FileNotFoundError:
        pass
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    _publish(path, secrets.token_urlsafe(32), replace=False)
    return _read(path)  # another process may have linked its token first: that one is the token


def rotate(path: Path) -> str:
    """A new token in place of the old one (every session made with the old one ends)."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    _publish(path, secrets.token_urlsafe(32), replace=True)
    return _read(path)


def _publish(path: Path, token: str, *, replace: bool) -> None:
    staged = path.with_name(f".{path.name}.{secrets.token_hex(8)}")
    fd = os.open(staged, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "w") as out:
            out.write(token + "\n")
            out.flush()
            os.fsync(out.fileno())
        if replace:
            os.replace(staged, path)
        else:
            with contextlib.suppress(FileExistsError):  # another process was first: its token stands
                os.link(staged, path)
    finally:
        staged.unlink(missing_ok=True)


def _read(path: Path) -> str:
    token = path.read_text(encoding="utf-8").strip()
    if len(token) < MIN_CHARS or any(c.isspace() for c in token):
        raise Unavailable(
            f"{path} does not hold a dashboard token (one line of at least {MIN_CHARS} characters): "
            "delete it and run `benchwarmers dashboard-url`, which makes a new one",
            code="dashboard_token_unreadable",
        )
    return token


class DashboardToken:
    """The file's token as one server process checks it: read again whenever the file changes."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._seen: tuple[int, int, int] | None = None
        self._token = ""
        self.current()  # made (or read) as the server starts, so `serve` can print it and errors show early

    def current(self) -> str:
        try:
            found = os.stat(self.path)
        except FileNotFoundError:  # deleted while serving: a new one, as on a first start
            read_or_make(self.path)
            found = os.stat(self.path)
        seen = (found.st_ino, found.st_mtime_ns, found.st_size)
        if seen != self._seen:
            self._token = _read(self.path)
            self._seen = seen
        return self._token
