"""agent-manager-react on the in-memory transport, with a scripted prompt and a real tool service."""

from __future__ import annotations

import json
import time

import pytest
from trustgraph.agent.react import Processor as Agent
from trustgraph.base import DynamicToolService
from trustgraph.base.broker_consumers import topic_key
from trustgraph.base.testing import MemoryBroker, ScriptedPrompt, action, final_answer, worker
from trustgraph.base.topics import tool_service_topics
from trustgraph.base.unserved import GRACE, UnservedTopics
from trustgraph.schema import AgentRequest, AgentResponse, PromptRequest

REQ, RESP = tool_service_topics("unit-joke")


class Joke(DynamicToolService):
    default_topic = "unit-joke"

    async def invoke(self, user, config, arguments):
        return f"a joke about {arguments['topic']} for {user}"


TOOL = {"type": "tool-service", "name": "joke", "description": "Tell a joke", "service": "joke-svc",
        "arguments": [{"name": "topic", "type": "string", "description": "what about"}]}
SERVICE = {"id": "joke-svc", "request-queue": REQ, "response-queue": RESP}


def end_of_dialog(r: AgentResponse) -> bool:
    return r.answer is not None or r.error is not None


@pytest.fixture
async def agent():
    """A started agent with flow ``f`` open, its prompt scripted, and the joke service running."""
    broker = MemoryBroker()
    async with worker(Joke, broker=broker), worker(Agent, broker=broker) as w:
        d = w.flow_definition("f")
        d["next"] = d["request"]  # the dialog goes on through the agent's own request topic
        await w.open_flow("f", d)
        w.prompt = ScriptedPrompt(replies=[action("joke", topic="cats"),
                                           final_answer(lambda t: t["history"][-1]["observation"])])
        await w.respond(d["prompt-request"], d["prompt-response"], PromptRequest, w.prompt)

        async def ask(question: str) -> list[AgentResponse]:
            return await w.call(d["request"], d["response"], AgentRequest(question=question, user="alice"),
                                AgentResponse, until=end_of_dialog)

        w.ask = ask
        yield w


async def test_agent_reloads_when_only_tool_service_config_changes(agent):
    # The tool names a service the config does not have yet: it is left out.
    await agent.configure({"tool": {"joke": TOOL}, "tool-service": {}})
    assert "joke" not in agent.processor.registry.tools
    # Only the tool-service type changes: that alone must rebuild the tools.
    await agent.configure({"tool-service": {"joke-svc": SERVICE}})
    got = await agent.ask("Tell me a joke about cats")
    assert agent.prompt.calls[0]["tool_names"] == "joke"
    assert [r.observation for r in got if r.observation] == ["a joke about cats for alice"]
    assert got[-1].answer == "a joke about cats for alice"


async def test_undecodable_request_with_an_id_ends_the_dialog_with_an_agent_error(agent):
    d = agent.processor.flows["f"].definition
    replies = await agent.listen(d["response"], AgentResponse)
    rid = await agent.send(d["request"], json.dumps({"question": 7}).encode())
    (err,) = await replies.wait_for(rid)
    assert (err.chunk_type, err.end_of_message, err.end_of_dialog, err.error.type) == (
        "error", True, True, "agent-error")
    assert err.content == err.error.message and "AgentRequest.question" in err.content
    assert agent.prompt.calls == []


async def test_a_null_question_is_an_agent_error_saying_so_not_a_traceback(agent, caplog):
    d = agent.processor.flows["f"].definition
    replies = await agent.listen(d["response"], AgentResponse)
    rid = await agent.send(d["request"], json.dumps({"question": None, "user": "alice"}).encode())
    (err,) = await replies.wait_for(rid)
    assert err.error.type == "agent-error" and err.error.message == (
        "the request has no question: 'question' must be a string")
    assert agent.prompt.calls == [] and "Traceback" not in caplog.text
    assert not [r for r in caplog.records if r.levelname == "ERROR"]


async def test_a_tool_on_an_interface_nothing_serves_is_an_error_observation_at_once():
    # With the broker's admin URL (tg-launch passes it), the agent's flow clients know which
    # request topics nothing has consumed for a while: a knowledge-query tool on a flow whose
    # graph-rag nobody serves is an Error: observation at once, not a wait for the tool timeout.
    broker = MemoryBroker()
    async with worker(Agent, broker=broker) as w:
        d = w.flow_definition("f")
        d["next"] = d["request"]
        readings = UnservedTopics(None)  # the broker's consumer counts, as the test gives them:
        served = {topic_key(d["prompt-request"]): 1}  # the prompt service runs, graph-rag nothing
        now = time.monotonic()
        readings.take(served, now - GRACE - 1)
        readings.take(served, now)
        w.processor.unserved_topics = readings
        w.processor.tool_timeout = 3600.0  # a wait for it would outlast the test's own bound
        await w.open_flow("f", d)
        prompt = ScriptedPrompt(replies=[action("graph", question="who?"),
                                         final_answer(lambda t: t["history"][-1]["observation"])])
        await w.respond(d["prompt-request"], d["prompt-response"], PromptRequest, prompt)
        await w.configure({"tool": {"graph": {"type": "knowledge-query", "name": "graph",
                                              "description": "Ask the knowledge graph"}}})
        got = await w.call(d["request"], d["response"], AgentRequest(question="Who?", user="alice"),
                           AgentResponse, until=end_of_dialog)
    answer = got[-1].answer or ""
    assert answer.startswith("Error: tool 'graph' cannot be used now: nothing serves ")
    assert d["graph-rag-request"].split("://")[1] in answer
