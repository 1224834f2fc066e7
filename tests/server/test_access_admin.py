"""The dashboard's side: the admin-token login, its session cookie, and cross-site protection."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest
from fastapi import FastAPI
from starlette.responses import Response

from benchwarmers.server import app as server_app
from benchwarmers.server.auth import SESSION_SECONDS, new_session, session_valid
from benchwarmers.server.deps import Admin, pages_router
from benchwarmers.server.routes.login import safe_next
from benchwarmers.store.changes import list_changes
from tests.support import benchserver
from tests.support.benchserver import BenchServer

TOKEN = "admin-token-for-tests-9f8e7d6c5b4a"
PAGE = "/_test/page"


def with_test_page(settings):
    """The real app plus one page guarded the way every dashboard page is."""
    app: FastAPI = server_app.create_app(settings)
    router = pages_router()

    @router.get(PAGE)
    async def page(actor: Admin) -> Response:
        return Response(f"hello {actor}", media_type="text/plain")

    app.include_router(router)
    return app


@pytest.fixture
def admin_server(tmp_path: Path, monkeypatch) -> Iterator[BenchServer]:
    monkeypatch.setattr(benchserver, "create_app", with_test_page)
    server = BenchServer(tmp_path / "home", admin_token=TOKEN).start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def open_server(tmp_path: Path, monkeypatch) -> Iterator[BenchServer]:
    monkeypatch.setattr(benchserver, "create_app", with_test_page)
    server = BenchServer(tmp_path / "home", allowed_origins="http://app.example").start()
    try:
        yield server
    finally:
        server.stop()


def login(server: BenchServer, token: str = TOKEN, next_path: str = "/", **headers: str) -> httpx2.Response:
    return httpx2.post(f"{server.url}/login", data={"token": token, "next": next_path}, headers=headers)


def session_of(response: httpx2.Response) -> str:
    return response.cookies["bw_session"]


def test_a_page_sends_the_browser_to_the_login_form(admin_server):
    response = httpx2.get(f"{admin_server.url}{PAGE}?tab=keys")
    assert response.status_code == 303
    assert response.headers["location"] == "/login?next=%2F_test%2Fpage%3Ftab%3Dkeys"


def test_the_login_form(admin_server):
    response = httpx2.get(f"{admin_server.url}/login", params={"next": '/x"><script>alert(1)</script>'})
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/html; charset=utf-8"
    assert response.headers["cache-control"] == "no-store"
    assert response.headers["x-frame-options"] == "DENY"
    assert "frame-ancestors 'none'" in response.headers["content-security-policy"]
    assert '<form method="post" action="/login">' in response.text
    assert 'name="token" type="password"' in response.text
    assert "<script>" not in response.text
    assert 'value="/x&#34;&gt;&lt;script&gt;alert(1)&lt;/script&gt;"' in response.text


def test_logging_in_sets_an_httponly_samesite_strict_session(admin_server):
    wrong = login(admin_server, token="not-it")
    assert wrong.status_code == 401
    assert "That is not the admin token." in wrong.text
    assert "set-cookie" not in wrong.headers

    right = login(admin_server, next_path=f"{PAGE}?tab=keys")
    assert right.status_code == 303
    assert right.headers["location"] == f"{PAGE}?tab=keys"
    cookie = right.headers["set-cookie"]
    value = session_of(right)
    assert cookie == f"bw_session={value}; HttpOnly; Max-Age={SESSION_SECONDS}; Path=/; SameSite=strict"
    assert TOKEN not in cookie
    assert session_valid(value, TOKEN)

    cookies = {"bw_session": value}
    assert httpx2.get(f"{admin_server.url}{PAGE}", cookies=cookies).text == "hello admin"
    assert httpx2.get(f"{admin_server.url}/api/keys", cookies=cookies).status_code == 200
    assert httpx2.get(f"{admin_server.url}/api/keys").status_code == 401

    out = httpx2.post(f"{admin_server.url}/logout", cookies=cookies)
    assert out.status_code == 303
    cleared = out.headers["set-cookie"]
    assert cleared.startswith('bw_session=""; expires=')
    assert cleared.endswith("; HttpOnly; Max-Age=0; Path=/; SameSite=strict")


def test_the_cookie_is_secure_behind_an_https_public_url(tmp_path):
    server = BenchServer(tmp_path / "home", admin_token=TOKEN, public_url="https://bench.example").start()
    try:
        assert "; Secure" in login(server).headers["set-cookie"]
    finally:
        server.stop()


def test_the_token_as_a_bearer_opens_the_api_but_a_gateway_key_does_not(admin_server):
    bearer = {"authorization": f"Bearer {TOKEN}"}
    assert httpx2.get(f"{admin_server.url}/api/keys", headers=bearer).status_code == 200
    made = httpx2.post(f"{admin_server.url}/api/keys", json={"name": "ci"}, headers=bearer)
    assert made.status_code == 201
    key = made.json()["key"]
    refused = httpx2.get(f"{admin_server.url}/api/keys", headers={"authorization": f"Bearer {key}"})
    assert refused.status_code == 401
    assert refused.headers["www-authenticate"] == "Bearer"
    wrong = httpx2.get(f"{admin_server.url}/api/keys", headers={"authorization": f"Bearer {TOKEN}x"})
    assert wrong.status_code == 401


def test_sessions_cannot_be_forged_and_expire():
    session = new_session(TOKEN, now=1_000_000)
    assert session_valid(session, TOKEN, now=1_000_000 + 60)
    assert not session_valid(session, TOKEN, now=1_000_000 + SESSION_SECONDS + 1)
    assert not session_valid(session, "another-token", now=1_000_000)  # a new token ends every session
    body, _, mac = session.rpartition(".")
    assert not session_valid(f"{body}.{'0' * len(mac)}", TOKEN, now=1_000_000)
    later = body.replace("1000000", "1999999")
    assert not session_valid(f"{later}.{mac}", TOKEN, now=1_999_999)
    for junk in ("", "x", "v1.x.y.z", "v2.1000000.abc.def"):
        assert not session_valid(junk, TOKEN)


@pytest.mark.parametrize(
    ("value", "safe"),
    [
        ("/collections?x=1", "/collections?x=1"),
        ("//evil.example/", "/"),
        ("/\\evil.example", "/"),
        ("https://evil.example", "/"),
        ("", "/"),
        (None, "/"),
    ],
)
def test_login_only_sends_the_browser_back_to_this_server(value, safe):
    assert safe_next(value) == safe


def test_login_redirects_never_leave_the_server(admin_server):
    assert login(admin_server, next_path="//evil.example/x").headers["location"] == "/"


def test_wrong_tokens_are_limited_per_client(admin_server):
    for _ in range(10):
        assert login(admin_server, token="guess").status_code == 401
    blocked = login(admin_server)
    assert blocked.status_code == 429
    assert 1 <= int(blocked.headers["retry-after"]) <= 60
    # The lockout is the login page again, saying why (not a JSON body in the browser).
    assert blocked.headers["content-type"] == "text/html; charset=utf-8"
    assert "Too many wrong admin tokens from this address; try again in" in blocked.text


def test_without_an_admin_token_the_login_page_sends_you_on(open_server):
    response = httpx2.get(f"{open_server.url}/login", params={"next": PAGE})
    assert (response.status_code, response.headers["location"]) == (303, PAGE)
    assert httpx2.get(f"{open_server.url}{PAGE}").text == "hello dashboard"


# -- cross-site requests ----------------------------------------------------------------------------


def _cross_site(response: httpx2.Response) -> bool:
    error = response.json()["error"]
    return response.status_code == 403 and error["code"] == "cross_site_request"


def test_changes_from_another_site_are_refused_with_a_session(admin_server):
    cookies = {"bw_session": session_of(login(admin_server))}
    url = f"{admin_server.url}/api/keys"
    own = admin_server.url
    assert _cross_site(httpx2.post(url, json={"name": "a"}, cookies=cookies, headers={"origin": "http://evil.example"}))
    assert _cross_site(httpx2.post(url, json={"name": "a"}, cookies=cookies, headers={"origin": "null"}))
    assert _cross_site(httpx2.post(url, json={"name": "a"}, cookies=cookies, headers={"sec-fetch-site": "cross-site"}))
    assert _cross_site(httpx2.post(url, json={"name": "a"}, cookies=cookies, headers={"sec-fetch-site": "same-site"}))
    assert _cross_site(httpx2.delete(f"{url}/a", cookies=cookies, headers={"origin": "http://evil.example"}))
    assert httpx2.post(url, json={"name": "a"}, cookies=cookies, headers={"origin": own}).status_code == 201
    same = {"origin": own, "sec-fetch-site": "same-origin"}
    assert httpx2.post(url, json={"name": "b"}, cookies=cookies, headers=same).status_code == 201
    # Logging in (or out) from another site is refused too.
    assert _cross_site(login(admin_server, origin="http://evil.example"))


def test_the_open_dashboard_refuses_other_sites_too(open_server):
    url = f"{open_server.url}/api/keys"
    assert _cross_site(httpx2.post(url, json={"name": "a"}, headers={"origin": "http://evil.example"}))
    # An origin allowed for the gateway is not allowed on the dashboard's API.
    assert _cross_site(httpx2.post(url, json={"name": "a"}, headers={"origin": "http://app.example"}))
    assert httpx2.post(url, json={"name": "a"}).status_code == 201  # the CLI, curl, scripts

    async def actors(bench):
        async with bench.state.read() as conn:
            return [c["actor"] for c in await list_changes(conn, subject="key")]

    assert open_server.admin(actors) == ["dashboard"]


def test_a_web_page_cannot_run_panels_or_judge_through_the_browser(open_server):
    verdict = {"call": "p-none.member1", "useful": True}
    url = f"{open_server.url}/bench/verdict"
    evil = httpx2.post(url, json=verdict, headers={"origin": "http://evil.example"})
    assert _cross_site(evil)
    assert evil.json()["error"]["message"] == (
        "cross-site request refused: a page on http://evil.example may not call this bench "
        "(a browser app's origin goes in BENCH_ALLOWED_ORIGINS, for the gateway routes only)"
    )
    chat = {"model": "bench/x", "messages": [{"role": "user", "content": "hi"}]}
    plain = {"origin": "http://evil.example", "content-type": "text/plain"}
    assert _cross_site(httpx2.post(f"{open_server.v1}/chat/completions", json=chat, headers=plain))
    # The allowed origin, the server's own pages and non-browser clients get through to the route.
    for headers in ({"origin": "http://app.example"}, {"origin": open_server.url}, {}):
        assert httpx2.post(url, json=verdict, headers=headers).status_code == 404


# -- DNS rebinding -----------------------------------------------------------------------------------


def test_without_an_admin_token_only_loopback_host_names_are_answered(open_server):
    refused = httpx2.get(f"{open_server.v1}/models", headers={"host": "rebind.example:8123"})
    assert refused.status_code == 403
    assert refused.json() == {
        "error": {
            "message": "host 'rebind.example' refused: without BENCHWARMERS_ADMIN_TOKEN this bench answers only "
            "to loopback names such as 127.0.0.1 and localhost (set BENCHWARMERS_PUBLIC_URL to the address you use)",
            "type": "permission_error",
            "param": None,
            "code": "host_not_allowed",
        }
    }
    assert httpx2.get(f"{open_server.url}/api/keys", headers={"host": "rebind.example"}).status_code == 403
    assert httpx2.get(f"{open_server.url}{PAGE}", headers={"host": "rebind.example"}).status_code == 403
    for host in (f"localhost:{open_server.port}", "127.0.0.1", "[::1]:8123", "app.localhost"):
        assert httpx2.get(f"{open_server.v1}/models", headers={"host": host}).status_code == 200
        assert httpx2.get(f"{open_server.url}/api/keys", headers={"host": host}).status_code == 200
    assert httpx2.get(f"{open_server.url}/healthz", headers={"host": "rebind.example"}).status_code == 200


def test_the_public_urls_host_is_answered(tmp_path):
    server = BenchServer(tmp_path / "home", require_keys=True, public_url="https://bench.example/").start()
    try:
        admin = server.admin_headers()  # keys required: /api needs the dashboard's token
        assert httpx2.get(f"{server.url}/api/keys", headers={**admin, "host": "bench.example"}).status_code == 200
        assert httpx2.get(f"{server.url}/api/keys", headers={**admin, "host": "other.example"}).status_code == 403
    finally:
        server.stop()


def test_with_an_admin_token_any_host_name_may_be_used(admin_server):
    bearer = {"authorization": f"Bearer {TOKEN}", "host": "bench.lan:8123"}
    assert httpx2.get(f"{admin_server.url}/api/keys", headers=bearer).status_code == 200


def test_headers_no_browser_sends_are_refused_not_crashed(open_server):
    assert httpx2.get(f"{open_server.v1}/models", headers={"host": "[bad"}).status_code == 403
    odd_origin = httpx2.post(f"{open_server.url}/api/keys", json={"name": "a"}, headers={"origin": "http://[bad"})
    assert odd_origin.status_code == 403
