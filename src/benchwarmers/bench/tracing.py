"""Optional OpenTelemetry traces: one span per panel, a child span per seat (and the merger, and the
decision model), named and described by the GenAI semantic conventions for model calls.

Only figures and names go in spans: the collection, the shape, each seat's model, provider, status,
time and token usage. Never a prompt, an answer, an error body or a key (an error's kind only).

`pip install 'benchwarmers[otel]'`. When the process already has a tracer provider (run under
`opentelemetry-instrument`, or set by the embedding program) spans go there; otherwise, when an
OTLP endpoint is configured (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or OTEL_EXPORTER_OTLP_ENDPOINT),
the SDK is set up here, reading the standard OTEL_* variables itself (service name, resource
attributes, sampler, headers). Without the package, or without either, tracing costs nothing.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from benchwarmers import __version__
from benchwarmers.nouns.seats import SeatStatus
from benchwarmers.upstream.kinds import ENDPOINT_KINDS

if TYPE_CHECKING:
    from benchwarmers.bench.core.outcomes import SeatOutcome
    from benchwarmers.bench.snapshot import Snapshot
    from benchwarmers.store.records import Collection

# Endpoint kinds as the conventions name providers (gen_ai.provider.name, upstream/kinds.py); others
# go as they are.
PROVIDERS = {kind.name: kind.otel for kind in ENDPOINT_KINDS.values() if kind.otel}


class TracedPanel(Protocol):
    """What names a panel's span: a PreparedPanel (bench/panels/prepare.py, a layer above this one)."""

    @property
    def panel_id(self) -> str: ...
    @property
    def collection(self) -> Collection: ...
    @property
    def shape(self) -> str: ...
    @property
    def reply(self) -> str: ...


class Tracing:
    def __init__(self, otlp_endpoint: str | None) -> None:
        self._tracer: Any = None
        self._ready = False
        self.otlp_endpoint = otlp_endpoint

    def tracer(self) -> Any:
        """The tracer, or None when OpenTelemetry is not installed or no one set a tracer provider
        (decided at the first panel: a panel then costs nothing for tracing)."""
        if not self._ready:
            self._ready = True
            try:
                from opentelemetry import trace
            except ImportError:
                return None
            if self.otlp_endpoint:
                _configure_sdk(trace)
            if isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider):
                return None
            self._tracer = trace.get_tracer("benchwarmers", __version__)
        return self._tracer

    @contextlib.contextmanager
    def panel(self, panel: TracedPanel) -> Iterator[Any]:
        """The panel's span, current while its seats run (None when not tracing)."""
        tracer = self.tracer()
        if tracer is None:
            yield None
            return
        attributes = {
            "bench.panel.id": panel.panel_id,
            "bench.collection": panel.collection["name"],
            "bench.shape": panel.shape,
            "bench.reply": panel.reply,
        }
        name = f"bench.panel {panel.collection['name']}"
        from opentelemetry.trace import Status, StatusCode

        # An exception is marked on the span by its type only: its message could quote the request.
        with tracer.start_as_current_span(
            name, attributes=attributes, record_exception=False, set_status_on_exception=False
        ) as span:
            try:
                yield span
            except BaseException as exc:
                span.set_attribute("error.type", type(exc).__name__)
                span.set_status(Status(StatusCode.ERROR, type(exc).__name__))
                raise

    def seats(self, snapshot: Snapshot, outcomes: Sequence[SeatOutcome]) -> None:
        """A child span of the current panel span per seat, timed from what each seat measured: the
        seats start with the panel, the merger ends now, the decision model ended as the panel began."""
        tracer = self.tracer()
        if tracer is None:
            return
        from opentelemetry import trace
        from opentelemetry.trace import SpanKind, Status, StatusCode

        span = trace.get_current_span()
        began = getattr(span, "start_time", None)
        if not span.is_recording() or not isinstance(began, int):
            return
        parent, ended = trace.set_span_in_context(span), time.time_ns()
        for outcome in outcomes:
            model = snapshot.models.get(outcome.alias)
            endpoint = snapshot.endpoints.get(outcome.endpoint)
            request_model = model.model_id if model is not None else outcome.alias
            took = int(outcome.seconds * 1e9)
            start = {"merger": ended - took, "decision": began - took}.get(outcome.seat, began)
            child = tracer.start_span(
                f"chat {request_model}",
                context=parent,
                kind=SpanKind.CLIENT,
                start_time=start,
                attributes=seat_attributes(outcome, request_model, endpoint.kind if endpoint else None),
            )
            if outcome.status == SeatStatus.error:
                child.set_status(Status(StatusCode.ERROR))
            child.end(end_time=start + took)


def seat_attributes(outcome: SeatOutcome, request_model: str, endpoint_kind: str | None) -> dict[str, Any]:
    attributes: dict[str, Any] = {
        "gen_ai.operation.name": "chat",
        "gen_ai.request.model": request_model,
        "gen_ai.provider.name": PROVIDERS.get(endpoint_kind or "", endpoint_kind or "unknown"),
        "bench.call": outcome.call,
        "bench.seat.kind": outcome.seat,
        "bench.seat.status": outcome.status,
        "bench.model.alias": outcome.alias,
        "bench.endpoint": outcome.endpoint,
    }
    usage = outcome.usage or {}
    for ours, theirs in (("prompt_tokens", "input_tokens"), ("completion_tokens", "output_tokens")):
        if isinstance(usage.get(ours), int):
            attributes[f"gen_ai.usage.{theirs}"] = usage[ours]
    if outcome.failure is not None:
        attributes["error.type"] = outcome.failure.kind.value
    elif outcome.status not in ("ok", "empty"):
        attributes["error.type"] = outcome.status  # paced, cooling, retired: not called
    return attributes


def _configure_sdk(trace: Any) -> None:
    """Set up the SDK from the OTEL_* variables, unless someone already set a provider."""
    if not isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider):
        return
    try:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
    except ImportError:
        return  # the API alone: spans go nowhere until the program sets a provider
    resource = Resource.create()  # OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES
    if str(resource.attributes.get("service.name", "")).startswith("unknown_service"):
        resource = resource.merge(Resource({"service.name": "benchwarmers"}))
    provider = TracerProvider(resource=resource)
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    trace.set_tracer_provider(provider)
