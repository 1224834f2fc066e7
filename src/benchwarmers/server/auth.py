"""Who is calling, in the three modes of GATEWAY.md's "Who may call".

- As installed (no variables): every `/v1` and `/bench` caller is `local`; any bearer is ignored.
- `BENCHWARMERS_REQUIRE_KEYS=1`: `/v1` and `/bench` need a gateway key; the dashboard pages and
  `/api` need the dashboard's own token (`dashboard-token` in the home, bench/admin/dashboard_token.py).
- `BENCHWARMERS_ADMIN_TOKEN`: gateway keys as above, and the dashboard pages and `/api` need that
  token. In both keyed modes the token is taken as the session cookie `/login` sets or as
  `Authorization: Bearer <token>` on `/api`; a gateway key never opens them.

`caller_for(request)` guards every `/v1` and `/bench` route; `admin_for(request)` every `/api`
route and dashboard page. Both are FastAPI dependencies that the routers apply (`server/deps.py`),
so FastAPI runs each once per request. In every mode a browser request from a page on another origin is
refused (a gateway call from an origin in BENCH_ALLOWED_ORIGINS excepted), and without an admin
token a request must name the server by a loopback Host: so a web page cannot run panels, read
the call log, post verdicts or change the bench through the user's browser.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import time
from dataclasses import dataclass
from urllib.parse import quote, urlsplit

from starlette.exceptions import HTTPException
from starlette.requests import Request

from benchwarmers.bench.admin.dashboard_token import DashboardToken, token_path, uses_file
from benchwarmers.bench.admin.keys import Keys
from benchwarmers.bench.caller import Caller
from benchwarmers.errors import Forbidden, Unauthorized
from benchwarmers.server.ratelimit import RateLimits
from benchwarmers.settings import Settings, is_loopback, origin_of

LOCAL = Caller()
# The actor written in the changes log: the open dashboard (as installed), or whoever holds the
# dashboard's token (the admin token, or the token file's); the CLI writes `cli`.
OPEN_ADMIN = "dashboard"
TOKEN_ADMIN = "admin"  # noqa: S105 (a name, not a password)
SESSION_COOKIE = "bw_session"
SESSION_SECONDS = 7 * 24 * 3600
_SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})

_KEY_SHAPE = re.compile(r"^bwk_[A-Za-z0-9_-]{43,128}$")

MISSING = "no gateway key: send Authorization: Bearer bwk_... (or x-api-key: bwk_..., as Anthropic's clients do)"
NOT_BEARER = "malformed Authorization header: send Authorization: Bearer bwk_... with a gateway key"
NOT_A_KEY = (
    "malformed gateway key: the bearer is not a gateway key (bwk_ and 43 letters, digits, '-' or '_'); "
    "make one with `benchwarmers key create NAME` or on the dashboard's Settings"
)


@dataclass
class Access:
    """What one server process keeps for access control: the key cache, the rate counters and, when
    keys are required without an admin token, the dashboard's token file."""

    settings: Settings
    keys: Keys
    limits: RateLimits
    token_file: DashboardToken | None = None

    @classmethod
    def of(cls, settings: Settings, keys: Keys) -> Access:
        token_file = DashboardToken(token_path(settings)) if uses_file(settings) else None
        return cls(settings=settings, keys=keys, limits=RateLimits(settings.redis_url), token_file=token_file)

    def dashboard_token(self) -> str | None:
        """What opens the dashboard and `/api`: the admin token, the token file's, or None (open)."""
        if self.settings.admin_token is not None:
            return self.settings.admin_token
        return self.token_file.current() if self.token_file is not None else None


def access(request: Request) -> Access:
    state = request.app.state
    found = getattr(state, "access", None)
    if found is None:
        bench = state.bench
        found = Access.of(bench.settings, bench.keys)
        state.access = found
    return found


# -- where a browser request comes from ---------------------------------------------------------


def own_origin(request: Request, origin: str, settings: Settings) -> bool:
    """Whether `origin` is this server as the browser reached it (or its public URL)."""
    if settings.public_url and origin.rstrip("/") == origin_of(settings.public_url):
        return True
    host = request.headers.get("host", "")
    try:
        return bool(host) and origin != "null" and urlsplit(origin).netloc.lower() == host.lower()
    except ValueError:  # an Origin no browser would send
        return False


def refuse_cross_site(request: Request, settings: Settings, *, allowed: frozenset[str] = frozenset()) -> None:
    """403 for a browser request sent by a page on another site (CLI and SDK clients send no Origin)."""
    origin = request.headers.get("origin")
    site = request.headers.get("sec-fetch-site")
    if origin is not None:
        if origin.rstrip("/") in allowed or own_origin(request, origin, settings):
            return
    elif site is None or site in ("same-origin", "none") or request.method in _SAFE_METHODS:
        return
    raise Forbidden(
        f"cross-site request refused: a page on {origin or 'another site'} may not call this bench "
        "(a browser app's origin goes in BENCH_ALLOWED_ORIGINS, for the gateway routes only)",
        code="cross_site_request",
    )


def refuse_foreign_host(request: Request, settings: Settings) -> None:
    """Without an admin token the bench is reachable on loopback only, so the Host a browser sent
    must be a loopback one (or the public URL's): a web page that points its own name at 127.0.0.1
    (DNS rebinding) would otherwise be "same-origin" with an open bench."""
    host = request.headers.get("host")
    if not host:
        return
    try:
        name = (urlsplit(f"//{host}").hostname or "").rstrip(".")
    except ValueError:
        name = ""
    public = urlsplit(settings.public_url).hostname if settings.public_url else None
    if name == public or name == "localhost" or name.endswith(".localhost") or is_loopback(name):
        return
    raise Forbidden(
        f"host {name!r} refused: without BENCHWARMERS_ADMIN_TOKEN this bench answers only to loopback "
        "names such as 127.0.0.1 and localhost (set BENCHWARMERS_PUBLIC_URL to the address you use)",
        code="host_not_allowed",
    )


# -- gateway callers ----------------------------------------------------------------------------


def bearer_value(header: str | None) -> str | None:
    """The credential of an `Authorization: Bearer ...` header; None for no header or another scheme."""
    scheme, _, value = (header or "").strip().partition(" ")
    return value.strip() if scheme.lower() == "bearer" and value.strip() else None


def bearer_token(header: str | None, api_key: str | None = None) -> str:
    """The gateway key in an Authorization header, else in an `x-api-key` header (where Anthropic's
    SDKs and Claude Code send one); 401 saying whether it is missing or malformed."""
    if header is None or not header.strip():
        if api_key is None or not api_key.strip():
            raise Unauthorized(MISSING, code="missing_api_key")
        token: str | None = api_key.strip()
    else:
        token = bearer_value(header)
    if token is None:
        raise Unauthorized(NOT_BEARER, code="malformed_api_key")
    if not _KEY_SHAPE.match(token):
        raise Unauthorized(NOT_A_KEY, code="malformed_api_key")
    return token


async def caller_for(request: Request) -> Caller:
    """The caller of a `/v1` or `/bench` route: `local`, or the gateway key's name, scope and rate.

    Take it as a dependency (`GatewayCaller`), which FastAPI runs once per request. The key's requests
    a minute are counted where a panel is admitted (`panel_http.serve_panel`), not here: a refusal or a
    read of `/v1/models` is not a request the limit is for."""
    found = access(request)
    if found.settings.admin_token is None:
        refuse_foreign_host(request, found.settings)
    refuse_cross_site(request, found.settings, allowed=found.settings.origins)
    if not found.settings.keys_required:
        return LOCAL
    headers = request.headers
    record = await found.keys.verify(bearer_token(headers.get("authorization"), headers.get("x-api-key")))
    return record.caller()


# -- the admin --------------------------------------------------------------------------------------


def _session_key(token: str) -> bytes:
    # Derived from the token: setting a new token ends every session made with the old one.
    return hmac.new(token.encode(), b"benchwarmers dashboard session", hashlib.sha256).digest()


def new_session(token: str, now: float | None = None) -> str:
    body = f"v1.{int(now if now is not None else time.time())}.{secrets.token_urlsafe(16)}"
    mac = hmac.new(_session_key(token), body.encode(), hashlib.sha256).hexdigest()
    return f"{body}.{mac}"


def session_valid(cookie: str | None, token: str, now: float | None = None) -> bool:
    if not cookie:
        return False
    body, _, mac = cookie.rpartition(".")
    parts = body.split(".")
    if len(parts) != 3 or parts[0] != "v1" or not parts[1].isdigit():
        return False
    expected = hmac.new(_session_key(token), body.encode(), hashlib.sha256).hexdigest()
    if not hmac.compare_digest(mac.encode(), expected.encode()):
        return False
    age = (now if now is not None else time.time()) - int(parts[1])
    return -60 <= age <= SESSION_SECONDS


def token_matches(given: str, token: str) -> bool:
    return hmac.compare_digest(given.encode(), token.encode())


# Where the admin token is taken as a bearer (programs: the API, a Prometheus scraper); pages need the session.
BEARER_PATHS = ("/api", "/metrics")


ADMIN_LOGIN_HINT = (
    "the dashboard API needs the admin token: log in at /login, or send "
    "Authorization: Bearer <BENCHWARMERS_ADMIN_TOKEN>"
)
DASHBOARD_LOGIN_HINT = (
    "the dashboard API needs the dashboard's session, and a gateway key never opens it: open the login URL "
    "`benchwarmers dashboard-url` prints (or log in at /login), or send Authorization: Bearer <the token in "
    "BENCHWARMERS_HOME/dashboard-token>"
)


def is_admin(request: Request, token: str) -> bool:
    """Whether the request holds `token`: as a bearer on `/api` (and `/metrics`), or a session made with it."""
    given = bearer_value(request.headers.get("authorization"))
    if given is not None and request.url.path.startswith(BEARER_PATHS) and token_matches(given, token):
        return True
    return session_valid(request.cookies.get(SESSION_COOKIE), token)


async def admin_for(request: Request) -> str:
    """The admin acting on `/api` or a dashboard page (the name written in the changes log).

    As installed the dashboard is open. Whenever gateway keys are required it needs the dashboard's
    token (the admin token, else the token file's): `/api` answers 401 without it, and a page sends
    the browser to `/login`. Changes from a page on another site are refused in every mode.
    """
    found = access(request)
    settings = found.settings
    if settings.admin_token is None:
        refuse_foreign_host(request, settings)
    refuse_cross_site(request, settings)
    token = found.dashboard_token()
    if token is None:
        return OPEN_ADMIN
    if is_admin(request, token):
        return TOKEN_ADMIN
    if request.url.path.startswith(BEARER_PATHS) or request.method not in ("GET", "HEAD"):
        needed = ADMIN_LOGIN_HINT if settings.admin_token is not None else DASHBOARD_LOGIN_HINT
        raise Unauthorized(needed, code="admin_token_required")
    target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
    raise HTTPException(303, headers={"Location": f"/login?next={quote(target, safe='')}"})
