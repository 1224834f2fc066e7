"""`GET /metrics`: Prometheus's text format, counts that equal what was sent, guarded like `/api`."""

from __future__ import annotations

import httpx2
from prometheus_client.parser import text_string_to_metric_families

from tests.support.benchserver import BenchServer
from tests.support.panels import collection

ADMIN_TOKEN = "admin-token-for-metrics-0001"


def scrape(server: BenchServer, **headers: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """{(sample name, sorted labels): value} of one scrape."""
    reply = httpx2.get(f"{server.url}/metrics", headers=headers)
    assert reply.status_code == 200, reply.text
    assert reply.headers["content-type"] == "text/plain; version=0.0.4; charset=utf-8"
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(reply.text)
        for sample in family.samples
    }


def test_counts_after_n_panels_equal_n(bench_with_roster, fake):
    server = bench_with_roster
    fake.script("phi-4", status=429, headers={"retry-after": "30"})
    collection(server, "trio", ["llama-3.3-70b", "qwen3-32b", "phi-4"], max_explorers=0)
    panels = 7
    calls = []
    for i in range(panels):
        body = {"model": "bench/trio", "messages": [{"role": "user", "content": f"question {i}"}]}
        reply = httpx2.post(f"{server.v1}/chat/completions", json=body, timeout=30)
        assert reply.status_code == 200
        calls.append(reply.json()["bench"]["seats"][0]["call"])
    for call in calls[:3]:
        assert httpx2.post(f"{server.url}/bench/verdict", json={"call": call, "useful": True}).status_code == 200
    found = scrape(server)

    def seats(model: str, status: str) -> float:
        labels = (("endpoint", "fake"), ("model", f"fake/{model}"), ("seat", "member"), ("status", status))
        return found.get(("benchwarmers_seats_total", labels), 0)

    assert found[("benchwarmers_panels_total", (("collection", "trio"), ("status", "answered")))] == panels
    assert found[("benchwarmers_requests_total", (("route", "/v1/chat/completions"), ("status", "200")))] == panels
    assert found[("benchwarmers_requests_total", (("route", "/bench/verdict"), ("status", "200")))] == 3
    assert (seats("llama-3.3-70b", "ok"), seats("qwen3-32b", "ok")) == (panels, panels)
    # phi-4's first 429 sets it cooling: the other six panels skip it.
    assert (seats("phi-4", "error"), seats("phi-4", "cooling")) == (1, panels - 1)
    assert found[("benchwarmers_upstream_rate_limited_total", (("endpoint", "fake"), ("model", "fake/phi-4")))] == 1
    assert found[("benchwarmers_cooldown_skips_total", (("endpoint", "fake"), ("model", "fake/phi-4")))] == panels - 1
    latency = ("benchwarmers_seat_seconds_count", (("endpoint", "fake"), ("model", "fake/llama-3.3-70b")))
    assert found[latency] == panels
    assert found[("benchwarmers_verdicts_total", (("useful", "true"),))] == 3
    assert found[("benchwarmers_verdicts_owed", ())] == 2 * panels - 3  # llama and qwen answered in each
    assert found[("benchwarmers_recorder_writes_total", ())] == 2 * panels  # each reserved, then recorded
    assert found[("benchwarmers_recorder_commit_seconds_count", ())] >= 1
    assert found[("benchwarmers_recorder_queue", ())] == 0
    assert found[("process_resident_memory_bytes", ())] > 0


def test_metrics_need_the_admin_token_when_one_is_set(tmp_path):
    server = BenchServer(tmp_path / "home", admin_token=ADMIN_TOKEN).start()
    try:
        refused = httpx2.get(f"{server.url}/metrics")
        assert refused.status_code == 401
        assert refused.json()["error"]["code"] == "admin_token_required"
        found = scrape(server, authorization=f"Bearer {ADMIN_TOKEN}")
        assert found[("benchwarmers_verdicts_owed", ())] == 0
    finally:
        server.stop()
