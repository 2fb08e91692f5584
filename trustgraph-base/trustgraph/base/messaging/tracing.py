"""Traces across the bus: W3C trace context in a message property, spans where the operator asks.

An operator following one dialog through gateway, agent, prompt-template,
the LLM and a tool service needs each hop to say which trace it belongs to.
The W3C trace context (``traceparent``, and ``tracestate`` when there is one)
travels as message properties of that name on every request and response we
send (announcements aside), as the ``deadline`` does: upstream peers ignore
properties they do not know, so the wire records stay upstream's.

Spans are the operator's choice, through OpenTelemetry's own environment
variables (read once, at a processor's start, by :func:`setup`):
``OTEL_TRACES_EXPORTER`` ``otlp`` (``OTEL_EXPORTER_OTLP_ENDPOINT``, ...,
as the OTLP/HTTP exporter reads them) or ``console``; ``OTEL_SERVICE_NAME``
(default: the processor's id), ``OTEL_RESOURCE_ATTRIBUTES``,
``OTEL_BSP_*``.  Unset or ``none``, no span is made and the SDK is not even
imported: what is left is passing the caller's context on (a dictionary
lookup per message), so a trace begun before us, or in a process of ours
that exports, stays one trace through the processes that do not.

The pieces, each a no-op but for that pass-through when tracing is off:

* :func:`served`: the span of one request a service works on, its parent the
  request's ``traceparent`` (a malformed one starts a new trace, logged at
  DEBUG: a bad header changes nothing else);
* :func:`span`: a span of a step inside it (a dialog's step, a model call, a
  tool call), with :func:`note` for what is learnt on the way (an outcome);
* :func:`outgoing`: the properties a request or response carries, with the
  current context.
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
import os
import re
from collections.abc import Iterator, Mapping
from typing import Any

logger = logging.getLogger(__name__)

#: The message properties (and HTTP headers) of the W3C trace context.
TRACEPARENT = "traceparent"
TRACESTATE = "tracestate"
#: OpenTelemetry's variable naming the span exporter; the values this module takes.
EXPORTER_ENV = "OTEL_TRACES_EXPORTER"
EXPORTERS = ("otlp", "console")
#: What the tracing extra installs (a one-line hint when an exporter is asked for without it).
EXTRA = "trustgraph-base[tracing]"

# W3C trace context, version 00 and later versions read as 00 (the spec's forward rule): a valid
# header is passed on as it is; anything else is not passed on at all.
_TRACEPARENT = re.compile(r"[0-9a-f]{2}-(?!0{32})[0-9a-f]{32}-(?!0{16})[0-9a-f]{16}-[0-9a-f]{2}(-.*)?")
_MAX_TRACESTATE = 512

#: The caller's context while tracing is off: the properties to pass on, or None.
_passed: contextvars.ContextVar[dict[str, str] | None] = contextvars.ContextVar("trustgraph_trace", default=None)


class _State:
    """Whether spans are made, and with what (set once by :func:`setup`)."""

    tracer: Any = None          # an SDK tracer: spans are recorded
    propagator: Any = None
    provider: Any = None
    exporter: str = ""


_state = _State()


def enabled() -> bool:
    """Whether this process records spans."""
    return _state.tracer is not None


def setup(processor: str, environ: Mapping[str, str] | None = None, *, global_provider: bool = True) -> str | None:
    """Read ``OTEL_*`` and start recording spans if an exporter is asked for; a line for the start log
    (what is exported where), or None when tracing is off.  Once per process: a second call changes
    nothing.  An exporter this build cannot load is one WARNING line, and the process runs untraced.
    ``global_provider``: also OpenTelemetry's global provider, so the spans libraries make (the MCP
    SDK's) join ours."""
    env = os.environ if environ is None else environ
    names = [n.strip().lower() for n in env.get(EXPORTER_ENV, "").split(",") if n.strip()]
    names = [n for n in names if n != "none"]
    if not names or enabled():
        return None
    unknown = [n for n in names if n not in EXPORTERS]
    if unknown:
        logger.warning("%s=%s: unknown exporter %s (this build takes %s, or none); not tracing",
                       EXPORTER_ENV, env.get(EXPORTER_ENV), ", ".join(unknown), ", ".join(EXPORTERS))
        return None
    try:
        exporters = [_exporter(n) for n in names]
        from opentelemetry import trace
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
        from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator
    except ImportError as e:
        logger.warning("%s=%s needs the OpenTelemetry SDK and exporter (%s): install %s; not tracing",
                       EXPORTER_ENV, env.get(EXPORTER_ENV), e, EXTRA)
        return None
    # OTEL_SERVICE_NAME, when set, names the service; else the processor's id does.
    own = {"trustgraph.processor": processor}
    if not env.get("OTEL_SERVICE_NAME"):
        own["service.name"] = processor
    provider = TracerProvider(resource=Resource.create(own))
    for exporter in exporters:
        provider.add_span_processor(BatchSpanProcessor(exporter))
    install(provider, TraceContextTextMapPropagator())
    if global_provider:
        with contextlib.suppress(Exception):   # a provider set already (a library's) stays
            trace.set_tracer_provider(provider)
    _state.exporter = ",".join(names)
    where = env.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") or env.get("OTEL_EXPORTER_OTLP_ENDPOINT")
    return f"tracing: spans exported by {_state.exporter}" + (f" to {where}" if "otlp" in names and where else "")


def _exporter(name: str) -> Any:
    if name == "console":
        from opentelemetry.sdk.trace.export import ConsoleSpanExporter
        return ConsoleSpanExporter()
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    return OTLPSpanExporter()


def install(provider: Any, propagator: Any = None) -> None:
    """Record spans with ``provider`` (an SDK ``TracerProvider``): :func:`setup`'s last step, and how a
    test records them in memory (``InMemorySpanExporter``)."""
    if propagator is None:
        from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator
        propagator = TraceContextTextMapPropagator()
    _state.provider, _state.propagator = provider, propagator
    _state.tracer = provider.get_tracer("trustgraph")


def shutdown() -> None:
    """Export what is left and stop recording (a processor's end: the batch would be lost otherwise)."""
    provider, _state.tracer, _state.provider = _state.provider, None, None
    if provider is not None:
        with contextlib.suppress(Exception):
            provider.shutdown()


def carried(properties: Mapping[str, str]) -> dict[str, str] | None:
    """The trace context ``properties`` carry, when it is well formed; else None."""
    parent = properties.get(TRACEPARENT)
    if not parent:
        return None
    if not isinstance(parent, str) or len(parent) > 256 or not _TRACEPARENT.fullmatch(parent):
        logger.debug("Malformed %s %r ignored: a new trace starts here", TRACEPARENT, parent)
        return None
    state = properties.get(TRACESTATE)
    if isinstance(state, str) and state and len(state) <= _MAX_TRACESTATE:
        return {TRACEPARENT: parent, TRACESTATE: state}
    return {TRACEPARENT: parent}


@contextlib.contextmanager
def served(name: str, properties: Mapping[str, str], **attributes: Any) -> Iterator[Any]:
    """The span of one request worked on (kind SERVER), current for the work; its parent is the
    request's trace context.  Yields the span, or None when tracing is off."""
    parent = carried(properties)
    tracer = _state.tracer
    if tracer is None:
        token = _passed.set(parent)
        try:
            yield None
        finally:
            _passed.reset(token)
        return
    from opentelemetry.context import Context
    from opentelemetry.trace import SpanKind
    # No context carried: a trace of its own (never a child of whatever is current in this process).
    context = _state.propagator.extract(parent) if parent else Context()
    with tracer.start_as_current_span(name, context=context, kind=SpanKind.SERVER,
                                      attributes=_attributes(attributes)) as current:
        yield current


@contextlib.contextmanager
def span(name: str, *, client: bool = False, current: bool = True, **attributes: Any) -> Iterator[Any]:
    """A span of a step (kind CLIENT when ``client``: a call to another service), ended on leaving.
    Yields the span, or None when tracing is off (then nothing is made).

    ``current`` False: the span is not made current, for an async generator, whose code between
    yields runs in its consumer's context (a context attached there would be the consumer's); the
    requests made for it carry it by :func:`outgoing`'s ``within``."""
    tracer = _state.tracer
    if tracer is None:
        yield None
        return
    from opentelemetry.trace import SpanKind
    kind = SpanKind.CLIENT if client else SpanKind.INTERNAL
    if current:
        with tracer.start_as_current_span(name, kind=kind, attributes=_attributes(attributes)) as made:
            yield made
        return
    made = tracer.start_span(name, kind=kind, attributes=_attributes(attributes))
    try:
        yield made
    except BaseException as e:
        made.record_exception(e)
        raise
    finally:
        made.end()


def note(current: Any, **attributes: Any) -> None:
    """Add ``attributes`` to ``current`` (a span from :func:`span` or :func:`served`, or None)."""
    if current is not None:
        current.set_attributes(_attributes(attributes))


def failed(current: Any, message: str, kind: str | None = None) -> None:
    """Mark ``current`` (a span, or None) as ended in error: its status and ``trustgraph.error``."""
    if current is None:
        return
    from opentelemetry.trace import Status, StatusCode
    current.set_status(Status(StatusCode.ERROR, message[:200]))
    if kind:
        current.set_attribute("trustgraph.error", kind)


def outgoing(properties: dict[str, str], within: Any = None) -> dict[str, str]:
    """``properties`` with the trace context added (the same dict, changed): the current one, or the
    span ``within``'s.  Properties that carry a context already keep it (a caller's explicit one)."""
    if TRACEPARENT in properties:
        return properties
    tracer = _state.tracer
    if tracer is None:
        passed = _passed.get()
        if passed:
            properties.update(passed)
        return properties
    if within is not None:
        from opentelemetry import trace
        _state.propagator.inject(properties, context=trace.set_span_in_context(within))
    else:
        _state.propagator.inject(properties)
    return properties


def current() -> Any:
    """The span current here when this process records spans (a request's, a step's), else None."""
    if _state.tracer is None:
        return None
    from opentelemetry import trace
    found = trace.get_current_span()
    return found if found.is_recording() else None


def context_of(properties: Mapping[str, str]) -> str:
    """The trace id ``properties`` carry (32 hex digits), or "" (for a log line or a test)."""
    found = carried(properties)
    return found[TRACEPARENT].split("-")[1] if found else ""


def _attributes(values: Mapping[str, Any]) -> dict[str, Any]:
    # OpenTelemetry takes str, bool, int, float and their sequences; None is left out, anything
    # else is shown as text.
    return {k.replace("_", "."): v if isinstance(v, (str, bool, int, float)) else str(v)
            for k, v in values.items() if v is not None}
