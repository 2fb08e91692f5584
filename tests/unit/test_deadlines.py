"""Deadlines travel with every request, and services do no work for callers that gave up."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time

from trustgraph.agent.react import Processor as Agent
from trustgraph.base import DynamicToolService, RequestResponseClient
from trustgraph.base.messaging.deadlines import DEADLINE, read
from trustgraph.base.testing import MemoryBroker, ScriptedPrompt, action, final_answer, memory_pubsub, worker
from trustgraph.model.text_completion.scripted import Processor as ScriptedLlm
from trustgraph.prompt.template import Processor as PromptService
from trustgraph.schema import (
    AgentRequest,
    AgentResponse,
    PromptRequest,
    PromptResponse,
    TextCompletionRequest,
    TextCompletionResponse,
    ToolServiceRequest,
    ToolServiceResponse,
)
from trustgraph.topics import tool_service_topics

REQ, RESP = tool_service_topics("unit-deadline")


class Counting(DynamicToolService):
    default_topic = "unit-deadline"
    calls = 0

    async def invoke(self, user, config, arguments):
        type(self).calls += 1
        return "done"


def soon(seconds: float) -> dict[str, str]:
    return {DEADLINE: f"{time.time() + seconds:.3f}"}


async def sent_request(broker: MemoryBroker, call) -> dict[str, str]:
    """The properties of the request ``call`` publishes (the call is then abandoned)."""
    n = len(broker.sent.get(REQ, []))
    task = asyncio.ensure_future(call)
    while len(broker.sent.get(REQ, [])) == n:
        await asyncio.sleep(0)
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
    return broker.sent[REQ][n].props


async def test_every_request_carries_the_callers_deadline():
    broker = MemoryBroker()
    ps = memory_pubsub(broker, "caller")
    client = RequestResponseClient(ps, request_topic=REQ, response_topic=RESP, request_schema=ToolServiceRequest,
                                   response_schema=ToolServiceResponse, subscription="s", timeout=30)
    before = time.time()
    props = await sent_request(broker, client.request(ToolServiceRequest(), timeout=5))
    assert before + 4 < read(props) <= time.time() + 5
    # A deadline of the caller's own caller shortens it.
    theirs = time.time() + 0.5
    props = await sent_request(broker, client.request(ToolServiceRequest(), timeout=60, deadline=theirs))
    assert abs(read(props) - theirs) < 0.01
    await client.stop()
    await ps.close()


async def test_a_request_whose_deadline_passed_is_skipped_before_any_work():
    Counting.calls = 0
    async with worker(Counting) as w:
        replies = await w.listen(RESP, ToolServiceResponse)
        late = await w.send(REQ, ToolServiceRequest(), properties=soon(-1))
        (ok,) = await w.call(REQ, RESP, ToolServiceRequest(), ToolServiceResponse, properties=soon(30))
        assert ok.response == "done"
        # Requests are handled in order of arrival: the late one was looked at first.
        assert replies.by_id(late) == [] and Counting.calls == 1


async def test_an_llm_generation_stops_when_its_deadline_passes(tmp_path):
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"rules": [], "default": "slow answer", "delay": 30}))
    async with worker(ScriptedLlm, script=str(script)) as w:
        d = w.flow_definition("f")
        await w.open_flow("f", d)
        t0 = time.monotonic()
        (reply,) = await w.call(d["request"], d["response"], TextCompletionRequest(prompt="hi"),
                                TextCompletionResponse, properties=soon(0.3))
        assert reply.error is not None and reply.error.type == "llm-error"
        assert "no completion within" in reply.error.message
        assert time.monotonic() - t0 < 20  # it did not wait out the 30 s generation


async def test_prompt_template_passes_the_deadline_on_to_the_llm():
    async with worker(PromptService) as w:
        d = w.flow_definition("f")
        await w.configure({"prompt": {"template-index": '["hi"]', "template.hi": '{"prompt": "Say hi"}'}})
        await w.open_flow("f", d)
        llm = await w.respond(d["text-completion-request"], d["text-completion-response"],
                              TextCompletionRequest,
                              lambda r: [TextCompletionResponse(response="hi", end_of_stream=True)])
        deadline = soon(20)
        (reply,) = await w.call(d["request"], d["response"], PromptRequest(id="hi"), PromptResponse,
                                properties=deadline)
        assert reply.text == "hi"
        sent = w.broker.sent[d["text-completion-request"]][0].props
        assert abs(read(sent) - read(deadline)) < 0.01
        assert llm.requests


async def test_the_agent_carries_the_dialogs_deadline_through_every_iteration():
    broker = MemoryBroker()
    async with worker(Counting, broker=broker), worker(Agent, broker=broker) as w:
        d = w.flow_definition("f")
        d["next"] = d["request"]
        await w.open_flow("f", d)
        await w.configure({"tool-service": {"svc": {"id": "svc", "request-queue": REQ, "response-queue": RESP}},
                           "tool": {"t": {"type": "tool-service", "name": "t", "description": "d",
                                          "service": "svc"}}})
        w.prompt = ScriptedPrompt(replies=[action("t"), final_answer("fine")])
        await w.respond(d["prompt-request"], d["prompt-response"], PromptRequest, w.prompt)
        deadline = soon(25)
        got = await w.call(d["request"], d["response"], AgentRequest(question="q"), AgentResponse,
                           until=lambda r: r.answer is not None, properties=deadline)
        assert got[-1].answer == "fine"
        stamped = [read(m.props) for topic in (d["request"], d["prompt-request"], REQ)
                   for m in broker.sent[topic]]
        # The dialog's two iterations, its two prompt calls and its tool call all end by the caller's deadline.
        assert len(stamped) == 5 and all(s <= read(deadline) + 0.001 for s in stamped)


def test_a_stamped_deadline_never_ends_after_its_cap_nor_rounds_up():
    from trustgraph.base.messaging.deadlines import parse, stamp
    cap = time.time() + 5.0004   # a caller's deadline between two milliseconds
    assert parse(stamp(60, cap)) <= cap
    before = time.time()
    assert parse(stamp(0.0004)) <= time.time() + 0.0004 and parse(stamp(0.0004)) >= before - 0.001


def test_work_bounded_by_a_deadline_leaves_its_reply_time_to_arrive():
    from trustgraph.base.messaging.deadlines import REPLY_MARGIN, for_work
    assert for_work(None, 60.0) == 60.0   # no caller's deadline: the service's own limit, whole
    at = time.time() + 30.0
    # A long wait keeps the whole margin back; never more than the service's own limit.
    assert 30.0 - REPLY_MARGIN - 0.5 < for_work(at, 60.0) <= 30.0 - REPLY_MARGIN
    assert for_work(at, 10.0) == 10.0 - REPLY_MARGIN
    # A short wait keeps a fifth back, so the work still gets most of it; a passed one leaves none.
    assert 0.7 < for_work(time.time() + 1.0, 60.0) <= 0.8
    assert for_work(time.time() - 1.0, 60.0) < 0
