"""Typed query parameters and bodies: a wrong value is a 400 in the one error shape, naming the
parameter or field and what it takes; what the dashboard and the docs send keeps working."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest

from tests.support.benchserver import BenchServer


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BenchServer]:
    server = BenchServer(Path(tmp_path_factory.mktemp("typed"))).start()
    try:
        yield server
    finally:
        server.stop()


def refusal(message: str, param: str | None) -> dict[str, dict[str, str | None]]:
    return {"error": {"message": message, "type": "invalid_request_error", "param": param, "code": "invalid_request"}}


LIMIT_200 = "limit must be a whole number from 1 to 200"
NAME_RULE = "lower-case letters, digits and '-', at most 64 characters"


@pytest.mark.parametrize(
    ("method", "path", "param", "message"),
    [
        ("GET", "/bench/panels?limit=²", "limit", LIMIT_200),  # isdigit() says yes, int() says no
        ("GET", "/bench/panels?limit=-1", "limit", LIMIT_200),
        ("GET", "/bench/panels?limit=1e3", "limit", LIMIT_200),
        ("GET", "/bench/panels?limit=201", "limit", LIMIT_200),
        ("GET", "/bench/panels?limit=", "limit", LIMIT_200),
        ("GET", "/bench/panels?before=nan", "before", "before must be a number"),
        ("GET", "/bench/panels?before=inf", "before", "before must be a number"),
        ("GET", "/bench/panels?before=yesterday", "before", "before must be a number"),
        ("GET", "/bench/panels?owed=maybe", "owed", "owed must be true or false"),
        ("GET", "/api/panels?limit=²", "limit", "limit must be a whole number from 1 to 100"),
        ("GET", "/api/changes?limit=0", "limit", "limit must be a whole number from 1 to 1000"),
        ("GET", "/api/discover?limit=10001", "limit", "limit must be a whole number from 1 to 10000"),
        ("GET", "/api/discover?min_context=lots", "min_context", "min_context must be a whole number of 0 or more"),
        ("GET", "/api/discover?free=2", "free", "free must be true or false"),
        ("GET", "/api/keys?revoked=sometimes", "revoked", "revoked must be true or false"),
        ("GET", "/api/alerts?all=everything", "all", "all must be true or false"),
        ("GET", "/api/leaderboard?days=nan", "days", "days must be a positive number"),
        ("GET", "/api/reports?days=-1", "days", "days must be a positive number"),
        ("GET", "/leaderboard?days=0", "days", "days must be a positive number"),
        ("GET", "/discover?page=0", "page", "page must be a whole number of 1 or more"),
        ("POST", "/api/alerts/x/ack", "alert_id", "alert_id must be a whole number"),
    ],
)
def test_a_wrong_parameter_is_a_400_naming_it_and_its_range(bench, method, path, param, message):
    response = httpx2.request(method, f"{bench.url}{path}")
    assert (response.status_code, response.json()) == (400, refusal(message, param))


@pytest.mark.parametrize(
    "path",
    [
        "/bench/panels?owed=1&limit=200",
        "/bench/panels?owed=true&before=1764460000.5",
        "/bench/panels?before=",
        "/api/panels?limit=20&before=1764460000",
        "/api/alerts?all=1",
        "/api/keys?revoked=1",
        "/api/discover?free=1&vision=1&min_context=100000&limit=50",
        "/api/leaderboard?days=",
        "/api/leaderboard?shape=review&days=7",
        "/api/reports?days=30",
        "/leaderboard?days=",
        "/leaderboard?days=30",
        "/discover?free=1&vision=&min_context=&q=&page=2",
    ],
)
def test_what_the_dashboard_and_the_docs_send_is_read(bench, path):
    assert httpx2.get(f"{bench.url}{path}").status_code == 200


@pytest.mark.parametrize(
    ("method", "path", "body", "param", "message"),
    [
        (
            "POST",
            "/api/collections",
            {"name": "ok", "members": ["a/b"], "colour": "red", "size": 3},
            "colour",
            "unknown field(s): colour, size; expected: auto_swap, daily_panels, daily_tokens, description, "
            "exclude_tags, max_calls, max_explorers, members, merger, name, reply, require_tags, shape, stand_ins, "
            "tags",
        ),
        ("POST", "/api/collections", {"name": "ok", "members": "a/b"}, "members", "members must be a list of strings"),
        ("POST", "/api/collections", {"members": ["a/b"]}, "name", f"name is required: {NAME_RULE}"),
        (
            "POST",
            "/api/collections",
            {"name": "ok", "members": ["a/b"], "max_calls": "5"},
            "max_calls",
            "max_calls must be a whole number from 0 to 20",
        ),
        (
            "POST",
            "/api/collections",
            {"name": "ok", "reply": "some"},
            "reply",
            "reply must be one of 'all', 'merged', 'pick'",
        ),
        ("PATCH", "/api/models/a/b", {"context": -5}, "context", "context must be a positive whole number"),
        ("PATCH", "/api/models/a/b", {"family": " "}, "family", "family must be a string of 1 to 64 characters"),
        ("POST", "/api/keys", {"name": "ci", "rpm": True}, "rpm", "rpm must be a whole number from 1 to 100000"),
        (
            "PUT",
            "/api/settings",
            {"seat_timeout": "1m"},
            "seat_timeout",
            'seat_timeout must be from 1 to 600 seconds (got "1m")',
        ),
        (
            "PUT",
            "/api/settings",
            {"max_calls": 2.5},
            "max_calls",
            "max_calls must be a whole number from 0 to 20 (got 2.5)",
        ),
        ("POST", "/api/decision-models", {"alias": ""}, "alias", "alias must be a non-empty string"),
        ("POST", "/api/verdicts", {"call": "x", "useful": 1}, "useful", "useful must be true or false"),
        (
            "POST",
            "/bench/verdict",
            {"call": "x", "useful": True, "false": [1]},
            "false",
            "false must be a list of strings",
        ),
        (
            "POST",
            "/api/verdicts",
            {"useful": True},
            "call",
            "call is required: the call id of the seat judged, from a panel's bench.seats",
        ),
        ("POST", "/api/discover", {}, "model", "model is required: PROVIDER/MODEL as the discover list gives it"),
    ],
)
def test_a_wrong_body_field_is_a_400_naming_it(bench, method, path, body, param, message):
    response = httpx2.request(method, f"{bench.url}{path}", json=body)
    assert (response.status_code, response.json()) == (400, refusal(message, param))


def test_a_body_that_is_not_an_object_or_too_big_is_refused_before_it_is_read_as_a_model(bench):
    not_json = httpx2.put(f"{bench.url}/api/settings", content=b"{", headers={"content-type": "application/json"})
    assert not_json.status_code == 400
    assert not_json.json()["error"]["message"].startswith("the body is not valid JSON")
    listed = httpx2.put(f"{bench.url}/api/settings", json=[1])
    assert listed.json()["error"]["message"] == "the body must be a JSON object"
    huge = httpx2.put(f"{bench.url}/api/settings", json={"epsilon": 0.1, "pad": "x" * 300_000})
    assert (huge.status_code, huge.json()["error"]["code"]) == (413, "request_too_large")
