"""`/login` and `/logout`: the dashboard's token form, its login URL, and the session cookie.

The dashboard's token is BENCHWARMERS_ADMIN_TOKEN, or with BENCHWARMERS_REQUIRE_KEYS alone the
one in the home's `dashboard-token`. It is given in the form, or once in a URL as Jupyter does
(`/login?token=...`, which `serve` and `benchwarmers dashboard-url` print): the reply sets the
session cookie and sends the browser on at once, to an address without the token.

The cookie is HttpOnly and SameSite=Strict, holds no token (an HMAC-signed issue time, see
`server/auth.py`) and lasts a week; a new token ends every session. Failed attempts are limited
per client address.
"""

from __future__ import annotations

from urllib.parse import parse_qs

from fastapi import APIRouter, Request
from starlette.responses import RedirectResponse, Response

from benchwarmers.errors import InvalidRequest
from benchwarmers.server.auth import (
    SESSION_COOKIE,
    SESSION_SECONDS,
    Access,
    access,
    new_session,
    refuse_cross_site,
    token_matches,
)
from benchwarmers.server.body import read_body
from benchwarmers.server.rendering import plain_page

router = APIRouter()

FORM_CAP = 16 * 1024
# The page needs nothing from anywhere, and no one may frame it.
PAGE_HEADERS = {
    "cache-control": "no-store",
    "content-security-policy": "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; "
    "frame-ancestors 'none'; base-uri 'none'",
    "x-frame-options": "DENY",
    # same-origin, not no-referrer: with no-referrer Chromium sends `Origin: null` on the form's POST.
    "referrer-policy": "same-origin",
}


def safe_next(value: str | None) -> str:
    """Only a path on this server: never another host (`//host`, `/\\host`) or a scheme."""
    if not value or not value.startswith("/") or value.startswith(("//", "/\\")):
        return "/"
    return value


def page(request: Request, next_path: str, message: str = "", status: int = 200) -> Response:
    """The login form, in the dashboard's theme (its stylesheets only: no script runs on it)."""
    token_file = access(request).settings.admin_token is None
    return plain_page(
        request, "log in", status=status, headers=PAGE_HEADERS, heading="Log in", message=message, error=bool(message),
        login=True, next=next_path, token_file=token_file,
    )  # fmt: skip


@router.get("/login")
async def login_form(request: Request) -> Response:
    found = access(request)
    next_path = safe_next(request.query_params.get("next"))
    token = found.dashboard_token()
    if token is None:
        return RedirectResponse(next_path, status_code=303)
    given = request.query_params.get("token")
    if given is None:
        return page(request, next_path)
    refuse_cross_site(request, found.settings)
    return await exchange(request, found, token, given, next_path)


@router.post("/login")
async def login(request: Request) -> Response:
    found = access(request)
    refuse_cross_site(request, found.settings)
    try:
        fields = parse_qs((await read_body(request, cap=FORM_CAP)).decode(), max_num_fields=10)
    except (UnicodeDecodeError, ValueError):
        raise InvalidRequest("the login form is not valid form data") from None
    next_path = safe_next((fields.get("next") or ["/"])[0])
    token = found.dashboard_token()
    if token is None:
        return RedirectResponse(next_path, status_code=303)
    return await exchange(request, found, token, (fields.get("token") or [""])[0], next_path)


async def exchange(request: Request, found: Access, token: str, given: str, next_path: str) -> Response:
    """The token given for the session cookie, then on to `next_path` (an address without the token)."""
    client = request.client.host if request.client else "unknown"
    named = "admin token" if found.settings.admin_token is not None else "dashboard token"
    wait = await found.limits.login_blocked(client)
    if wait is not None:
        message = f"Too many wrong {named}s from this address; try again in {wait} s."
        refused = page(request, next_path, message, status=429)
        refused.headers["retry-after"] = str(wait)
        return refused
    if not given or not token_matches(given, token):
        await found.limits.login_failed(client)
        return page(request, next_path, f"That is not the {named}.", status=401)
    response = RedirectResponse(next_path, status_code=303)
    response.set_cookie(
        SESSION_COOKIE,
        new_session(token),
        max_age=SESSION_SECONDS,
        path="/",
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https" or (found.settings.public_url or "").startswith("https://"),
    )
    response.headers["cache-control"] = "no-store"
    return response


@router.post("/logout")
async def logout(request: Request) -> Response:
    refuse_cross_site(request, access(request).settings)
    response = RedirectResponse("/login", status_code=303)
    response.delete_cookie(SESSION_COOKIE, path="/", httponly=True, samesite="strict")
    return response
