"""Requests that used to end in a 500, and what a 500 (if one still happens) says and logs."""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest
from fastapi import FastAPI, Request
from sqlalchemy import text

from benchwarmers.server.app import create_app
from benchwarmers.server.body import MAX_DEPTH
from benchwarmers.settings import Settings
from tests.support import benchserver
from tests.support.benchserver import BenchServer
from tests.support.logrecords import Records, recording
from tests.support.panels import collection

CANARY = "CANARY-prompt-7f3a9e"
JSON = {"content-type": "application/json"}


@pytest.fixture
def records() -> Iterator[Records]:
    with recording() as handler:
        yield handler


def with_failing_routes(settings: Settings) -> FastAPI:
    """The real app plus two routes that fail the way a bug would, with request content in hand."""
    app = create_app(settings)

    @app.post("/_test/value-error")
    async def value_error(request: Request) -> None:
        prompt = (await request.json())["prompt"]
        raise ValueError(f"could not handle {prompt!r}")

    @app.post("/_test/database-error")
    async def database_error(request: Request) -> None:
        row = {"prompt": (await request.json())["prompt"]}
        async with request.app.state.bench.state.write() as conn:
            await conn.execute(text("INSERT INTO no_such_table (prompt) VALUES (:prompt)"), row)

    return app


@pytest.fixture
def failing_server(tmp_path: Path, monkeypatch) -> Iterator[BenchServer]:
    monkeypatch.setattr(benchserver, "create_app", with_failing_routes)
    server = BenchServer(tmp_path / "home").start()
    try:
        yield server
    finally:
        server.stop()


@pytest.mark.parametrize(
    ("route", "kind", "chain"),
    [
        ("value-error", "ValueError", ["builtins.ValueError"]),
        ("database-error", "OperationalError", ["sqlite3.OperationalError", "sqlalchemy.exc.OperationalError"]),
    ],
)
def test_a_500_cites_its_request_id_and_logs_one_traceback_without_the_request(
    failing_server, records, route, kind, chain
):
    response = httpx2.post(f"{failing_server.url}/_test/{route}", json={"prompt": CANARY})
    assert response.status_code == 500
    request_id = response.headers["x-request-id"]
    assert re.fullmatch(r"req-[0-9a-f]{16}", request_id)
    assert response.json() == {
        "error": {
            "message": f"internal error ({kind}) in the bench; the server log has its traceback under request "
            f"{request_id}: please report it",
            "type": "server_error",
            "param": None,
            "code": "internal_error",
        }
    }
    errors = [line for level, line in records.lines if level >= logging.ERROR]
    assert len(errors) == 1, errors  # ours; not uvicorn's "Exception in ASGI application" as well
    logged = errors[0]
    assert logged.startswith(
        f"benchwarmers.server ERROR unhandled {kind} on POST /_test/{route} (request {request_id})\n"
        "Traceback (most recent call last):\n"
    )
    assert f"in {route.replace('-', '_')}\n" in logged  # the frame that raised
    for name in chain:
        assert f"{name} (message withheld: it may quote the request)" in logged
    assert CANARY not in logged
    assert "[parameters:" not in logged


def test_a_retry_count_that_is_not_a_whole_number_counts_as_no_retry(bench_with_roster, fake):
    collection(bench_with_roster, "solo", ["phi-4"], max_explorers=0)
    body = b'{"model": "bench/solo", "messages": [{"role": "user", "content": "Is 7 prime?"}]}'
    url = f"{bench_with_roster.v1}/chat/completions"
    first = httpx2.post(url, content=body, headers=JSON)
    replayed = httpx2.post(url, content=body, headers={**JSON, "x-stainless-retry-count": "1"})
    superscript = httpx2.post(url, content=body, headers={**JSON, "x-stainless-retry-count": "²".encode("latin-1")})
    huge = httpx2.post(url, content=body, headers={**JSON, "x-stainless-retry-count": "9" * 5000})  # int() raises
    assert [first.status_code, replayed.status_code, superscript.status_code, huge.status_code] == [200] * 4
    assert replayed.json()["bench"]["panel"] == first.json()["bench"]["panel"]
    assert superscript.json()["bench"]["panel"] != first.json()["bench"]["panel"]  # a new panel, not a replay
    assert huge.json()["bench"]["panel"] not in {first.json()["bench"]["panel"], superscript.json()["bench"]["panel"]}
    assert len(fake.chat_requests) == 3


def _nested(levels: int) -> bytes:
    """A chat body whose `metadata` field makes it `levels` deep, the body's own object included."""
    inner = levels - 1
    return (
        b'{"model": "bench/solo", "messages": [{"role": "user", "content": "hi"}], "metadata": '
        + b"[" * inner
        + b"]" * inner
        + b"}"
    )


TOO_DEEP = {
    "error": {
        "message": f"the body nests JSON more than {MAX_DEPTH} levels deep (objects and arrays inside each other); "
        f"send at most {MAX_DEPTH} levels",
        "type": "invalid_request_error",
        "param": None,
        "code": "invalid_request",
    }
}


@pytest.mark.parametrize("levels", [MAX_DEPTH + 1, 255, 256, 1025, 5000])
def test_json_nested_too_deep_is_a_400_naming_the_limit(bench_with_roster, fake, levels):
    collection(bench_with_roster, "solo", ["phi-4"], max_explorers=0)
    response = httpx2.post(f"{bench_with_roster.v1}/chat/completions", content=_nested(levels), headers=JSON)
    assert (response.status_code, response.json()) == (400, TOO_DEEP)
    assert fake.chat_requests == []


def test_json_nested_to_the_limit_runs_a_panel(bench_with_roster, fake):
    collection(bench_with_roster, "solo", ["phi-4"], max_explorers=0)
    response = httpx2.post(f"{bench_with_roster.v1}/chat/completions", content=_nested(MAX_DEPTH), headers=JSON)
    assert response.status_code == 200
    assert [seat["status"] for seat in response.json()["bench"]["seats"]] == ["ok"]


def test_the_depth_limit_holds_on_every_json_route(bench_with_roster):
    deep = b'{"call": "p1.member1", "useful": true, "note": ' + b"[" * 70 + b"]" * 70 + b"}"
    response = httpx2.post(f"{bench_with_roster.url}/bench/verdict", content=deep, headers=JSON)
    assert (response.status_code, response.json()) == (400, TOO_DEEP)
