"""Upstream 2.1.4's processor surface, flow client specs, AgentService and ToolService on ours
(trustgraph.compat.v214.processor, .client_specs, .services), on the in-memory transport."""

from __future__ import annotations

import argparse
import asyncio
import json
import time

import pytest
from prometheus_client import REGISTRY
from trustgraph.base import (
    AgentClientSpec,
    AgentService,
    AsyncProcessor,
    ConsumerSpec,
    DocumentEmbeddingsClientSpec,
    EmbeddingsClientSpec,
    FlowProcessor,
    GraphEmbeddingsClientSpec,
    GraphRagClientSpec,
    ParameterSpec,
    ProducerSpec,
    PromptClientSpec,
    RequestResponseSpec,
    RowEmbeddingsQueryClientSpec,
    StructuredQueryClientSpec,
    TextCompletionClientSpec,
    ToolClientSpec,
    ToolService,
    ToolServiceClientSpec,
    TriplesClientSpec,
)
from trustgraph.base.messaging import deadlines
from trustgraph.base.processors import flow_processor as ours
from trustgraph.base.request_response_spec import RequestResponse
from trustgraph.base.spec import Spec
from trustgraph.base.testing import worker
from trustgraph.base.tool_service_client import ToolServiceClient
from trustgraph.base.tool_services.dynamic_tool_service import DynamicToolService
from trustgraph.base.tool_services.tool_service_client import ToolServiceError
from trustgraph.exceptions import TooManyRequests
from trustgraph.knowledge import Literal, Uri
from trustgraph.schema import (
    AgentRequest,
    AgentResponse,
    AgentStep,
    ConfigPush,
    DocumentEmbeddingsRequest,
    DocumentEmbeddingsResponse,
    EmbeddingsRequest,
    EmbeddingsResponse,
    Error,
    GraphEmbeddingsRequest,
    GraphEmbeddingsResponse,
    GraphRagQuery,
    GraphRagResponse,
    PromptRequest,
    PromptResponse,
    RowEmbeddingsRequest,
    RowEmbeddingsResponse,
    RowIndexMatch,
    StructuredQueryRequest,
    StructuredQueryResponse,
    Term,
    TextCompletionRequest,
    TextCompletionResponse,
    ToolRequest,
    ToolResponse,
    ToolServiceRequest,
    ToolServiceResponse,
    Triple,
    TriplesQueryRequest,
    TriplesQueryResponse,
)

IRI = Term(type="i", iri="http://x/a")
LIT = Term(type="l", value="b")


class Asker(FlowProcessor):
    """Written as upstream's docs show: a consumer, a producer, a parameter and a client, all by name."""

    def __init__(self, **params):
        super().__init__(**params)
        self.seen = []
        self.register_specification(ConsumerSpec(name="request", schema=TextCompletionRequest,
                                                 handler=self.on_request))
        self.register_specification(ProducerSpec(name="response", schema=TextCompletionResponse))
        self.register_specification(ParameterSpec(name="model"))
        self.register_specification(PromptClientSpec(request_name="prompt-request",
                                                     response_name="prompt-response"))

    async def on_request(self, msg, consumer, flow):
        self.seen.append((consumer.id, consumer.name, consumer.flow is flow, flow.name, flow.id))
        text = await flow("prompt-request").prompt(id="question", variables={"question": msg.value().prompt})
        await flow("response").send(TextCompletionResponse(response=f"{text} ({flow('model')})", end_of_stream=True),
                                    properties={"id": msg.properties()["id"]})


def prompt_stand_in(*responses):
    return lambda req: list(responses)


async def opened(w, name="f", **extra):
    definition = w.flow_definition(name) | extra
    await w.open_flow(name, definition)
    return definition


# -- the processor surface ------------------------------------------------------------------------

async def test_a_processor_written_for_upstream_answers_through_its_client_and_producer():
    async with worker(Asker) as w:
        d = w.flow_definition("f") | {"model": "m1"}
        prompt = await w.respond(d["prompt-request"], d["prompt-response"], PromptRequest,
                                 lambda req: [PromptResponse(text="hi " + json.loads(req.terms["question"]),
                                                             end_of_stream=True)])
        await w.open_flow("f", d)
        out = await w.call(d["request"], d["response"], TextCompletionRequest(system="", prompt="Ada"),
                           TextCompletionResponse)
        assert out[0].response == "hi Ada (m1)"
        assert w.processor.seen == [(w.processor.id, "request", True, "f", w.processor.id)]
        # Terms are JSON-encoded, as upstream's client sends them; our deadline goes along.
        assert prompt.requests[0] == PromptRequest(id="question", terms={"question": '"Ada"'}, streaming=False)
        assert deadlines.DEADLINE in prompt.properties[0]


async def test_flows_start_and_stop_with_active_flow_and_a_bad_one_does_not_stop_the_others():
    async with worker(Asker) as w:
        await opened(w, "a")
        assert set(w.processor.flows) == {"a"}
        a = w.processor.flows["a"]
        assert set(a.consumer) == {"request", "prompt-request"} and set(a.producer) == {"response"}
        assert a("model") is None and a("nothing") is None
        good = w.flow_definition("b")
        bad = {k: v for k, v in w.flow_definition("c").items() if k != "prompt-request"}
        await w.configure({"active-flow": {w.processor.id: json.dumps({"b": good, "c": bad})}})
        assert set(w.processor.flows) == {"b"}          # a stopped, c refused, b runs
        assert "prompt-request" in w.processor.flow_errors["c"]
        await w.processor.on_configure_flows({"active-flow": {}}, w.version + 1)
        assert w.processor.flows == {}
        await w.processor.stop_flow("never-started")     # nothing to stop: no error


async def test_on_configure_flows_is_upstreams_override_point():
    class Counting(Asker):
        calls = 0

        async def on_configure_flows(self, config, version):
            type(self).calls += 1
            await super().on_configure_flows(config, version)

    async with worker(Counting) as w:
        await opened(w)
        assert Counting.calls == 1 and "f" in w.processor.flows


async def test_specifications_and_mixed_specs_of_ours_and_upstreams():
    class Mixed(FlowProcessor):
        def __init__(self, **params):
            super().__init__(**params)
            self.register_specification(ConsumerSpec("request", TextCompletionRequest, self.on_request))
            self.register_specification(ours.ProducerSpec("response", TextCompletionResponse))

        async def on_request(self, msg, consumer, flow):
            await flow("response").send(TextCompletionResponse(response="ours", end_of_stream=True),
                                        {"id": msg.properties()["id"]})

    async with worker(Mixed) as w:
        assert w.processor.specifications is w.processor.specs and len(w.processor.specifications) == 2
        d = await opened(w)
        out = await w.call(d["request"], d["response"], TextCompletionRequest(), TextCompletionResponse)
        assert out[0].response == "ours"


async def test_a_spec_of_the_users_own_is_added_started_and_stopped():
    events = []

    class Part:
        async def start(self):
            events.append("start")

        async def stop(self):
            events.append("stop")

    class Mine(Spec):
        def add(self, flow, processor, definition):
            events.append(("add", flow.name, definition["x"]))
            flow.consumer["mine"] = Part()

    class P(FlowProcessor):
        def __init__(self, **params):
            super().__init__(**params)
            self.register_specification(Mine())

    async with worker(P) as w:
        await w.open_flow("f", {"x": "1"})
        assert w.processor.flows["f"]("mine").__class__ is Part
        await w.processor.stop_flow("f")
    assert events == [("add", "f", "1"), "start", "stop"]


def test_request_response_spec_takes_upstreams_positional_order_in_both():
    up = RequestResponseSpec("a-request", PromptRequest, "a-response", PromptResponse)
    mine = ours.RequestResponseSpec("a-request", PromptRequest, "a-response", PromptResponse)
    for spec in (up, mine):
        assert (spec.request_name, spec.request_schema, spec.response_name, spec.response_schema) == \
               ("a-request", PromptRequest, "a-response", PromptResponse)
    assert up.impl is RequestResponse
    spec = PromptClientSpec(request_name="p-req", response_name="p-resp")
    assert (spec.request_schema, spec.response_schema, spec.impl.__name__) == (PromptRequest, PromptResponse,
                                                                                "PromptClient")
    assert ConsumerSpec("n", PromptRequest, print).concurrency == 1


async def test_config_handlers_run_in_order_on_every_version_and_a_failing_one_stops_none():
    ran = []

    class P(AsyncProcessor):
        def __init__(self, **params):
            super().__init__(**params)
            self.register_config_handler(self.first)
            self.config_handlers.append(self.second)     # upstream's agent appends directly

        async def first(self, config, version):
            ran.append(("first", version))
            raise RuntimeError("bad config")

        async def second(self, config, version):
            ran.append(("second", version, sorted(config)))

    async with worker(P) as w:
        await w.configure({"prompt": {"a": "1"}})
        push = ConfigPush(version=7, config={"prompt": {"a": "2"}, "tool": {}})

        class Msg:
            def value(self):
                return push

        await w.processor.on_config_change(Msg(), None, None)
    assert ran == [("first", 1), ("second", 1, ["prompt"]), ("first", 7), ("second", 7, ["prompt", "tool"])]


async def test_stop_works_awaited_or_called_plainly_and_taskgroup_tasks_end_with_it():
    async with worker(AsyncProcessor) as w:
        p = w.processor
        forever = p.taskgroup.create_task(asyncio.Event().wait())
        closing = p.stop()                 # upstream's synchronous call
        assert p.running is False
        await closing
        assert forever.cancelled()
        assert p.stop() is closing          # once


def test_made_as_upstream_makes_it_and_stopped_outside_an_event_loop():
    group = object()
    p = AsyncProcessor(id="x", taskgroup=group, metrics=False, follow_config=False)
    assert (p.id, p.taskgroup, p.running, p.config_handlers) == ("x", group, True, [])
    assert p.stop() is None      # no loop: nothing is open to close


async def test_launch_async_makes_the_processor_in_the_loop_and_runs_it(monkeypatch):
    made = []

    class P(AsyncProcessor):
        async def run(self):
            made.append(asyncio.get_running_loop())

    await P.launch_async({"id": "p", "metrics": False, "follow_config": False,
                          "pulsar_host": "pulsar://localhost:1"})
    assert made == [asyncio.get_running_loop()]


def test_upstream_style_add_args_and_help():
    class P(ToolService):
        @staticmethod
        def add_args(parser):
            ToolService.add_args(parser)
            parser.add_argument("--config-type", default="mcp")

    parser = argparse.ArgumentParser()
    P.add_args(parser)
    args = parser.parse_args(["-c", "3", "--id", "x"])
    assert (args.concurrency, args.config_type, args.id, args.metrics) == (3, "mcp", "x", True)
    parser = argparse.ArgumentParser()
    AgentService.add_args(parser)
    assert parser.parse_args([]).config_push_queue


def test_a_flag_upstreams_base_lacks_and_ours_has_is_the_upstream_processors_own():
    class ConfigService(AsyncProcessor):   # upstream's config-svc defines the queues it serves
        @staticmethod
        def add_args(parser):
            AsyncProcessor.add_args(parser)
            parser.add_argument("--config-request-queue", default="its-own")

    parser = argparse.ArgumentParser()
    ConfigService.add_args(parser)
    assert parser.parse_args([]).config_request_queue == "its-own"
    assert parser.parse_args(["--config-request-queue", "q"]).config_request_queue == "q"


# -- the consumer: rate limits and deadlines -------------------------------------------------------

class Limited(FlowProcessor):
    def __init__(self, **params):
        super().__init__(**params)
        self.tries = 0
        self.register_specification(ConsumerSpec("request", TextCompletionRequest, self.on_request))
        self.register_specification(ProducerSpec("response", TextCompletionResponse))

    async def on_request(self, msg, consumer, flow):
        self.tries += 1
        if self.tries < 3:
            raise TooManyRequests("slow down")
        await flow("response").send(TextCompletionResponse(response=str(self.tries), end_of_stream=True),
                                    {"id": msg.properties()["id"]})


async def test_a_rate_limited_handler_is_run_again(monkeypatch):
    from trustgraph.base.consumer import Consumer
    from trustgraph.compat.v214.consumer import FlowConsumer

    monkeypatch.setattr(FlowConsumer, "rate_limit_retry_time", 0.01)
    async with worker(Limited) as w:
        d = await opened(w)
        out = await w.call(d["request"], d["response"], TextCompletionRequest(), TextCompletionResponse)
        assert out[0].response == "3"
        # A flow's consumer is upstream's one Consumer, as upstream's ConsumerSpec makes it.
        assert isinstance(w.processor.flows["f"].consumer["request"], Consumer)


async def test_a_request_whose_caller_has_gone_is_skipped_and_a_later_one_answered():
    async with worker(Asker) as w:
        d = w.flow_definition("f")
        await w.respond(d["prompt-request"], d["prompt-response"], PromptRequest,
                        prompt_stand_in(PromptResponse(text="ok", end_of_stream=True)))
        await w.open_flow("f", d)
        inbox = await w.listen(d["response"], TextCompletionResponse)
        late = await w.send(d["request"], TextCompletionRequest(prompt="late"),
                            properties={deadlines.DEADLINE: f"{time.time() - 1:.3f}"})
        await w.call(d["request"], d["response"], TextCompletionRequest(prompt="now"), TextCompletionResponse)
        assert inbox.by_id(late) == [] and len(w.processor.seen) == 1


# -- the clients --------------------------------------------------------------------------------

class Caller(FlowProcessor):
    """Every client spec of upstream, by the names upstream's processors give them."""

    SPECS = {"prompt": PromptClientSpec, "text-completion": TextCompletionClientSpec,
             "embeddings": EmbeddingsClientSpec, "graph-embeddings": GraphEmbeddingsClientSpec,
             "triples": TriplesClientSpec, "document-embeddings": DocumentEmbeddingsClientSpec,
             "graph-rag": GraphRagClientSpec, "agent": AgentClientSpec, "mcp-tool": ToolClientSpec,
             "structured-query": StructuredQueryClientSpec, "row-embeddings": RowEmbeddingsQueryClientSpec,
             "tool-service": ToolServiceClientSpec}

    def __init__(self, **params):
        super().__init__(**params)
        for prefix, spec in self.SPECS.items():
            self.register_specification(spec(request_name=f"{prefix}-request", response_name=f"{prefix}-response"))


async def clients(w, **answers):
    d = w.flow_definition("f")
    for prefix, (schema, answer) in answers.items():
        await w.respond(d[f"{prefix}-request"], d[f"{prefix}-response"], schema, answer)
    await w.open_flow("f", d)
    return w.processor.flows["f"]


async def test_prompt_client_text_object_error_and_shortcuts():
    def answer(req):
        if req.id == "json":
            return [PromptResponse(object=json.dumps({"a": 1}), end_of_stream=True)]
        if req.id == "kg-prompt":
            return [PromptResponse(text=req.terms["knowledge"], end_of_stream=True)]
        if req.id == "bad":
            return [PromptResponse(error=Error(type="llm-error", message="no model"), end_of_stream=True)]
        return [PromptResponse(text=f"{req.id}:{sorted(req.terms)}", end_of_stream=True)]

    async with worker(Caller) as w:
        flow = await clients(w, prompt=(PromptRequest, answer))
        client = flow("prompt-request")
        assert await client.prompt("json", {}) == {"a": 1}
        with pytest.raises(RuntimeError, match="no model"):
            await client.prompt("bad", {})
        assert await client.extract_definitions("t") == "extract-definitions:['text']"
        assert await client.extract_relationships("t") == "extract-relationships:['text']"
        assert await client.extract_objects("t", {"s": 1}) == "extract-rows:['schema', 'text']"
        assert await client.document_prompt("q", ["d"]) == "document-prompt:['documents', 'query']"
        assert await client.agent_react({"question": "q"}) == "agent-react:['question']"
        assert await client.question("q") == "question:['question']"
        # The knowledge as upstream sends it, one {s, p, o} object per triple:
        assert json.loads(await client.kg_prompt("q", [("s", "p", "o")])) == [{"s": "s", "p": "p", "o": "o"}]
        resp = await client.request(PromptRequest(id="x", terms={}))   # upstream's request() itself
        assert resp.text == "x:[]"


async def test_prompt_client_streaming_hands_every_chunk_and_the_end_to_the_callback():
    def stream(req):
        assert req.streaming
        return [PromptResponse(text="a", end_of_stream=False), PromptResponse(text="b", end_of_stream=False),
                PromptResponse(text="", end_of_stream=True)]

    async with worker(Caller) as w:
        flow = await clients(w, prompt=(PromptRequest, stream))
        got, sync_got = [], []

        async def chunk(text, end):
            got.append((text, end))

        # As upstream: the chunks are not joined; the result is the last chunk's text (none here).
        assert await flow("prompt-request").prompt("p", {"a": 1}, streaming=True, chunk_callback=chunk) is None
        assert got == [("a", False), ("b", False), ("", True)]
        await flow("prompt-request").kg_prompt("q", [], streaming=True,
                                               chunk_callback=lambda t, e: sync_got.append((t, e)))
        assert sync_got == got


async def test_prompt_client_streaming_returns_the_last_text_or_the_object():
    def stream(req):
        if req.id == "obj":   # a JSON template: no text chunks, the object at the end
            return [PromptResponse(text=None, object='{"n": 1}', end_of_stream=True)]
        return [PromptResponse(text="first", end_of_stream=False), PromptResponse(text="last", end_of_stream=True)]

    async with worker(Caller) as w:
        flow = await clients(w, prompt=(PromptRequest, stream))
        got = []
        assert await flow("prompt-request").prompt("t", {}, streaming=True,
                                                   chunk_callback=lambda t, e: got.append((t, e))) == "last"
        assert got == [("first", False), ("last", True)]
        got.clear()
        assert await flow("prompt-request").document_prompt("q", [], streaming=True,
                                                            chunk_callback=lambda t, e: got.append(t)) == "last"
        got.clear()
        assert await flow("prompt-request").prompt("obj", {}, streaming=True,
                                                   chunk_callback=lambda t, e: got.append(t)) == {"n": 1}
        assert got == []          # no text, no callback


async def test_text_completion_client_whole_streamed_and_failed():
    def answer(req):
        if req.prompt == "bad":
            return [TextCompletionResponse(error=Error(type="llm-error", message="down"), end_of_stream=True)]
        if req.streaming:
            return [TextCompletionResponse(response="he"), TextCompletionResponse(response="llo", end_of_stream=True)]
        return [TextCompletionResponse(response=f"{req.system}/{req.prompt}", end_of_stream=True)]

    async with worker(Caller) as w:
        client = (await clients(w, **{"text-completion": (TextCompletionRequest, answer)}))("text-completion-request")
        assert await client.text_completion("sys", "hi") == "sys/hi"
        assert await client.text_completion("sys", "hi", streaming=True) == "hello"
        with pytest.raises(RuntimeError, match="down"):
            await client.text_completion("", "bad")


async def test_the_query_clients_send_upstreams_records_and_return_upstreams_results():
    answers = {
        "embeddings": (EmbeddingsRequest, lambda r: [EmbeddingsResponse(vectors=[[float(len(r.text))]])]),
        "graph-embeddings": (GraphEmbeddingsRequest,
                             lambda r: [GraphEmbeddingsResponse(entities=[IRI, LIT][:r.limit])]),
        "triples": (TriplesQueryRequest, lambda r: [TriplesQueryResponse(triples=[Triple(s=r.s, p=IRI, o=LIT)])]),
        "document-embeddings": (DocumentEmbeddingsRequest,
                                lambda r: [DocumentEmbeddingsResponse(chunk_ids=[r.user, r.collection])]),
        "graph-rag": (GraphRagQuery, lambda r: [GraphRagResponse(response=f"rag:{r.query}", end_of_stream=True)]),
        "mcp-tool": (ToolRequest, lambda r: [ToolResponse(text=r.name) if r.name == "t" else
                                             ToolResponse(object=r.parameters)]),
        "structured-query": (StructuredQueryRequest,
                             lambda r: [StructuredQueryResponse(data='{"n": 1}', errors=[])]),
        "row-embeddings": (RowEmbeddingsRequest, lambda r: [RowEmbeddingsResponse(matches=[
            RowIndexMatch(index_name=r.index_name, index_value=["v"], text="row", score=0.5)])]),
    }
    async with worker(Caller) as w:
        flow = await clients(w, **answers)
        assert await flow("embeddings-request").embed("abc") == [[3.0]]
        assert await flow("graph-embeddings-request").query([[0.1]], limit=2) == [Uri("http://x/a"), Literal("b")]
        triples = await flow("triples-request").query(s=Uri("http://x/s"), limit=5)
        assert (triples[0].s, triples[0].p, triples[0].o) == (Uri("http://x/s"), Uri("http://x/a"), Literal("b"))
        assert await flow("document-embeddings-request").query([[0.1]]) == ["trustgraph", "default"]
        assert await flow("document-embeddings-request").query([[0.1]], user="u", collection="c",
                                                               timeout=5) == ["u", "c"]
        assert await flow("graph-rag-request").rag("why") == "rag:why"
        assert await flow("mcp-tool-request").invoke("t") == "t"
        assert await flow("mcp-tool-request").invoke("o", {"k": 1}) == {"k": 1}
        assert await flow("structured-query-request").structured_query("q") == {"data": '{"n": 1}', "errors": [],
                                                                                "error": None}
        rows = await flow("row-embeddings-request").row_embeddings_query([[0.1]], "s", index_name="i")
        assert rows == [{"index_name": "i", "index_value": ["v"], "text": "row", "score": 0.5}]


async def test_agent_client_hands_each_response_to_its_recipient_until_it_says_done():
    def answer(req):
        return [AgentResponse(chunk_type="thought", content="hm"),
                AgentResponse(answer=f"A:{req.question}", end_of_dialog=True)]

    async with worker(Caller) as w:
        flow = await clients(w, agent=(AgentRequest, answer))
        seen = []

        async def recipient(resp):
            seen.append(resp.chunk_type or "answer")
            return resp.end_of_dialog

        assert await flow("agent-request").invoke(recipient, "q?") == "A:q?"
        assert seen == ["thought", "answer"]


async def test_a_client_call_with_no_answer_ends_at_its_timeout_as_a_timeout_error():
    async with worker(Caller) as w:
        flow = await clients(w, prompt=(PromptRequest, lambda req: []))
        with pytest.raises(TimeoutError):
            await flow("prompt-request").prompt("p", {}, timeout=0.2)


async def test_tool_service_client_of_upstreams_shape_calls_our_dynamic_tool_service():
    class Echo(DynamicToolService):
        async def invoke(self, user, config, arguments):
            if arguments.get("fail"):
                raise ValueError("no such thing")
            return {"user": user, "config": config, "arguments": arguments}

    async with worker(Echo, topic="echo") as service:
        client = ToolServiceClient(
            backend=service.pubsub, subscription="s", consumer_name="c",
            request_topic="non-persistent://tg/request/echo", request_schema=ToolServiceRequest,
            request_metrics=None, response_topic="non-persistent://tg/response/echo",
            response_schema=ToolServiceResponse, response_metrics=None)
        await client.start()
        try:
            assert client.timeout == 600
            got = json.loads(await client.call("ada", {"c": 1}, {"a": 2}))
            assert got == {"user": "ada", "config": {"c": 1}, "arguments": {"a": 2}}
            with pytest.raises(RuntimeError, match="no such thing") as e:
                await client.call("ada", {}, {"fail": True})
            assert isinstance(e.value, ToolServiceError)
        finally:
            await client.stop()
    with pytest.raises(TypeError, match="PubSub"):
        ToolServiceClient(backend=object(), request_topic="a", response_topic="b")


# -- AgentService and ToolService -----------------------------------------------------------------

class Agent(AgentService):
    async def agent_request(self, request, respond, next, flow):
        if request.question == "fail":
            raise ValueError("cannot")
        if request.question == "busy":
            raise TooManyRequests("later")
        if not request.history:
            await next(AgentRequest(question=request.question, history=[AgentStep(thought="t")]))
            return
        await respond(AgentResponse(answer=f"done:{request.question}", end_of_message=True, end_of_dialog=True))


async def test_agent_service_answers_continues_and_reports_errors_as_upstream():
    async with worker(Agent) as w:
        d = await opened(w)
        nxt = await w.listen(d["next"], AgentRequest)
        rid = await w.send(d["request"], AgentRequest(question="q"))
        (step,) = await nxt.wait_for(rid)
        assert step.question == "q" and len(step.history) == 1
        out = await w.call(d["request"], d["response"], AgentRequest(question="q", history=step.history),
                           AgentResponse)
        assert out[0].answer == "done:q"
        (err,) = await w.call(d["request"], d["response"], AgentRequest(question="fail"), AgentResponse)
        assert (err.error.type, err.error.message, err.end_of_message, err.end_of_dialog) == \
               ("agent-error", "cannot", True, True)
        assert (err.answer, err.thought, err.observation) == (None, None, None)


class Tools(ToolService):
    async def invoke_tool(self, name, parameters):
        if name == "fail":
            raise RuntimeError("broken tool")
        return parameters["text"] if name == "text" else parameters


def invocations(processor, flow, name):
    return REGISTRY.get_sample_value("tool_invocation_count_total",
                                     {"id": processor, "flow": flow, "name": name}) or 0


async def test_tool_service_answers_text_objects_and_errors_and_counts_invocations():
    async with worker(Tools, concurrency=2) as w:
        d = await opened(w)
        assert next(s for s in w.processor.specs if isinstance(s, ConsumerSpec)).concurrency == 2
        text, = await w.call(d["request"], d["response"], ToolRequest(name="text", parameters='{"text": "hi"}'),
                             ToolResponse)
        obj, = await w.call(d["request"], d["response"], ToolRequest(name="obj", parameters='{"k": [1]}'),
                            ToolResponse)
        err, = await w.call(d["request"], d["response"], ToolRequest(name="fail"), ToolResponse)
        bad, = await w.call(d["request"], d["response"], ToolRequest(name="obj", parameters="{not json"),
                            ToolResponse)
        assert (text.text, text.object, text.error) == ("hi", None, None)
        assert (obj.text, json.loads(obj.object)) == (None, {"k": [1]})
        assert (err.error.type, err.error.message) == ("tool-error", "broken tool")
        assert bad.error.type == "tool-error"
        assert invocations(w.processor.id, "f", "text") == 1 and invocations(w.processor.id, "f", "fail") == 0


async def test_a_request_without_an_id_gets_no_answer_and_stops_nothing():
    async with worker(Tools) as w:
        d = await opened(w)
        inbox = await w.listen(d["response"], ToolResponse)
        await w.send(d["request"], ToolRequest(name="text", parameters='{"text": "x"}'), id=None)
        await w.call(d["request"], d["response"], ToolRequest(name="text", parameters='{"text": "y"}'), ToolResponse)
        assert [m.value.text for m in inbox.messages] == ["y"]
