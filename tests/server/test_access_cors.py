"""CORS: answered on the gateway routes for the allowed origins only, exactly as GATEWAY.md says;
and, in headless chromium, a page on an allowed origin calls the gateway while another is blocked."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx2
import pytest

from benchwarmers.server.cors import allowed_headers
from tests.support.benchserver import BenchServer, add_fake_endpoint, free_port, listed
from tests.support.browser import launch, require_chromium
from tests.support.panels import collection

APP = "http://app.example"
PUBLIC = "https://bench.example"
OTHER = "http://evil.example"
EXPOSE = "x-request-id, retry-after, retry-after-ms, x-should-retry"
STAINLESS = (
    "authorization, content-type, x-stainless-arch, x-stainless-lang, x-stainless-os, "
    "x-stainless-package-version, x-stainless-retry-count, x-stainless-runtime, x-stainless-runtime-version"
)


def cors_headers(response: httpx2.Response) -> dict[str, str]:
    return {k: v for k, v in response.headers.items() if k.startswith("access-control-") or k == "vary"}


@pytest.fixture
def cors_server(tmp_path: Path, fake) -> Iterator[tuple[BenchServer, str]]:
    server = BenchServer(
        tmp_path / "home", require_keys=True, allowed_origins=f"{APP}, http://two.example/", public_url=f"{PUBLIC}/v1"
    ).start()
    try:
        add_fake_endpoint(server, fake, models=[listed("phi-4")])
        collection(server, "solo", ["phi-4"], max_explorers=0)
        key, _ = server.admin(lambda bench: bench.keys.create("browser", ["solo"], 30))
        yield server, key
    finally:
        server.stop()


def test_an_allowed_origin_is_echoed_with_vary_and_never_credentials(cors_server):
    server, key = cors_server
    for origin in (APP, "http://two.example", PUBLIC):
        response = httpx2.get(f"{server.v1}/models", headers={"origin": origin, "authorization": f"Bearer {key}"})
        assert response.status_code == 200
        assert cors_headers(response) == {
            "access-control-allow-origin": origin,
            "access-control-expose-headers": EXPOSE,
            "vary": "Origin",
        }


def test_refusals_carry_cors_so_the_page_can_read_them(cors_server):
    server, _ = cors_server
    response = httpx2.get(f"{server.v1}/models", headers={"origin": APP})
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "missing_api_key"
    assert cors_headers(response) == {
        "access-control-allow-origin": APP,
        "access-control-expose-headers": EXPOSE,
        "vary": "Origin",
    }


def test_the_preflight_allows_the_sdk_headers_it_asks_for(cors_server):
    server, _ = cors_server
    asked = (
        "Authorization, Content-Type, X-Stainless-Arch, X-Stainless-Lang, X-Stainless-OS, "
        "X-Stainless-Package-Version, X-Stainless-Retry-Count, X-Stainless-Runtime, X-Stainless-Runtime-Version"
    )
    response = httpx2.request(
        "OPTIONS",
        f"{server.v1}/chat/completions",
        headers={"origin": APP, "access-control-request-method": "POST", "access-control-request-headers": asked},
    )
    assert response.status_code == 204
    assert response.content == b""
    assert cors_headers(response) == {
        "access-control-allow-origin": APP,
        "access-control-allow-methods": "GET, POST",
        "access-control-allow-headers": STAINLESS,
        "access-control-max-age": "600",
        "vary": "Origin, Access-Control-Request-Method, Access-Control-Request-Headers",
    }
    assert response.headers["x-request-id"].startswith("req-")


def test_only_plain_header_names_are_allowed():
    assert allowed_headers("x-a, X-B,bad header, x:c, , content-type") == "authorization, content-type, x-a, x-b"
    assert allowed_headers(None) == "authorization, content-type"


def test_other_origins_get_no_cors_headers(cors_server, fake):
    server, key = cors_server
    fake.clear()
    actual = httpx2.post(
        f"{server.v1}/chat/completions",
        json={"model": "bench/solo", "messages": [{"role": "user", "content": "hi"}]},
        headers={"origin": OTHER, "authorization": f"Bearer {key}"},
    )
    assert actual.status_code == 403
    assert actual.json()["error"]["code"] == "cross_site_request"
    assert cors_headers(actual) == {"vary": "Origin"}
    assert fake.chat_requests == []
    preflight = httpx2.request(
        "OPTIONS",
        f"{server.v1}/chat/completions",
        headers={"origin": OTHER, "access-control-request-method": "POST"},
    )
    assert preflight.status_code == 405
    assert cors_headers(preflight) == {"vary": "Origin"}


def test_no_origin_no_cors(cors_server):
    server, key = cors_server
    response = httpx2.get(f"{server.v1}/models", headers={"authorization": f"Bearer {key}"})
    assert response.status_code == 200
    assert cors_headers(response) == {"vary": "Origin"}


@pytest.mark.parametrize("path", ["/api/keys", "/login", "/healthz", "/"])
def test_the_dashboard_answers_no_preflight(cors_server, path):
    server, _ = cors_server
    response = httpx2.request(
        "OPTIONS",
        f"{server.url}{path}",
        headers={"origin": APP, "access-control-request-method": "POST"},
    )
    assert response.status_code in (404, 405)
    assert cors_headers(response) == {}
    actual = httpx2.get(f"{server.url}{path}", headers={"origin": APP})
    assert cors_headers(actual) == {}


def test_without_allowed_origins_nothing_is_added(bench_with_roster):
    response = httpx2.get(f"{bench_with_roster.v1}/models", headers={"origin": APP})
    assert cors_headers(response) == {}


# -- a real browser -------------------------------------------------------------------------------

PAGE = b"<!doctype html><html><head><title>app</title></head><body>app</body></html>"
# What a browser app does: the OpenAI JS SDK's headers force a preflight, then the call.
CALL = """async ([url, key]) => {
  try {
    const response = await fetch(url, {
      method: "POST",
      headers: {"Authorization": "Bearer " + key, "Content-Type": "application/json",
                "X-Stainless-Retry-Count": "0", "X-Stainless-Lang": "js"},
      body: JSON.stringify({model: "bench/solo", messages: [{role: "user", content: "from a page"}]}),
    });
    const body = await response.json();
    return {status: response.status, seats: body.bench.seats.length, id: response.headers.get("x-request-id")};
  } catch (error) {
    return {blocked: String(error)};
  }
}"""


class _Page(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/html; charset=utf-8")
        self.send_header("content-length", str(len(PAGE)))
        self.end_headers()
        self.wfile.write(PAGE)

    def log_message(self, *_args: object) -> None:
        pass


@pytest.fixture
def page_origins() -> Iterator[tuple[str, str]]:
    servers = [ThreadingHTTPServer(("127.0.0.1", free_port()), _Page) for _ in range(2)]
    threads = [threading.Thread(target=s.serve_forever, daemon=True) for s in servers]
    for thread in threads:
        thread.start()
    try:
        allowed, other = (f"http://127.0.0.1:{s.server_address[1]}" for s in servers)
        yield allowed, other
    finally:
        for s in servers:
            s.shutdown()
            s.server_close()


@pytest.mark.browser
def test_a_page_on_an_allowed_origin_calls_the_gateway_and_another_is_blocked(tmp_path, fake, page_origins):
    require_chromium()
    from playwright.sync_api import sync_playwright  # a test dependency: installed whenever chromium is

    allowed, other = page_origins
    server = BenchServer(tmp_path / "home", require_keys=True, allowed_origins=allowed).start()
    try:
        add_fake_endpoint(server, fake, models=[listed("phi-4")])
        collection(server, "solo", ["phi-4"], max_explorers=0)
        key, _ = server.admin(lambda bench: bench.keys.create("web-app", ["solo"], 30))
        url = f"{server.v1}/chat/completions"
        fake.clear()
        with sync_playwright() as playwright:
            browser = launch(playwright)
            try:
                page = browser.new_page()
                page.goto(f"{allowed}/")
                answered = page.evaluate(CALL, [url, key])
                assert answered["status"] == 200
                assert answered["seats"] == 1
                assert answered["id"].startswith("p")  # exposed: the page can read the panel id
                assert len(fake.chat_requests) == 1

                page.goto(f"{other}/")
                blocked = page.evaluate(CALL, [url, key])
                assert blocked == {"blocked": "TypeError: Failed to fetch"}
                assert len(fake.chat_requests) == 1  # the preflight failed: the call was never made
            finally:
                browser.close()
    finally:
        server.stop()
