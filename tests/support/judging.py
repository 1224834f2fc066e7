"""Verdicts posted over HTTP, and the seats of panels by model."""

from __future__ import annotations

import httpx2


def judge(server, call: str, useful: bool, real: list[str] | None = None, false: list[str] | None = None) -> None:
    body = {"call": call, "useful": useful, "real": real or [], "false": false or []}
    response = httpx2.post(f"{server.url}/bench/verdict", json=body)
    assert response.status_code == 200, response.text


def seats_by_model(reply) -> dict[str, str]:
    return {s["alias"].removeprefix("fake/"): s["call"] for s in reply.bench["seats"]}
