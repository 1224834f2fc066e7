"""deploy/prometheus-alerts.yml: rules Prometheus accepts (`promtool check rules`, where installed)
whose every expression names figures `/metrics` really exports, with the label values it exports;
and those figures (open alerts by kind, notifications by state) read what the database holds."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import httpx2
import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families

from benchwarmers.bench.services import Bench
from benchwarmers.store import alerts as alert_rows
from tests.support.benchserver import BenchServer

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
RULES = DEPLOY / "prometheus-alerts.yml"
SELECTOR = re.compile(r"\b(benchwarmers_[a-z_]+)(\{([^}]*)\})?")
MATCHER = re.compile(r'(\w+)\s*=\s*"([^"]*)"')


def rules() -> list[dict]:
    return [rule for group in yaml.safe_load(RULES.read_text())["groups"] for rule in group["rules"]]


def test_prometheus_loads_the_rules_file() -> None:
    config = yaml.safe_load((DEPLOY / "prometheus.yml").read_text())
    assert config["rule_files"] == ["prometheus-alerts.yml"]
    compose = (DEPLOY / "compose.yaml").read_text()
    assert "./prometheus-alerts.yml:/etc/prometheus/prometheus-alerts.yml:ro" in compose
    assert {r["alert"] for r in rules()} >= {"BenchVerdictsOwed", "BenchModelWentPaid", "BenchModelsFailing"}


@pytest.mark.skipif(shutil.which("promtool") is None, reason="promtool is not installed (Prometheus's tools)")
def test_promtool_accepts_the_rules() -> None:
    checked = subprocess.run(["promtool", "check", "rules", str(RULES)], capture_output=True, text=True, timeout=60)
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_every_rule_names_figures_the_metrics_export(tmp_path: Path) -> None:
    server = BenchServer(tmp_path / "home").start()
    try:

        async def raise_some(bench: Bench) -> None:
            async with bench.state.write() as conn:
                await alert_rows.raise_alert(conn, kind="went_paid", subject="fake/a", message="paid", now=1.0)
                await alert_rows.raise_alert(conn, kind="went_paid", subject="fake/b", message="paid", now=1.0)
                await alert_rows.raise_alert(conn, kind="failing", subject="fake/c", message="failing", now=1.0)

        server.admin(raise_some)
        text = httpx2.get(f"{server.url}/metrics").text
    finally:
        server.stop()
    families = {family.name: family for family in text_string_to_metric_families(text)}
    samples = {sample.name: [] for family in families.values() for sample in family.samples}
    for family in families.values():
        for sample in family.samples:
            samples[sample.name].append(sample.labels)
    # A counter's family is `benchwarmers_seats`, its series `benchwarmers_seats_total`.
    exported = set(families) | set(samples) | {f"{name}_total" for name, f in families.items() if f.type == "counter"}

    opened = {s.labels["kind"]: s.value for s in families["benchwarmers_alerts_open"].samples}
    assert opened == {
        "went_paid": 2,
        "retiring": 0,
        "failing": 1,
        "owed": 0,
        "possibly_changed": 0,
        "low_disk": 0,
    }
    assert {s.labels["state"]: s.value for s in families["benchwarmers_notifications"].samples} == {
        "sent": 0,
        "pending": 0,
        "failed": 0,
    }

    for rule in rules():
        found = SELECTOR.findall(rule["expr"])
        assert found, rule["alert"]
        for name, _, matchers in found:
            assert name in exported, f"{rule['alert']}: {name} is not on /metrics"
            for label, value in MATCHER.findall(matchers):
                values = {labels.get(label) for labels in samples.get(name, [])}
                if values:  # the gauges read at each scrape: every label value is exported
                    assert value in values, f"{rule['alert']}: {name} has no {label}={value!r}"
                else:  # a counter with no series yet (no seat ran): its help names the values it takes
                    family = families[name.removesuffix("_total")]
                    assert value in family.documentation, f"{rule['alert']}: {name} takes no {label}={value!r}"
