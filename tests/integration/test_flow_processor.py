"""FlowProcessor opens and closes per-flow parts from active-flow config."""

from __future__ import annotations

import asyncio
import json
import uuid

import pulsar
from trustgraph.base import PubSub, RequestResponseClient
from trustgraph.base.messaging.serving import Replies
from trustgraph.base.processors.flow_processor import ConsumerSpec, FlowProcessor, ParameterSpec, ProducerSpec
from trustgraph.schema import TextCompletionRequest, TextCompletionResponse


class Upper(FlowProcessor):
    """Answers a text-completion request with the prompt upper-cased, plus the flow's model."""

    def __init__(self, **params):
        super().__init__(**params)
        self.handled: list[str] = []
        self.register_specification(ConsumerSpec(
            "request", TextCompletionRequest, self.on_request,
            replies=Replies(error_record=lambda error: TextCompletionResponse(error=error, end_of_stream=True),
                            error_type="llm-error")))
        self.register_specification(ProducerSpec("response", TextCompletionResponse))
        self.register_specification(ParameterSpec("model"))

    async def on_request(self, msg, flow, reply):
        self.handled.append(msg.value.prompt)
        await reply.send(TextCompletionResponse(response=msg.value.prompt.upper(), model=flow("model") or "",
                                                end_of_stream=True))


def flow_def(tag: str) -> dict:
    return {"request": f"non-persistent://tg/request/up-{tag}",
            "response": f"non-persistent://tg/response/up-{tag}", "model": f"m-{tag}"}


async def call(ps: PubSub, d: dict, prompt: str, timeout: float = 5.0) -> TextCompletionResponse:
    c = RequestResponseClient(ps, request_topic=d["request"], response_topic=d["response"],
                              request_schema=TextCompletionRequest, response_schema=TextCompletionResponse,
                              subscription=f"c-{uuid.uuid4()}")
    try:
        return await c.request(TextCompletionRequest(prompt=prompt), timeout=timeout)
    finally:
        await c.stop()


async def test_flows_start_stop_and_bad_flow_is_skipped(broker):
    ident = f"upper-{uuid.uuid4().hex[:6]}"
    proc = Upper(id=ident, pulsar_host=broker.url, metrics=False)
    ps = PubSub(broker.url, processor="t")
    a, b = flow_def(uuid.uuid4().hex[:6]), flow_def(uuid.uuid4().hex[:6])
    broken = {"request": "non-persistent://tg/request/nothing"}  # lacks "response"
    try:
        await proc.start()
        await proc.apply_config({"active-flow": {ident: json.dumps({"a": a, "broken": broken, "b": b})}}, 1)
        assert sorted(proc.flows) == ["a", "b"]
        assert "lacks key 'response'" in proc.flow_errors["broken"]
        r = await call(ps, a, "hello")
        assert (r.response, r.model) == ("HELLO", a["model"])
        assert (await call(ps, b, "x")).model == b["model"]
        # Flow a goes away: its consumer is closed, b keeps serving.
        await proc.apply_config({"active-flow": {ident: json.dumps({"b": b})}}, 2)
        assert sorted(proc.flows) == ["b"]
        # A request to a, then one to b: once b's is answered, an open consumer of a would have
        # had a's (sent first, acknowledged by the broker) to handle; it must not have.
        raw = pulsar.Client(broker.url)
        try:
            raw.create_producer(a["request"]).send(b'{"prompt": "gone"}', properties={"id": "gone-1"})
        finally:
            raw.close()
        assert (await call(ps, b, "still")).response == "STILL"
        assert "gone" not in proc.handled, "flow a still answers after it was removed"
    finally:
        await ps.close()
        await proc.stop()


async def test_undecodable_request_gets_an_error_reply(broker):
    ident = f"upper-{uuid.uuid4().hex[:6]}"
    proc = Upper(id=ident, pulsar_host=broker.url, metrics=False)
    d = flow_def(uuid.uuid4().hex[:6])
    raw = pulsar.Client(broker.url)
    try:
        await proc.start()
        await proc.apply_config({"active-flow": {ident: json.dumps({"f": d})}}, 1)
        watch = raw.subscribe(d["response"], "watch")   # subscribed when it returns
        raw.create_producer(d["request"]).send(b'{"prompt": ["not", "a", "string"]}', properties={"id": "m1"})
        msg = await asyncio.to_thread(watch.receive, 5000)
        body = json.loads(msg.data())
        assert msg.properties()["id"] == "m1"
        assert body["error"]["type"] == "llm-error" and "TextCompletionRequest.prompt" in body["error"]["message"]
        assert body["end_of_stream"] is True
    finally:
        raw.close()
        await proc.stop()


async def test_request_without_id_never_reaches_the_handler(broker):
    ident = f"upper-{uuid.uuid4().hex[:6]}"
    proc = Upper(id=ident, pulsar_host=broker.url, metrics=False)
    d = flow_def(uuid.uuid4().hex[:6])
    raw = pulsar.Client(broker.url)
    ps = PubSub(broker.url, processor="t")
    try:
        await proc.start()
        await proc.apply_config({"active-flow": {ident: json.dumps({"f": d})}}, 1)
        # Sent (and acknowledged) before the request with an id: handled first if at all.
        raw.create_producer(d["request"]).send(b'{"prompt": "no id"}')
        assert (await call(ps, d, "with id")).response == "WITH ID"
        assert proc.handled == ["with id"]
    finally:
        raw.close()
        await ps.close()
        await proc.stop()
