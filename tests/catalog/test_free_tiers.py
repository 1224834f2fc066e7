"""Providers' free tiers (catalog/free_tiers.py): the shipped, dated file and a user's own, read strictly;
their limits known before the first call (the `free_tier` fact source), shown in `model show` and Discover
with source and date; provider traits as tags a collection can exclude, for members and explorers alike."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import orjson
import pytest
from markupsafe import escape
from typer.testing import CliRunner

from benchwarmers.bench.admin.refresh import refresh_all
from benchwarmers.bench.services import Bench
from benchwarmers.catalog import free_tiers
from benchwarmers.cli.app import app
from benchwarmers.settings import Settings
from tests.fakes.upstream import FakeUpstream
from tests.support.benchserver import BenchServer, add_fake_endpoint, listed
from tests.support.free_tiers import OPENROUTER_SUMMARY, OPENROUTER_TIER, host_of, user_file

# -- the file ---------------------------------------------------------------------------------------


def test_the_shipped_file_is_valid_dated_and_sourced() -> None:
    shipped = free_tiers.shipped()
    assert {p.provider for p in shipped.providers} == {
        "openrouter", "groq", "cerebras", "google", "mistral", "github-models",
    }  # fmt: skip
    for tier in shipped.tiers():
        assert tier.source.startswith("https://") and dt.date.fromisoformat(tier.checked) <= dt.date(2026, 12, 2)
    cerebras = shipped.lookup("gpt-oss-120b", "cerebras")
    assert cerebras is not None and cerebras.facts()["rate_limits"] == {
        "requests-minute": 30, "requests-hour": 900, "requests-day": 14400,
        "tokens-minute": 60000, "tokens-hour": 1000000, "tokens-day": 1000000,
    }  # fmt: skip
    # An exact id wins over a pattern; a pattern covers the rest; a host names the provider too.
    assert shipped.lookup("qwen-3-coder-480b", "cerebras").limits["requests-day"] == 100  # type: ignore[union-attr]
    assert shipped.lookup("x/y:free", None, "openrouter.ai").model == "*:free"  # type: ignore[union-attr]
    assert shipped.lookup("x/y", "openrouter") is None  # a priced OpenRouter model has no free tier
    assert shipped.lookup("anything", "nobody") is None


def test_a_local_reset_becomes_utc_on_the_day_it_is_written() -> None:
    gemini = free_tiers.shipped().lookup("gemini-2.5-flash", "google")
    assert gemini is not None
    assert gemini.rate_limits(dt.date(2026, 12, 2)) == {"resets-day": "08:00"}  # Pacific standard time
    assert gemini.rate_limits(dt.date(2026, 7, 1)) == {"resets-day": "07:00"}  # daylight saving
    assert gemini.facts()["tags"] == ["trains-on-prompts"]


def test_headers_win_window_by_window_over_the_free_tier() -> None:
    merged = free_tiers.under_headers(
        {"requests-day": 50, "requests-minute": 20, "resets-day": "00:00"}, {"requests": 30, "req-minute": 10}
    )
    assert merged == {"requests-day": 50, "requests-minute": 10, "resets-day": "00:00"}


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"format": 2}, "free-tier file: the file: `format` must be 1 (got 2)"),
        (
            {"extra": 1},
            "free-tier file: the file: unknown field(s) extra; allowed: checked, format, licence, providers",
        ),
        (
            {"providers": [{"provider": "p", "checked": "2026-12-01", "models": [{"model": "*"}]}]},
            "free-tier file: provider 'p': `source` is required",
        ),
        (
            {"providers": [{"provider": "p", "source": "http://x", "checked": "2026-12-01",
                            "models": [{"model": "*"}]}]},
            "free-tier file: provider 'p': `source` must be an https:// URL (the page the figure was read on)",
        ),
        (
            {"providers": [{"provider": "p", "source": "https://x", "checked": "2026-12-01",
                            "models": [{"model": "*", "limits": {"requests-week": 3}}]}]},
            "free-tier file: provider 'p' models[0]: 'requests-week' is not a window: use requests-<period> or "
            "tokens-<period>, a period of minute, hour, day or month, or resets-day",
        ),
        (
            {"providers": [{"provider": "p", "source": "https://x", "checked": "2026-12-01",
                            "models": [{"model": "*", "limits": {"resets-day": "24:00"}}]}]},
            "free-tier file: provider 'p' models[0]: `resets-day` must be \"HH:MM\" (UTC) or \"HH:MM Area/City\"",
        ),
        (
            {"providers": [{"provider": "p", "source": "https://x", "checked": "yesterday",
                            "models": [{"model": "*"}]}]},
            "free-tier file: provider 'p': `checked` must be the date the source was read, YYYY-MM-DD",
        ),
    ],
)  # fmt: skip
def test_a_wrong_file_is_refused_whole_naming_the_entry(change: dict[str, Any], message: str) -> None:
    data = {"format": 1, "checked": "2026-12-01", "providers": [], **change}
    with pytest.raises(free_tiers.FreeTierError) as refused:
        free_tiers.parse(data)
    assert str(refused.value) == message


async def test_a_fetched_copy_is_validated_and_a_bad_one_keeps_the_old(tmp_path: Path) -> None:
    cache = tmp_path / "free-tiers.json"
    good = orjson.loads((Path(free_tiers.__file__).parent / "free_tiers.json").read_bytes())
    good["checked"] = "2026-12-03"

    async def serve(payload: Any) -> Any:
        async def fetch(method: str, url: str, body: Any) -> Any:
            assert (method, url, body) == ("GET", "https://example.org/tiers.json", None)
            return payload

        return await free_tiers.fetch_live(fetch, "https://example.org/tiers.json", cache)

    assert await serve(good) is True
    assert free_tiers.load(cache).checked == "2026-12-03"
    assert await serve({"format": 1, "providers": "nope"}) is False
    assert orjson.loads(cache.read_bytes())["checked"] == "2026-12-03"
    cache.write_text("{not json")  # a damaged copy on disk: the shipped file is used instead
    assert free_tiers.load(cache) is free_tiers.shipped()


# -- through the bench ----------------------------------------------------------------------------------


@pytest.fixture
def two_fakes() -> Iterator[tuple[FakeUpstream, FakeUpstream]]:
    with FakeUpstream() as first, FakeUpstream() as second:
        yield first, second


def test_a_user_file_gives_a_fake_providers_daily_allowance_before_any_call(tmp_path, two_fakes, monkeypatch):
    fake, other = two_fakes
    tiers = user_file(tmp_path / "tiers.json", host_of(fake))
    server = BenchServer(tmp_path / "home", free_tiers_file=tiers).start()
    try:
        add_fake_endpoint(server, fake, models=[listed("phi-4")])
        # Another endpoint of OpenRouter's kind, elsewhere: the shipped entries still cover it.
        add_fake_endpoint(server, other, "or", models=[listed("vendor/alpha-1:free")])
        monkeypatch.setenv("BENCHWARMERS_HOME", str(server.settings.home))
        monkeypatch.setenv("BENCHWARMERS_FREE_TIERS_FILE", str(tiers))
        monkeypatch.setenv("COLUMNS", "400")
        shown = CliRunner().invoke(app, ["model", "show", "fake/phi-4", "--json"])
        assert shown.exit_code == 0, shown.output
        model = orjson.loads(shown.stdout)
        assert model["facts"]["rate_limits"] == {
            "value": {"requests-day": 50, "resets-day": "00:00"},
            "source": "free_tier",
        }
        assert model["limits"] == {"requests-day": 50, "resets-day": "00:00"}  # what the pacer takes, before any call
        assert model["free_tier"] == {
            "provider": "fake-free",
            "summary": "free: 50 requests a day (the day resets at 00:00 UTC)",
            "source": "https://example.org/fake-free-tier",
            "checked": "2026-12-01",
        }
        assert (model["free"], model["tags"]) == (True, [])
        api = httpx2.get(f"{server.url}/api/models/fake/phi-4").json()
        assert api["facts"]["rate_limits"] == model["facts"]["rate_limits"]
        assert fake.chat_requests == [] and other.chat_requests == []

        # A shipped free tier in `model show`: its limits and data use, with source and date, and its tags.
        text = CliRunner().invoke(app, ["model", "show", "or/vendor/alpha-1:free"])
        assert text.exit_code == 0, text.output
        assert text.stdout.splitlines()[1:6] == [
            OPENROUTER_SUMMARY,
            "  source: https://openrouter.ai/docs/api-reference/limits (checked 2026-12-02)",
            "  data use: https://openrouter.ai/docs/guides/privacy/logging",
            f"  note: {OPENROUTER_TIER['note']}",
            "tags: trains-on-prompts",
        ]

        # Discover (the CLI and the page) shows the same for models.dev's OpenRouter :free models.
        found = CliRunner().invoke(app, ["discover", "--provider", "openrouter", "--free", "--limit", "0", "--json"])
        entries = [f for f in orjson.loads(found.stdout) if f["model"].endswith(":free")]
        assert entries and all(f["free_tier"] == OPENROUTER_TIER for f in entries)
        assert all(f["tags"] == ["trains-on-prompts"] for f in entries)
        monkeypatch.setattr("benchwarmers.cli.common.piped", lambda: True)  # one tab-separated line a model
        listed_text = CliRunner().invoke(app, ["discover", "--provider", "openrouter", "--free", "--limit", "0"])
        line = next(x for x in listed_text.stdout.splitlines() if x.startswith(f"openrouter/{entries[0]['model']}\t"))
        assert line.endswith(
            f"\t{OPENROUTER_SUMMARY} (https://openrouter.ai/docs/api-reference/limits, checked 2026-12-02)"
        )
        page = httpx2.get(f"{server.url}/discover", params={"free": "1", "q": entries[0]["model"]})
        assert page.status_code == 200
        assert str(escape(OPENROUTER_SUMMARY)) in page.text
        assert '<a href="https://openrouter.ai/docs/api-reference/limits" rel="noopener noreferrer">' in page.text
        assert "checked 2026-12-02" in page.text and '<span class="badge">trains-on-prompts</span>' in page.text
    finally:
        server.stop()


def test_a_user_file_that_is_wrong_fails_the_refresh_and_says_how_to_fix_it(tmp_path, fake_upstream):
    tiers = user_file(tmp_path / "tiers.json", host_of(fake_upstream), limits={"requests-week": 3})
    server = BenchServer(tmp_path / "home", free_tiers_file=tiers).start()
    try:
        fake_upstream.listing("/v1/models", {"object": "list", "data": [listed("phi-4")]})
        made = httpx2.post(
            f"{server.url}/api/endpoints",
            json={"name": "fake", "base_url": fake_upstream.base_url, "kind": "openrouter"},
        )
        refreshed = httpx2.post(f"{server.url}/api/endpoints/fake/refresh")
        assert made.status_code == 201, made.text
        assert refreshed.status_code == 400
        assert refreshed.json()["error"]["message"] == (
            "free-tier file: provider 'fake-free' models[0]: 'requests-week' is not a window: use "
            "requests-<period> or tokens-<period>, a period of minute, hour, day or month, or resets-day. "
            "Fix the file or unset BENCHWARMERS_FREE_TIERS_FILE"
        )
    finally:
        server.stop()


def test_a_collection_that_excludes_a_tag_never_seats_such_a_model(tmp_path, two_fakes):
    tagged, plain = two_fakes  # the first speaks for OpenRouter (its :free models may train on prompts)
    for model in ("vendor/alpha-1:free", "vendor/bravo-2:free"):
        tagged.script(model)
    for model in ("charlie-3", "delta-4"):
        plain.script(model)
    server = BenchServer(tmp_path / "home").start()
    try:
        add_fake_endpoint(server, tagged, "or", models=[listed("vendor/alpha-1:free"), listed("vendor/bravo-2:free")])
        plain.listing("/v1/models", {"object": "list", "data": [{"id": "charlie-3"}, {"id": "delta-4"}]})

        async def setup(bench: Any) -> None:
            await bench.endpoints.add_endpoint("plain", plain.base_url, "openai", free_tier=True)
            await bench.endpoints.refresh_endpoint("plain")

        server.admin(setup)
        runner_env = {"BENCHWARMERS_HOME": str(server.settings.home), "BENCHWARMERS_FREE_TIERS_URL": ""}
        made = CliRunner().invoke(
            app,
            ["collection", "add", "private", "--member", "or/vendor/alpha-1:free", "--member", "plain/charlie-3",
             "--exclude-tag", "trains-on-prompts", "--max-explorers", "2", "--description", "no training"],
            env=runner_env,
        )  # fmt: skip
        assert made.exit_code == 0, made.output
        assert made.stderr == (
            "warning: or/vendor/alpha-1:free will not be seated on bench/private: it carries the tag "
            "trains-on-prompts, which this collection excludes\n"
        )
        shown = orjson.loads(CliRunner().invoke(app, ["collection", "show", "private"], env=runner_env).stdout)
        assert (shown["exclude_tags"], shown["require_tags"]) == (["trains-on-prompts"], [])
        for _ in range(4):
            reply = httpx2.post(
                f"{server.v1}/chat/completions",
                json={"model": "bench/private", "messages": [{"role": "user", "content": "Review this."}]},
                timeout=30,
            )
            assert reply.status_code == 200, reply.text
            bench = reply.json()["bench"]
            assert [(s["seat"], s["alias"]) for s in bench["seats"]] == [
                ("member", "plain/charlie-3"),
                ("explorer", "plain/delta-4"),
            ]
            assert bench["skipped"] == [
                {
                    "seat": "member",
                    "alias": "or/vendor/alpha-1:free",
                    "why": "it carries the tag trains-on-prompts, which this collection excludes",
                }
            ]
        assert tagged.chat_requests == []  # neither the member nor the explorer that may train was called
        assert sorted({r.json["model"] for r in plain.chat_requests}) == ["charlie-3", "delta-4"]
        # Without the rule the tagged explorer may sit again (the member too): the rule is what kept them off.
        edited = httpx2.put(
            f"{server.url}/api/collections/private",
            json={"members": ["or/vendor/alpha-1:free", "plain/charlie-3"], "description": "open", "exclude_tags": []},
        )
        assert edited.status_code == 200, edited.text
        again = httpx2.post(
            f"{server.v1}/chat/completions",
            json={"model": "bench/private", "messages": [{"role": "user", "content": "Review this."}]},
            timeout=30,
        ).json()["bench"]
        assert again["skipped"] == []
        assert {s["alias"] for s in again["seats"]} >= {"or/vendor/alpha-1:free", "plain/charlie-3"}
    finally:
        server.stop()


async def test_an_online_refresh_fetches_the_file_and_records_it_before_any_call(tmp_path, fake_upstream):
    newer = orjson.loads((Path(free_tiers.__file__).parent / "free_tiers.json").read_bytes())
    newer["checked"] = "2026-12-03"
    openrouter = next(p for p in newer["providers"] if p["provider"] == "openrouter")
    openrouter["models"][0]["limits"] = {"requests-minute": 20, "requests-day": 1000, "resets-day": "00:00"}
    fake_upstream.listing("/free-tiers.json", newer)
    fake_upstream.listing("/v1/models", {"object": "list", "data": [listed("vendor/alpha-1:free")]})
    settings = Settings(home=tmp_path / "home", free_tiers_url=f"{fake_upstream.root_url}/free-tiers.json")
    async with Bench(settings, actor="test") as bench:
        await bench.endpoints.add_endpoint("or", fake_upstream.base_url, "openrouter", free_tier=False)
        results = await refresh_all(bench.state, models_dev_url=f"{fake_upstream.root_url}/no-such-api.json")
        assert [(r.source, r.ok, r.detail) for r in results][1] == ("free tiers", True, "saved")
        model = await bench.models.model("or/vendor/alpha-1:free")
        assert model["limits"] == {"requests-minute": 20, "requests-day": 1000, "resets-day": "00:00"}
        assert model["free_tier"]["summary"].startswith("free: 1,000 requests a day, 20 requests a minute")
        # The source goes away: the fetched copy stays in use (never a half or a wrong file).
        fake_upstream.listing("/free-tiers.json", {"format": 1, "providers": "broken"})
        results = await refresh_all(bench.state, models_dev_url=f"{fake_upstream.root_url}/no-such-api.json")
        assert [(r.source, r.ok, r.detail) for r in results][1] == (
            "free tiers", False, "could not be fetched; using the fetched copy",
        )  # fmt: skip
        assert (await bench.models.model("or/vendor/alpha-1:free"))["limits"]["requests-day"] == 1000
    assert fake_upstream.chat_requests == []
