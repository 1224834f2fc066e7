"""Provider API keys at rest: Fernet-encrypted with a key kept in `$BENCHWARMERS_HOME/secret.key`."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cryptography.fernet import Fernet


class SecretBox:
    """Encrypts and decrypts stored provider keys. The key file is created once, mode 0600."""

    def __init__(self, home: Path) -> None:
        self.path = home / "secret.key"
        self._fernet: Fernet | None = None

    def _load(self) -> Fernet:
        # Imported on first use: a bench without stored keys never pays for it (~7 MB resident).
        from cryptography.fernet import Fernet

        if self._fernet is None:
            if not self.path.exists():
                self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
                # O_EXCL: two processes starting at once must not overwrite each other's key.
                try:
                    fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
                except FileExistsError:
                    pass
                else:
                    with os.fdopen(fd, "wb") as handle:
                        handle.write(Fernet.generate_key())
            self._fernet = Fernet(self.path.read_bytes().strip())
        return self._fernet

    def encrypt(self, secret: str) -> bytes:
        return self._load().encrypt(secret.encode())

    def decrypt(self, token: bytes) -> str | None:
        """The stored key, or None when secret.key no longer matches (say so, don't crash)."""
        from cryptography.fernet import InvalidToken

        try:
            return self._load().decrypt(token).decode()
        except InvalidToken:
            return None
