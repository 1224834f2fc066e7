"""`/login` and `/logout`: the dashboard's admin-token form and its session cookie.

The cookie is HttpOnly and SameSite=Strict, holds no token (an HMAC-signed issue time, see
`server/auth.py`) and lasts a week; setting a new BENCHWARMERS_ADMIN_TOKEN ends every session.
Failed attempts are limited per client address.
"""

from __future__ import annotations

import html
from urllib.parse import parse_qs

from fastapi import APIRouter, Request
from starlette.responses import RedirectResponse, Response

from benchwarmers.errors import InvalidRequest, RateLimited
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
    "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; "
    "frame-ancestors 'none'; base-uri 'none'",
    "x-frame-options": "DENY",
    # same-origin, not no-referrer: with no-referrer Chromium sends `Origin: null` on the form's POST.
    "referrer-policy": "same-origin",
}

_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>Benchwarmers: log in</title>
<style>body{{font-family:system-ui,sans-serif;max-width:26rem;margin:4rem auto;padding:0 1rem}}
input{{width:100%;padding:.5rem;margin:.5rem 0;box-sizing:border-box}}.error{{color:#b00020}}</style>
</head><body>
<h1>Benchwarmers</h1>
<p>This bench asks for its admin token (<code>BENCHWARMERS_ADMIN_TOKEN</code>).</p>
{message}<form method="post" action="/login">
<input type="hidden" name="next" value="{next}">
<label for="token">Admin token</label>
<input id="token" name="token" type="password" autocomplete="current-password" required autofocus>
<button type="submit">Log in</button>
</form></body></html>
"""


def safe_next(value: str | None) -> str:
    """Only a path on this server: never another host (`//host`, `/\\host`) or a scheme."""
    if not value or not value.startswith("/") or value.startswith(("//", "/\\")):
        return "/"
    return value


def page(next_path: str, message: str = "", status: int = 200) -> Response:
    shown = f'<p class="error" role="alert">{html.escape(message)}</p>\n' if message else ""
    body = _PAGE.format(message=shown, next=html.escape(next_path, quote=True))
    return Response(body, status_code=status, media_type="text/html; charset=utf-8", headers=PAGE_HEADERS)


@router.get("/login")
async def login_form(request: Request) -> Response:
    next_path = safe_next(request.query_params.get("next"))
    if access(request).settings.admin_token is None:
        return RedirectResponse(next_path, status_code=303)
    return page(next_path)


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
        raise RateLimited(
            f"too many wrong admin tokens from this address; try again in {wait} s",
            headers={"Retry-After": str(wait)},
        )
    given = (fields.get("token") or [""])[0]
    if not given or not token_matches(given, token):
        await found.limits.login_failed(client)
        return page(next_path, "That is not the admin token.", status=401)
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
