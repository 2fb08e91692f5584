"""Trace context across the bus (trustgraph.base.messaging.tracing): passed on untouched when this
process records nothing, spans with the right parents when it does (the SDK's in-memory exporter),
and a malformed traceparent starting a new trace rather than failing anything."""

from __future__ import annotations

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode
from trustgraph.base.messaging import tracing

TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT = "00f067aa0ba902b7"
TRACEPARENT = f"00-{TRACE}-{PARENT}-01"


@pytest.fixture
def recorded():
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracing.install(provider)
    yield exporter
    tracing.shutdown()


def test_off_the_callers_context_is_passed_on_as_it_came_and_nothing_is_recorded() -> None:
    assert not tracing.enabled()
    with tracing.served("svc", {"traceparent": TRACEPARENT, "tracestate": "k=v"}) as span:
        assert span is None and tracing.current() is None
        assert tracing.outgoing({"id": "1"}) == {"id": "1", "traceparent": TRACEPARENT, "tracestate": "k=v"}
        with tracing.span("step") as inner:
            assert inner is None
    assert tracing.outgoing({"id": "2"}) == {"id": "2"}   # outside the request: nothing to pass on
    with tracing.served("svc", {}):
        assert tracing.outgoing({}) == {}


@pytest.mark.parametrize("bad", ["garbage", f"00-{'0' * 32}-{PARENT}-01", f"00-{TRACE}-{'0' * 16}-01",
                                 f"00-{TRACE.upper()}-{PARENT}-01", f"00-{TRACE}-{PARENT}", "x" * 300])
def test_a_malformed_traceparent_is_not_passed_on(bad: str) -> None:
    with tracing.served("svc", {"traceparent": bad}):
        assert tracing.outgoing({}) == {}
    assert tracing.context_of({"traceparent": bad}) == ""


def test_the_setup_reads_the_operators_variables_and_refuses_what_it_cannot_do(caplog) -> None:
    assert tracing.setup("p", {}) is None and not tracing.enabled()
    assert tracing.setup("p", {"OTEL_TRACES_EXPORTER": "none"}) is None and not tracing.enabled()
    assert tracing.setup("p", {"OTEL_TRACES_EXPORTER": "zipkin"}) is None and not tracing.enabled()
    assert "unknown exporter zipkin (this build takes otlp, console, or none); not tracing" in caplog.text
    try:
        line = tracing.setup("p", {"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1"},
                             global_provider=False)
        assert line == "tracing: spans exported by otlp to http://127.0.0.1:1" and tracing.enabled()
        assert tracing._state.provider.resource.attributes["service.name"] == "p"
    finally:
        tracing.shutdown()
    assert not tracing.enabled()


def test_a_request_is_a_child_of_its_callers_span_and_passes_its_own_on(recorded) -> None:
    with tracing.served("agent-request", {"traceparent": TRACEPARENT}, trustgraph_request_id="r1") as served:
        sent = tracing.outgoing({"id": "r1"})
        with tracing.span("tool call joke", client=True, trustgraph_tool="joke") as call:
            to_tool = tracing.outgoing({})
            tracing.note(call, trustgraph_outcome="failed")
            tracing.failed(call, "the service said no", "tool-error")
        with tracing.span("model decision", client=True, current=False) as detached:
            assert tracing.current() is served    # not made current
            to_prompt = tracing.outgoing({}, detached)
    spans = {s.name: s for s in recorded.get_finished_spans()}
    server, tool, model = spans["agent-request"], spans["tool call joke"], spans["model decision"]
    assert (f"{server.context.trace_id:032x}", f"{server.parent.span_id:016x}") == (TRACE, PARENT)
    assert server.kind is SpanKind.SERVER and server.attributes["trustgraph.request.id"] == "r1"
    assert tool.parent.span_id == model.parent.span_id == server.context.span_id
    assert {tool.kind, model.kind} == {SpanKind.CLIENT}
    assert tool.status.status_code is StatusCode.ERROR and tool.attributes["trustgraph.error"] == "tool-error"
    assert tool.attributes["trustgraph.outcome"] == "failed" and tool.attributes["trustgraph.tool"] == "joke"
    for props, span in ((sent, server), (to_tool, tool), (to_prompt, model)):
        assert props["traceparent"] == f"00-{TRACE}-{span.context.span_id:016x}-01", span.name


def test_a_malformed_or_absent_traceparent_starts_a_trace_of_its_own(recorded) -> None:
    with tracing.served("outer", {}), tracing.served("svc", {"traceparent": "00-nonsense"}):
        pass
    inner, outer = recorded.get_finished_spans()
    assert inner.parent is None and outer.parent is None      # never a child of what was current
    assert inner.context.trace_id != outer.context.trace_id


def test_a_context_given_explicitly_is_kept(recorded) -> None:
    with tracing.served("svc", {}):
        given = {"traceparent": TRACEPARENT}
        assert tracing.outgoing(given) == {"traceparent": TRACEPARENT}
