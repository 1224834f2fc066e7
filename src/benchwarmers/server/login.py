"""`/login` and `/logout`: the dashboard's admin-token form and its session cookie.

The cookie is HttpOnly and SameSite=Strict, holds no token (an HMAC-signed issue time, see
`server/auth.py`) and lasts a week; setting a new BENCHWARMERS_ADMIN_TOKEN ends every session.
Failed attempts are limited per client address.
"""

from __future__ import annotations

from urllib.parse import parse_qs

from fastapi import APIRouter, Request
from starlette.responses import RedirectResponse, Response

from benchwarmers.errors import InvalidRequest
from benchwarmers.server.auth import (
    SESSION_COOKIE,
    SESSION_SECONDS,
    access,
    new_session,
    refuse_cross_site,
    token_matches,
)
from benchwarmers.server.body import read_body

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
    from benchwarmers.server.pages import plain_page  # the pages import the routers this app holds

    return plain_page(
        request, "log in", status=status, headers=PAGE_HEADERS, heading="Log in", message=message, error=bool(message),
        login=True, next=next_path,
    )  # fmt: skip


@router.get("/login")
async def login_form(request: Request) -> Response:
    next_path = safe_next(request.query_params.get("next"))
    if access(request).settings.admin_token is None:
        return RedirectResponse(next_path, status_code=303)
    return page(request, next_path)


@router.post("/login")
async def login(request: Request) -> Response:
    found = access(request)
    refuse_cross_site(request, found.settings)
    try:
        fields = parse_qs((await read_body(request, cap=FORM_CAP)).decode(), max_num_fields=10)
    except (UnicodeDecodeError, ValueError):
        raise InvalidRequest("the login form is not valid form data") from None
    next_path = safe_next((fields.get("next") or ["/"])[0])
    token = found.settings.admin_token
    if token is None:
        return RedirectResponse(next_path, status_code=303)
    client = request.client.host if request.client else "unknown"
    wait = await found.limits.login_blocked(client)
    if wait is not None:
        message = f"Too many wrong admin tokens from this address; try again in {wait} s."
        refused = page(request, next_path, message, status=429)
        refused.headers["retry-after"] = str(wait)
        return refused
    given = (fields.get("token") or [""])[0]
    if not given or not token_matches(given, token):
        await found.limits.login_failed(client)
        return page(request, next_path, "That is not the admin token.", status=401)
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
