"""The value of free: `benchwarmers cost` on panels run through the fake provider with known usage,
against prices computed here by hand (the maker's own price, the endpoint's, or unknown)."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

import httpx2
import orjson
import pytest
from openai import OpenAI
from typer.testing import CliRunner

from benchwarmers.catalog.modelsdev import ModelsDev, load_catalog
from benchwarmers.catalog.prices import MAKERS, UNKNOWN, ListPrice, list_price, per_million
from benchwarmers.cli.app import app
from tests.fakes.upstream import FakeUpstream
from tests.support.benchserver import BenchServer, add_fake_endpoint, listed
from tests.support.cost import CATALOG, GPT, LLAMA, MYSTERY, USAGE, WIDGET
from tests.support.panels import ask


def dollars(prompt: int, completion: int, price_in: str, price_out: str) -> Decimal:
    return (prompt * Decimal(price_in) + completion * Decimal(price_out)) / 1_000_000


@pytest.fixture
def priced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[BenchServer, FakeUpstream]]:
    home = tmp_path / "home"
    home.mkdir()
    (home / "models-dev.json").write_bytes(orjson.dumps(CATALOG))
    monkeypatch.setenv("BENCHWARMERS_HOME", str(home))
    monkeypatch.setenv("COLUMNS", "250")
    with FakeUpstream() as fake:
        for model, usage in USAGE.items():
            fake.script(model, usage=usage)
        server = BenchServer(home).start()
        try:
            models = [listed(GPT), listed(LLAMA), listed(WIDGET, free=False), listed(MYSTERY)]
            add_fake_endpoint(server, fake, models=models, free_tier=False)

            async def collections(bench):
                for name, members in (("alpha", [GPT, LLAMA]), ("beta", [WIDGET, MYSTERY])):
                    await bench.collections.add_collection(
                        {"name": name, "members": [f"fake/{m}" for m in members], "max_explorers": 0}
                    )

            server.admin(collections)
            yield server, fake
        finally:
            server.stop()


def cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.output


def report(*args: str) -> dict:
    code, out = cli("cost", "--json", *args)
    assert code == 0, out
    return orjson.loads(out)


def test_cost_on_a_recorded_bench_matches_hand_computed_prices(priced):
    server, _fake = priced
    client = OpenAI(base_url=server.v1, api_key="local", max_retries=0, timeout=30)
    for _ in range(2):
        ask(client, "bench/alpha")
    ask(client, "bench/beta")

    gpt = 2 * dollars(1200, 340, "0.15", "0.6")
    llama = 2 * dollars(1000, 2000, "0.1", "0.32")
    widget = dollars(5000, 700, "1", "2")
    assert (gpt, llama, widget) == (Decimal("0.000768"), Decimal("0.00148"), Decimal("0.0064"))
    total = gpt + llama + widget

    found = report("--days", "1")
    today = time.strftime("%Y-%m-%d")
    assert (found["days"], found["since_day"], found["by"]) == (1, today, "model")
    assert found["total"] == {
        "calls": 6,
        "prompt_tokens": 2 * 1200 + 2 * 1000 + 5000 + 77,
        "completion_tokens": 2 * 340 + 2 * 2000 + 700 + 23,
        "cost_usd": float(total),
        "free_usd": float(gpt + llama),  # the widget is paid; the rest are free
        "unpriced_tokens": 100,
        "unreported_calls": 0,
    }
    assert [(g["name"], g["calls"], g["cost_usd"], g["free"], g["price"]) for g in found["groups"]] == [
        ("fake/acme/widget-7b", 1, float(widget), False,
         {"source": "endpoint", "where": "listing of fake", "model": WIDGET, "prompt": 1.0, "completion": 2.0}),
        ("fake/meta-llama/llama-3.3-70b-instruct:free", 2, float(llama), True,
         {"source": "endpoint", "where": "models.dev openrouter", "model": "meta-llama/llama-3.3-70b-instruct",
          "prompt": 0.1, "completion": 0.32}),
        ("fake/openai/gpt-4o-mini", 2, float(gpt), True,
         {"source": "maker", "where": "models.dev openai", "model": "gpt-4o-mini", "prompt": 0.15,
          "completion": 0.6}),
        ("fake/acme/mystery-1", 1, 0.0, True,
         {"source": "unknown", "where": "", "model": None, "prompt": None, "completion": None}),
    ]  # fmt: skip
    assert found["unpriced_models"] == ["fake/acme/mystery-1"]
    assert found["per_day"] == [{"day": today, **found["total"]}]

    by_collection = report("--by", "collection")
    assert [(g["name"], g["calls"], g["cost_usd"], g["free_usd"], g["unpriced_tokens"])
            for g in by_collection["groups"]] == [
        ("bench/beta", 2, float(widget), 0.0, 100),
        ("bench/alpha", 4, float(gpt + llama), float(gpt + llama), 0),
    ]  # fmt: skip
    assert "price" not in by_collection["groups"][0]
    by_key = report("--by", "key")
    assert [(g["name"], g["calls"], g["cost_usd"]) for g in by_key["groups"]] == [("local", 6, float(total))]

    code, out = cli("cost", "--days", "7")
    assert code == 0, out
    lines = out.splitlines()
    since = time.strftime("%Y-%m-%d", time.localtime(time.time() - 6 * 86400))
    assert lines[:3] == [
        f"since {since} (7 days): 6 calls, 9,477 tokens in, 5,403 out",
        "at list prices: $0.008648, of which on free models: $0.002248",
        "not priced: 100 tokens of models with no known list price (fake/acme/mystery-1)",
    ]
    row = next(line for line in lines if "gpt-4o-mini" in line)
    assert [cell.strip() for cell in row.strip("│ ").split("│")] == [
        "fake/openai/gpt-4o-mini", "2", "2,400", "680", "$0.000768", "$0.15 / $0.60",
        "maker: models.dev openai (gpt-4o-mini)",
    ]  # fmt: skip
    row = next(line for line in lines if line.startswith("│ fake/acme/mystery"))
    assert [cell.strip() for cell in row.strip("│ ").split("│")] == [
        "fake/acme/mystery-1", "1", "77", "23", "?", "?", "unknown",
    ]  # fmt: skip


def test_cost_with_nothing_recorded_and_bad_options(priced):
    since = time.strftime("%Y-%m-%d", time.localtime(time.time() - 2 * 86400))
    assert cli("cost", "--days", "3") == (0, f"since {since} (3 days): 0 calls, 0 tokens in, 0 out\n")
    assert cli("cost", "--by", "colour") == (1, "error: by must be one of model, collection, key (got 'colour')\n")
    code, out = cli("cost", "--days", "0")
    assert code == 2 and "--days" in out


# -- the price rules, on their own ------------------------------------------------------------------


@pytest.fixture(scope="module")
def catalog() -> ModelsDev:
    return ModelsDev(CATALOG)


def test_the_maker_price_wins_over_the_endpoint_price(catalog):
    fact = ({"prompt": 5e-06, "completion": 5e-06}, "listing")
    found = list_price(
        catalog, model_id="openai/gpt-4o-mini", family="gpt", endpoint="gq", endpoint_provider="groq", price_fact=fact
    )
    assert found == ListPrice("maker", "models.dev openai", "gpt-4o-mini", Decimal("0.15"), Decimal("0.6"))


def test_a_zero_price_is_not_a_list_price(catalog):
    # Meta's own API lists it at 0; the groq endpoint's price is the first paid one.
    fact = ({"prompt": 0.0, "completion": 0.0}, "listing")
    found = list_price(
        catalog, model_id="llama-3.3-70b-versatile", family="llama", endpoint="gq", endpoint_provider="groq",
        price_fact=fact,
    )  # fmt: skip
    assert found == ListPrice(
        "endpoint", "models.dev groq", "llama-3.3-70b-versatile", Decimal("0.59"), Decimal("0.79")
    )
    assert found.cost(1000, 1000) == Decimal("0.00138")


def test_the_endpoint_price_fact_names_its_source(catalog):
    fact = ({"prompt": 5.9e-07, "completion": 7.9e-07}, "models.dev")
    found = list_price(catalog, model_id="x-1", family=None, endpoint="gq", endpoint_provider="groq", price_fact=fact)
    assert (found.where, found.prompt, found.completion) == ("models.dev groq", Decimal("0.59"), Decimal("0.79"))


def test_half_a_price_and_no_price_are_unknown(catalog):
    assert list_price(catalog, model_id="half-priced", family=None, endpoint_provider="groq") == UNKNOWN
    half = ({"prompt": 1e-06, "completion": None}, "listing")
    assert list_price(catalog, model_id="x-1", family=None, endpoint="e", price_fact=half) == UNKNOWN
    assert list_price(catalog, model_id="llama-3.3-70b-instruct", family="llama") == UNKNOWN
    assert not UNKNOWN.known


def test_prices_are_kept_to_a_millionth_of_a_dollar():
    assert per_million(0.59 / 1_000_000, 1_000_000) == Decimal("0.59")
    assert per_million(0.0272) == Decimal("0.0272")
    assert (per_million(-1), per_million(True), per_million("1")) == (None, None, None)


def test_every_maker_is_a_provider_of_the_bundled_catalog():
    assert set(MAKERS.values()) <= load_catalog(None).provider_ids()


def cells(html: str, row_attr: str) -> list[str]:
    """The text of each cell of the row carrying `row_attr` (`data-day="..."`), tags stripped."""
    row = re.search(rf"<tr {re.escape(row_attr)}>(.*?)</tr>", html, re.DOTALL)
    assert row, row_attr
    return [" ".join(re.sub(r"<[^>]+>", " ", c).split()) for c in re.findall(r"<td[^>]*>(.*?)</td>", row[1], re.DOTALL)]


def test_the_dashboard_shows_the_value_of_free_and_each_models_price_source(priced):
    server, _fake = priced
    client = OpenAI(base_url=server.v1, api_key="local", max_retries=0, timeout=30)
    ask(client, "bench/alpha")
    board = httpx2.get(f"{server.url}/leaderboard?days=7").text
    since = time.strftime("%Y-%m-%d", time.localtime(time.time() - 6 * 86400))
    headline = re.search(r'<p class="cost-headline">(.*?)</p>', board, re.DOTALL)
    assert headline and " ".join(re.sub(r"<[^>]+>", "", headline[1]).split()) == (
        "$0.001124 at list prices for 2 calls (2,200 tokens in, 2,340 out), of which $0.001124 on free models."
    )
    assert f"since {since}" in board
    today = time.strftime("%Y-%m-%d")
    assert cells(board, f'data-day="{today}"') == [today, "2", "2,200", "2,340", "$0.001124", "$0.001124", "0"]
    assert cells(board, 'data-alias="fake/openai/gpt-4o-mini"') == [
        "fake/openai/gpt-4o-mini", "1", "1,200", "340", "$0.000384",
        "$0.15 / $0.60 · maker: models.dev openai (gpt-4o-mini)",
    ]  # fmt: skip

    models = httpx2.get(f"{server.url}/models").text
    assert cells(models, 'data-alias="fake/acme/widget-7b" data-search="fake/acme/widget-7b  ok"')[5] == (
        "$1.00 / $2.00 endpoint: listing of fake"
    )
    assert 'title="listed there as meta-llama/llama-3.3-70b-instruct">endpoint: models.dev openrouter<' in models
    mystery = cells(models, 'data-alias="fake/acme/mystery-1" data-search="fake/acme/mystery-1  ok"')
    assert mystery[5] == "? unknown"
    every = httpx2.get(f"{server.url}/leaderboard").text  # all time: every call, no "since"
    assert "$0.001124</strong> at list prices" in every and "since" not in every.split('id="cost"')[1]
