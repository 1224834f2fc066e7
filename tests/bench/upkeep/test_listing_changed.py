"""A listed model whose identity changes (window, price, `created`) is flagged "possibly changed":
a refresh raises the alert, the leaderboard (JSON, API, CLI, page) shows it until it is acknowledged."""

from __future__ import annotations

from typing import Any

import httpx2
import orjson
import pytest

from tests.support.benchserver import add_fake_endpoint, listed
from tests.support.panels import ask, collection

KIMI = "fake/kimi-k2"


@pytest.fixture
def cli_home(server):
    return server.settings.home


def relist(server, fake, *entries: dict[str, Any]) -> dict[str, Any]:
    fake.listing("/v1/models", {"object": "list", "data": list(entries)})
    return server.admin(lambda bench: bench.endpoints.refresh_endpoint("fake"))


def flags(cli) -> dict[str, Any]:
    code, out = cli("leaderboard", "--json")
    assert code == 0
    return {m["alias"]: m["listing_changed"] for board in orjson.loads(out) for m in board["models"]}


def alerts(server) -> list[dict[str, Any]]:
    return [a for a in httpx2.get(f"{server.url}/api/alerts").json()["data"] if a["kind"] == "possibly_changed"]


def test_a_changed_listing_flags_the_model_until_acknowledged(server, fake, client, cli):
    add_fake_endpoint(server, fake, models=[listed("kimi-k2", 8192), listed("phi-4")])
    collection(server, "duo", ["kimi-k2", "phi-4"], max_explorers=0)
    ask(client, "bench/duo")
    # The same listing again, and a first `created` (first seen, not a change), raise nothing.
    assert relist(server, fake, listed("kimi-k2", 8192), listed("phi-4"))["possibly_changed"] == 0
    with_created = {**listed("kimi-k2", 8192), "created": 1_700_000_000}
    assert relist(server, fake, with_created, listed("phi-4"))["possibly_changed"] == 0
    assert flags(cli) == {KIMI: None, "fake/phi-4": None} and alerts(server) == []

    # A new window; a model seen for the first time is no change.
    summary = relist(server, fake, {**with_created, "context_length": 32768}, listed("phi-4"), listed("qwen3-32b"))
    assert (summary["possibly_changed"], summary["added"]) == (1, 1)
    flag = flags(cli)[KIMI]
    assert flag["what"] == "window 8192 → 32768" and flags(cli)["fake/phi-4"] is None
    (alert,) = alerts(server)
    assert alert["subject"] == KIMI and alert["created_at"] == flag["at"]
    assert alert["message"] == (
        "listing changed: window 8192 → 32768; its evidence so far may describe the model it replaced"
    )
    api = httpx2.get(f"{server.url}/api/leaderboard").json()["shapes"]
    assert {m["alias"]: m["listing_changed"] for b in api for m in b["models"]}[KIMI] == flag
    page = httpx2.get(f"{server.url}/leaderboard").text
    assert 'data-listing-changed title="listing changed: window 8192 → 32768">possibly changed' in page
    code, out = cli("leaderboard")
    assert code == 0 and f"{KIMI}: possibly changed " in out and ": window 8192 → 32768 (acknowledge" in out

    # A new `created` (going paid is `went_paid`'s alert, not this one): the newest change replaces the open one.
    paid = {**listed("kimi-k2", 32768, free=False), "created": 1_710_000_000}
    assert relist(server, fake, paid, listed("phi-4"), listed("qwen3-32b"))["possibly_changed"] == 1
    assert flags(cli)[KIMI]["what"] == "created 2023-11-14T22:13:20Z → 2024-03-09T16:00:00Z"
    # A priced model's new price.
    dearer = {**paid, "pricing": {"prompt": "0.000003", "completion": "0.000002"}}
    assert relist(server, fake, dearer, listed("phi-4"), listed("qwen3-32b"))["possibly_changed"] == 1
    assert flags(cli)[KIMI]["what"] == "price 1e-06/2e-06 → 3e-06/2e-06"
    (alert,) = alerts(server)
    assert httpx2.post(f"{server.url}/api/alerts/{alert['id']}/ack").status_code == 200
    assert flags(cli)[KIMI] is None
    assert "data-listing-changed" not in httpx2.get(f"{server.url}/leaderboard").text
