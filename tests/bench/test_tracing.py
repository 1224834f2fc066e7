"""OpenTelemetry: a span per panel with a child per seat, GenAI conventions, no prompt or answer."""

from __future__ import annotations

import json

import httpx2
import pytest

from tests.support.panels import collection

otel_trace = pytest.importorskip("opentelemetry.trace", reason="the otel extra is not installed")
from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter  # noqa: E402

PROMPT = "what is the airspeed of an unladen swallow, canary-prompt-7781"
ANSWER = "canary-answer-5512 about forty km/h"


@pytest.fixture(scope="module")
def exporter() -> InMemorySpanExporter:
    """The process's tracer provider (it can be set once), exporting to memory."""
    found = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(found))
    otel_trace.set_tracer_provider(provider)
    return found


def test_a_panel_is_a_span_with_a_child_per_seat_and_no_prompt_or_answer(bench_with_roster, fake, exporter):
    server = bench_with_roster
    fake.script("llama-3.3-70b", reply=ANSWER, latency=0.02)
    fake.script("phi-4", status=500)
    collection(server, "trio", ["llama-3.3-70b", "qwen3-32b", "phi-4"], max_explorers=0)
    exporter.clear()
    body = {"model": "bench/trio", "messages": [{"role": "user", "content": PROMPT}]}
    reply = httpx2.post(f"{server.v1}/chat/completions", json=body, timeout=30).json()
    bench = reply["bench"]

    spans = exporter.get_finished_spans()
    [panel] = [s for s in spans if s.name == "bench.panel trio"]
    assert dict(panel.attributes) == {
        "bench.panel.id": bench["panel"],
        "bench.collection": "trio",
        "bench.shape": bench["shape"],
        "bench.reply": "all",
    }
    seats = sorted(
        (s for s in spans if s.parent is not None and s.parent.span_id == panel.context.span_id),
        key=lambda s: s.attributes["bench.call"],
    )
    assert [s.name for s in seats] == ["chat llama-3.3-70b", "chat qwen3-32b", "chat phi-4"]
    assert all(s.kind is otel_trace.SpanKind.CLIENT for s in seats)
    logged = server.admin(lambda b: b.log.panel(bench["panel"]))
    llama = seats[0]
    usage = {s["call"]: s for s in logged["seats"]}[llama.attributes["bench.call"]]["usage"]
    assert dict(llama.attributes) == {
        "gen_ai.operation.name": "chat",
        "gen_ai.request.model": "llama-3.3-70b",
        "gen_ai.provider.name": "openrouter",
        "gen_ai.usage.input_tokens": usage["prompt_tokens"],
        "gen_ai.usage.output_tokens": usage["completion_tokens"],
        "bench.call": bench["seats"][0]["call"],
        "bench.seat.kind": "member",
        "bench.seat.status": "ok",
        "bench.model.alias": "fake/llama-3.3-70b",
        "bench.endpoint": "fake",
    }
    phi = seats[2]
    assert (phi.attributes["error.type"], phi.status.status_code) == ("upstream_error", otel_trace.StatusCode.ERROR)
    assert all(panel.start_time <= s.start_time <= s.end_time <= panel.end_time for s in seats)
    everything = json.dumps([json.loads(s.to_json()) for s in spans])
    assert "canary-prompt" not in everything and "canary-answer" not in everything
