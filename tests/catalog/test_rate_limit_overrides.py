"""Rate limits the user sets: a model's windows (replacing what its provider announced for the
same window) and an endpoint's own, shared by all its models; through the CLI and the API."""

from __future__ import annotations

import httpx2
from typer.testing import CliRunner

from benchwarmers.cli.app import app


def test_the_cli_sets_a_models_and_an_endpoints_limits(bench_with_roster, monkeypatch):
    monkeypatch.setenv("BENCHWARMERS_HOME", str(bench_with_roster.settings.home))
    monkeypatch.setenv("COLUMNS", "200")
    runner = CliRunner()
    done = runner.invoke(app, ["model", "set", "fake/phi-4", "--rpm", "20", "--tpm", "6000", "--rpd", "1000"])
    assert done.exit_code == 0, done.output
    assert done.output.endswith("paced by: requests-minute 20, requests-day 1,000, tokens-minute 6,000\n"), done.output
    runner.invoke(app, ["model", "set", "fake/phi-4", "--tpm", "0", "--limit", "requests-second=2"])
    shown = bench_with_roster.admin(lambda bench: bench.models.model("fake/phi-4"))
    assert shown["limits"] == {"requests-second": 2, "requests-minute": 20, "requests-day": 1000}
    assert shown["facts"]["rate_limits"] == {
        "value": {"requests-day": 1000, "requests-minute": 20, "requests-second": 2},
        "source": "override",
    }
    done = runner.invoke(app, ["endpoint", "limits", "fake", "--rpm", "30", "--limit", "tokens-second=100"])
    assert done.output == "fake: paced by requests-minute 30, tokens-second 100 (all its models together)\n"
    refused = runner.invoke(app, ["endpoint", "limits", "fake", "--limit", "requests-week=3"])
    assert refused.exit_code == 1
    assert "'requests-week' is not a rate-limit window" in refused.output
    assert runner.invoke(app, ["endpoint", "limits", "fake", "--rpm", "0"]).output == (
        "fake: paced by tokens-second 100 (all its models together)\n"
    )


def test_the_api_sets_a_models_limits_and_refuses_an_unknown_window(bench_with_roster):
    url = f"{bench_with_roster.url}/api/models/fake/phi-4"
    patched = httpx2.patch(url, json={"limits": {"requests-minute": 20, "tokens-10s": 5000}})
    assert patched.status_code == 200, patched.text
    assert patched.json()["limits"] == {"requests-minute": 20, "tokens-10s": 5000}
    refused = httpx2.patch(url, json={"limits": {"requests-week": 3}})
    assert refused.status_code == 400
    assert refused.json()["error"]["param"] == "limits"
    assert refused.json()["error"]["message"].startswith("'requests-week' is not a rate-limit window")
