"""Seat rows as the evidence reads them."""

from __future__ import annotations


def row(
    alias: str,
    panel: str,
    useful: bool | None = None,
    *,
    shape: str = "review",
    status: str = "ok",
    seconds: float = 1.0,
    at: float = 100.0,
    real: tuple[str, ...] = (),
    false: tuple[str, ...] = (),
    judged_at: float | None = None,
) -> dict:
    return {
        "call": f"{panel}.{alias}",
        "panel_id": panel,
        "seat": "member",
        "alias": alias,
        "endpoint": "e",
        "shape": shape,
        "status": status,
        "seconds": seconds,
        "caller": "local",
        "created_at": at,
        "length": 10,
        "useful": useful,
        "real": list(real) if useful is not None else None,
        "false_claims": list(false) if useful is not None else None,
        "judge": "local" if useful is not None else None,
        "judged_at": (judged_at or at + 1) if useful is not None else None,
    }
