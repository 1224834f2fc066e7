"""Who is asking: the identity every panel, verdict and call-log read is made for."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Caller:
    """`local` on loopback without keys, else the gateway key's name and scope."""

    name: str = "local"
    collections: frozenset[str] | None = None  # None = every collection
    judges_own_only: bool = False
    rpm: int | None = None  # the gateway key's panels a minute (None = no limit)
    daily_panels: int | None = None  # the gateway key's daily budgets (bench/budgets.py; None = none)
    daily_tokens: int | None = None
