"""One dialog is one trace across the processes: tg-launch with the operator's ``OTEL_*`` variables
(OTLP over HTTP to a real receiver on 127.0.0.1, decoding what the SDK's exporter sends), the scripted
model, and an agent question asked through the gateway's REST API with a W3C ``traceparent``; then
one without, and one with a malformed header, each a trace of its own."""

from __future__ import annotations

import json
import threading
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from support import ONLY_JOKE_SERVICE, wait_for

ACTION = json.dumps({"action": "tell-joke", "args": {"topic": "cats"}})
TRACE = "5bf92f3577b34da6a3ce929d0e0e4736"
TRACEPARENT = f"00-{TRACE}-00f067aa0ba902b7-01"


@dataclass(frozen=True)
class Span:
    service: str
    name: str
    trace: str
    span: str
    parent: str
    attributes: dict


class Receiver:
    """An OTLP/HTTP trace receiver: keeps every span it is sent."""

    def __init__(self) -> None:
        self.spans: list[Span] = []
        self.lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:   # noqa: N802 (http.server's name)
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                request = ExportTraceServiceRequest()
                request.ParseFromString(body)
                receiver.add(request)
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def add(self, request: ExportTraceServiceRequest) -> None:
        found = []
        for resource in request.resource_spans:
            attrs = {a.key: a.value.string_value for a in resource.resource.attributes}
            for scope in resource.scope_spans:
                for s in scope.spans:
                    found.append(Span(attrs.get("trustgraph.processor", attrs.get("service.name", "")), s.name,
                                      s.trace_id.hex(), s.span_id.hex(), s.parent_span_id.hex(),
                                      {a.key: _value(a.value) for a in s.attributes}))
        with self.lock:
            self.spans.extend(found)

    def of(self, trace: str) -> list[Span]:
        with self.lock:
            return [s for s in self.spans if s.trace == trace]

    def close(self) -> None:
        self.server.shutdown()


def _value(v: object) -> object:
    kind = v.WhichOneof("value")
    return getattr(v, kind) if kind else None


@pytest.fixture(scope="module")
def traced(stack_factory, tmp_path_factory) -> Iterator[tuple]:
    receiver = Receiver()
    script = tmp_path_factory.mktemp("traced") / "script.json"
    script.write_text(json.dumps({"rules": [{"match": "Question: Tell me a joke about cats", "reply": ACTION}],
                                  "default": "no rule matched"}))
    stack = stack_factory("--llm", "scripted", "--llm-script", str(script), "--no-mcp-tool", "--no-mcp-server",
                          *ONLY_JOKE_SERVICE,
                          env={"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.url,
                               "OTEL_BSP_SCHEDULE_DELAY": "200", "OTEL_SERVICE_NAME": ""})
    yield stack, receiver
    receiver.close()


def ask(stack, headers: dict[str, str]) -> dict:
    request = urllib.request.Request(stack.url + "api/v1/flow/default/service/agent", method="POST",
                                     data=json.dumps({"question": "Tell me a joke about cats"}).encode(),
                                     headers={"Content-Type": "application/json", **headers})
    with urllib.request.urlopen(request, timeout=120) as r:
        return json.loads(r.read())


WHO = {"api-gateway", "agent-manager", "prompt", "text-completion", "joke-service"}


def services(spans: list[Span]) -> set[str]:
    return {s.service for s in spans}


def test_one_dialog_is_one_trace_from_the_gateway_to_the_tool_service(traced) -> None:
    stack, receiver = traced
    answer = ask(stack, {"traceparent": TRACEPARENT})
    assert "error" not in answer or not answer["error"], answer
    # Exported in batches: wait for the whole dialog (its tool service and its last step) to arrive.
    # (Two steps, each a model decision through prompt-template: ten spans at least.)
    spans = wait_for("the dialog's spans from every process", lambda: (
        (found := receiver.of(TRACE)) and WHO <= services(found) and len(found) >= 10
        and any(s.attributes.get("trustgraph.outcome") == "tool-result" for s in found) and found), 60,
        detail=lambda: f"{receiver.of(TRACE)}\n{stack.child_logs()}")
    by_id = {s.span: s for s in spans}
    # Every span hangs from the caller's: the gateway's parent is the traceparent sent; the rest are
    # each the child of a span of this trace (nothing orphaned, nothing from another trace).
    gateway = [s for s in spans if s.service == "api-gateway"]
    assert [s.parent for s in gateway] == ["00f067aa0ba902b7"] and gateway[0].name == "gateway agent"
    assert all(s.parent in by_id for s in spans if s not in gateway), spans
    # The tool call: the agent's client span with its tool and outcome, the service's span its child.
    (call,) = [s for s in spans if s.name == "tool call tell-joke"]
    assert (call.service, call.attributes["trustgraph.tool"], call.attributes["trustgraph.outcome"]) == (
        "agent-manager", "tell-joke", "answered")
    served = [s for s in spans if s.service == "joke-service"]
    assert [(s.name, s.parent) for s in served] == [("serve joke", call.span)]
    # The model decisions: each a child of an agent step, with the prompt service's span beneath.
    decisions = [s for s in spans if s.name == "model decision"]
    assert decisions and all(by_id[d.parent].service == "agent-manager" for d in decisions)
    prompt = [s for s in spans if s.service == "prompt"]
    assert prompt and {by_id[p.parent].name for p in prompt} == {"model decision"}
    assert {s.name for s in prompt} == {"serve prompt:default"}
    model = [s for s in spans if s.service == "text-completion"]
    assert model and {(s.name, by_id[s.parent].service) for s in model} == {("serve text-completion:default", "prompt")}
    steps = sorted(s.attributes["trustgraph.dialog.step"] for s in spans
                   if s.service == "agent-manager" and "trustgraph.dialog.step" in s.attributes)
    assert steps == [1, 2], spans


def test_a_question_without_a_traceparent_or_with_a_malformed_one_is_a_trace_of_its_own(traced) -> None:
    stack, receiver = traced
    for headers in ({}, {"traceparent": "00-not-a-trace-01"}):
        ask(stack, headers)

    def gateway_traces() -> list[str] | None:
        with receiver.lock:
            ids = [s.trace for s in receiver.spans if s.service == "api-gateway" and s.trace != TRACE]
        return ids if len(ids) >= 2 else None

    traces = wait_for("two more dialogs' gateway spans", gateway_traces, 60)
    assert len(set(traces)) == len(traces)   # each dialog its own trace
    for trace in traces:
        spans = wait_for("the dialog's spans from every process",
                         lambda t=trace: (found := receiver.of(t)) and WHO <= services(found) and found, 60)
        (gateway,) = [s for s in spans if s.service == "api-gateway"]
        assert gateway.parent == ""   # a root: the malformed header started a new trace
