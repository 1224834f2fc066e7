"""What the fuzzers found, each pinned by an exact request over real HTTP.

- Digits `str.isdigit` accepts and `int` refuses ('³', '²'): schemathesis found
  `POST /api/alerts/³/ack` answering 500 (ValueError in `int`); every number the server read from a
  path, a query or a header was read the same way. Now a refusal (typed parameters) or a default.
- An image URL with a bracketed host that is no IPv6 address (`https://[`): the request-reader
  properties found `urlsplit` raising ValueError, a 500. Now a 400 naming `messages`.
- Gateway settings that stall the bench, which schemathesis draws as soon as the settings body is
  in the OpenAPI document: `endpoint_concurrency` 0 left every seat waiting for a free connection
  until its timeout, `ping_interval` 0 made a stream send pings without pause. Now refused.
"""

from __future__ import annotations

import httpx2
import pytest

from tests.fakes.upstream import FakeUpstream
from tests.support.benchserver import BenchServer, add_fake_endpoint, listed


def refusal(message: str, param: str) -> dict[str, object]:
    return {"error": {"message": message, "type": "invalid_request_error", "param": param, "code": "invalid_request"}}


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("GET", "/bench/panels?limit=%C2%B3", refusal("limit must be a whole number from 1 to 200", "limit")),
        ("GET", "/api/panels?limit=%C2%B3", refusal("limit must be a whole number from 1 to 100", "limit")),
        ("GET", "/api/changes?limit=%C2%B2", refusal("limit must be a whole number from 1 to 1000", "limit")),
        ("GET", "/api/discover?limit=%C2%B3", refusal("limit must be a whole number from 1 to 10000", "limit")),
        (
            "GET",
            "/api/discover?min_context=%C2%B3",
            refusal("min_context must be a whole number of 0 or more", "min_context"),
        ),
        ("POST", "/api/alerts/%C2%B3/ack", refusal("alert_id must be a whole number", "alert_id")),
    ],
)
def test_superscript_numbers_are_refused_with_400(server: BenchServer, method: str, path: str, body: dict) -> None:
    response = httpx2.request(method, f"{server.url}{path}")
    assert (response.status_code, response.json()) == (400, body)


def test_a_superscript_page_number_is_refused(server: BenchServer) -> None:
    response = httpx2.get(f"{server.url}/discover?page=%C2%B3")
    assert response.status_code == 400
    assert response.json()["error"]["param"] == "page"


def test_a_superscript_retry_count_is_not_a_retry(server: BenchServer) -> None:
    response = httpx2.post(
        f"{server.url}/v1/chat/completions",
        headers={"x-stainless-retry-count": b"\xb3"},  # latin-1 for '³'
        json={"model": "bench/none", "messages": [{"role": "user", "content": "hi"}]},
    )
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "model_not_found"


def test_a_listing_with_a_superscript_window_is_still_read(server: BenchServer, fake_upstream: FakeUpstream) -> None:
    odd = {**listed("odd"), "context_length": "³"}
    fake_upstream.listing("/v1/models", {"object": "list", "data": [odd, listed("plain", 8_000)]})
    added = httpx2.post(
        f"{server.url}/api/endpoints", json={"name": "f", "base_url": fake_upstream.base_url, "kind": "openrouter"}
    )
    assert added.status_code == 201
    refreshed = httpx2.post(f"{server.url}/api/endpoints/f/refresh")
    assert (refreshed.status_code, refreshed.json()) == (
        200,
        {"name": "f", "listed": 2, "added": 2, "gone": 0, "went_paid": 0, "retiring": 0, "possibly_changed": 0},
    )
    windows = {m["alias"]: m["context_window"] for m in httpx2.get(f"{server.url}/api/models").json()["data"]}
    assert windows == {"f/odd": None, "f/plain": 8_000}


@pytest.mark.parametrize("url", ["https://[", "https://[]/cat.png", "https://[::1/cat.png", "https://]"])
def test_an_image_url_with_a_broken_bracketed_host_is_refused(
    server: BenchServer, fake_upstream: FakeUpstream, url: str
) -> None:
    add_fake_endpoint(server, fake_upstream, models=[listed("eye", vision=True)])
    server.admin(lambda bench: bench.collections.add_collection({"name": "look", "members": ["fake/eye"]}))
    image = {"type": "image_url", "image_url": {"url": url}}
    response = httpx2.post(
        f"{server.v1}/chat/completions",
        json={"model": "bench/look", "messages": [{"role": "user", "content": [{"type": "text", "text": "?"}, image]}]},
    )
    assert (response.status_code, response.json()) == (
        400,
        refusal(
            "messages[0]: the image URL is not a valid URL; send an https:// URL or a data:image/...;base64 URL",
            "messages",
        ),
    )
    assert fake_upstream.chat_requests == []


@pytest.mark.parametrize(
    ("settings", "message", "param"),
    [
        (
            {"endpoint_concurrency": 0},
            "endpoint_concurrency must be a whole number from 1 to 1024 (got 0)",
            "endpoint_concurrency",
        ),
        ({"ping_interval": 0}, "ping_interval must be from 1 to 60 seconds (got 0)", "ping_interval"),
        ({"ping_interval": -1.5}, "ping_interval must be from 1 to 60 seconds (got -1.5)", "ping_interval"),
    ],
)
def test_gateway_settings_that_would_stall_every_panel_are_refused(
    server: BenchServer, settings: dict[str, float], message: str, param: str
) -> None:
    response = httpx2.put(f"{server.url}/api/settings", json=settings)
    assert (response.status_code, response.json()) == (400, refusal(message, param))
    shown = httpx2.get(f"{server.url}/api/settings").json()
    assert (shown["endpoint_concurrency"], shown["ping_interval"]) == (64, 5.0)


def test_an_alert_id_beyond_any_row_id_is_not_found(server: BenchServer) -> None:
    # schemathesis: 351457328436637293608960 overflowed SQLite's 64-bit integer (500 OverflowError)
    response = httpx2.post(f"{server.url}/api/alerts/351457328436637293608960/ack")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "alert_not_found"


def test_a_collection_replaced_with_a_null_name_is_not_a_rename(server: BenchServer) -> None:
    # schemathesis: {"name": null} reached collection_name(None) (500 AttributeError); a null name is no
    # name, so the request goes on to the collection itself (here: none by that name)
    response = httpx2.put(f"{server.url}/api/collections/nope", json={"name": None, "members": ["fake/x"]})
    assert response.status_code == 404, response.text
    assert "cannot be renamed" not in response.json()["error"]["message"]
