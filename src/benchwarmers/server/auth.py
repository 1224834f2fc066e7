"""Who is calling. On loopback as installed every caller is `local` and any bearer is ignored.

`caller_for(request)` is used by every `/v1` and `/bench` route; `admin_for(request)` guards the
dashboard's `/api` routes and pages. (Gateway keys and the admin token: see the access issue.)
"""

from __future__ import annotations

from starlette.requests import Request

from benchwarmers.bench.gateway import Caller

LOCAL = Caller()


async def caller_for(request: Request) -> Caller:
    return LOCAL


async def admin_for(request: Request) -> str:
    """The admin acting on `/api` (the name written in the changes log). Raises when not allowed."""
    return "dashboard"
