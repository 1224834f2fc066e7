"""Who is calling. On loopback as installed every caller is `local` and any bearer is ignored."""

from __future__ import annotations

from starlette.requests import Request

from benchwarmers.bench.gateway import Caller

LOCAL = Caller()


async def caller_for(request: Request) -> Caller:
    return LOCAL
