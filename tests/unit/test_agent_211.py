"""agent-manager-react under ``--wire 2.11`` on the in-memory transport.

The test stands where upstream 2.11.1's peers stand: it sends AgentRequests as 2.11's gateway
writes them (no ``user``, ``state`` null, ``collection`` and ``session_id``), answers the agent's
PromptRequests as 2.11's prompt-template does (``object`` null, token counts), and reads the
AgentResponses with 2.11's record.  The tool is a tool service written for 2.11
(``invoke(config, arguments)``) on the same transport.  Topics are what 2.11's Pulsar backend
makes of ``request:tg:agent:default:f`` and its like.
"""

from __future__ import annotations

import json

import pytest
from trustgraph.agent.react import Processor as Agent
from trustgraph.base import DynamicToolService
from trustgraph.base.testing import MemoryBroker, ScriptedPrompt, action, final_answer, worker
from trustgraph.compat.v211 import schema as v211
from trustgraph.schema import PromptRequest, to_dict
from trustgraph.topics import tool_service_topics

REQ, RESP = tool_service_topics("unit-joke-211")

# 2.11's queue names, as its Pulsar backend maps them ({persistence}://tg/{class}/{topic}).
AGENT_REQUEST = "non-persistent://tg/request/agent:default:f"
AGENT_RESPONSE = "non-persistent://tg/response/agent:default:f"
PROMPT_REQUEST = "non-persistent://tg/request/prompt:default:f"
PROMPT_RESPONSE = "non-persistent://tg/response/prompt:default:f"

# upstream 2.11.1's AgentRequest fields, in its order (trustgraph-base 2.11.1 schema/agent.py)
FIELDS_211 = ["question", "state", "group", "history", "collection", "streaming", "session_id",
              "conversation_id", "pattern", "task_type", "framing", "correlation_id", "parent_session_id",
              "subagent_goal", "expected_siblings"]


class Joke211(DynamicToolService):
    """A tool service written for 2.11: no user."""

    default_topic = "unit-joke-211"

    async def invoke(self, config, arguments):
        return f"a joke about {arguments['topic']}"


TOOL = {"type": "tool-service", "name": "joke", "description": "Tell a joke", "service": "joke-svc",
        "arguments": [{"name": "topic", "type": "string", "description": "what about"}]}
SERVICE = {"id": "joke-svc", "request-queue": REQ, "response-queue": RESP}


def as_211(reply: object) -> v211.PromptResponse:
    """A scripted reply as 2.11.1's prompt-template writes it: ``object`` null, token counts set."""
    record = reply[0] if isinstance(reply, tuple) else reply
    return v211.PromptResponse(error=None, text=record.text or "", object=None,
                               end_of_stream=record.end_of_stream, in_token=12, out_token=7, model="m")


def request_211(question: str, streaming: bool, **fields: object) -> bytes:
    """An AgentRequest as 2.11.1's gateway puts it on the bus: every field, state null, no user."""
    return json.dumps({**{f: d for f, d in zip(FIELDS_211, [
        question, None, None, [], "default", streaming, "", "", "", "", "", "", "", "", 0], strict=True)},
        **fields}).encode()


def end(r: v211.AgentResponse) -> bool:
    return r.end_of_dialog


@pytest.fixture
async def agent():
    """A started agent under --wire 2.11 with flow ``f``, its prompt scripted, the joke service running."""
    broker = MemoryBroker()
    async with worker(Joke211, broker=broker), worker(Agent, broker=broker, wire="2.11") as w:
        d = w.flow_definition("f")
        d |= {"request": AGENT_REQUEST, "next": AGENT_REQUEST, "response": AGENT_RESPONSE,
              "prompt-request": PROMPT_REQUEST, "prompt-response": PROMPT_RESPONSE}
        await w.open_flow("f", d)
        await w.configure({"tool": {"joke": TOOL}, "tool-service": {"joke-svc": SERVICE}})
        scripted = ScriptedPrompt(replies=[action("joke", topic="cats"),
                                           final_answer(lambda t: t["history"][-1]["observation"])])
        w.prompt = scripted
        w.prompts = await w.respond(PROMPT_REQUEST, PROMPT_RESPONSE, PromptRequest,
                                    lambda req: [as_211(r) for r in scripted(req)])
        w.requests = await w.listen(AGENT_REQUEST, v211.AgentRequest)

        async def ask(payload: bytes) -> tuple[str, list[v211.AgentResponse]]:
            replies = await w.listen(AGENT_RESPONSE, v211.AgentResponse)
            rid = await w.send(AGENT_REQUEST, payload)
            return rid, await replies.wait_for(rid, end)

        w.ask = ask
        yield w


def shape(responses: list[v211.AgentResponse]) -> list[tuple]:
    return [(r.message_type, r.content, r.end_of_message, r.end_of_dialog, r.message_id) for r in responses]


async def test_a_whole_dialog_with_a_tool_call_in_2_11_records(agent):
    rid, got = await agent.ask(request_211("Tell me a joke about cats", False, session_id="s-1",
                                           collection="mine"))
    s = "urn:trustgraph:agent:s-1"
    assert shape(got) == [
        ("thought", "I will use joke", True, False, f"{s}/i1/thought"),
        ("observation", "a joke about cats", True, False, f"{s}/i1/observation"),
        ("thought", "I know now", True, False, f"{s}/i2/thought"),
        ("answer", "a joke about cats", True, True, f"{s}/final"),
    ]
    assert all(r.error is None and r.explain_id is None and r.in_token is None for r in got)
    assert got[-1].outcome == "tool-result"
    # The agent asked 2.11's prompt-template twice, with the records 2.11's agent sends.
    first, second = agent.prompts.requests
    assert (first.id, first.streaming, sorted(first.terms)) == (
        "agent-react", False, ["context", "history", "question", "tool_names", "tools"])
    assert json.loads(second.terms["history"])[0]["observation"] == "a joke about cats"
    # The next iteration went out in 2.11's form, the dialog's own fields carried on.
    _, nxt = agent.requests.by_id(rid)
    assert list(to_dict(nxt)) == FIELDS_211
    assert (nxt.session_id, nxt.collection, nxt.question, nxt.streaming) == (
        "s-1", "mine", "Tell me a joke about cats", False)
    assert [(h.thought, h.action, h.arguments, h.observation) for h in nxt.history] == [
        ("I will use joke", "joke", {"topic": "cats"}, "a joke about cats")]


async def test_a_streamed_dialog_in_2_11_records(agent):
    rid, got = await agent.ask(request_211("Tell me a joke about cats", True))
    _, nxt = agent.requests.by_id(rid)
    s = f"urn:trustgraph:agent:{nxt.session_id}"
    assert nxt.session_id and nxt.streaming is True  # made on the first iteration, carried on
    kinds = [r.message_type for r in got]
    assert set(kinds) == {"thought", "observation", "answer"} and kinds[-1] == "answer"
    thoughts = [r for r in got if r.message_type == "thought"]
    assert {r.message_id for r in thoughts} == {f"{s}/i1/thought", f"{s}/i2/thought"}
    assert "".join(r.content for r in thoughts if r.message_id.endswith("i1/thought")) == "I will use joke"
    (obs,) = [r for r in got if r.message_type == "observation" and r.content]
    assert (obs.content, obs.message_id) == ("a joke about cats", f"{s}/i1/observation")
    answers = [r for r in got if r.message_type == "answer"]
    assert "".join(r.content for r in answers) == "a joke about cats"
    assert {r.message_id for r in answers} == {f"{s}/final"}
    assert [(r.end_of_message, r.end_of_dialog) for r in answers[:-1]] == [(False, False)] * (len(answers) - 1)
    assert shape([answers[-1]]) == [("answer", "", True, True, f"{s}/final")]
    assert not any(r.end_of_dialog for r in got[:-1])
    assert all(p.streaming for p in agent.prompts.requests)


async def test_a_pattern_for_the_orchestrator_is_an_error_reply_not_a_crash(agent):
    _, got = await agent.ask(request_211("Plan it", False, pattern="plan-then-execute"))
    (err,) = got
    assert (err.message_type, err.end_of_message, err.end_of_dialog, err.error.type) == (
        "error", True, True, "agent-error")
    assert err.content == err.error.message and "'plan-then-execute'" in err.content
    assert "agent-orchestrator" in err.content and "\n" not in err.content
    assert agent.prompts.requests == []
    # and the agent goes on serving
    _, ok = await agent.ask(request_211("Tell me a joke about cats", False, pattern="react"))
    assert ok[-1].message_type == "answer" and ok[-1].content == "a joke about cats"


async def test_an_undecodable_2_11_request_is_an_error_in_2_11_shape(agent):
    _, got = await agent.ask(json.dumps({"question": 7}).encode())
    (err,) = got
    assert (err.message_type, err.end_of_dialog, err.error.type) == ("error", True, "agent-error")
    assert err.content == err.error.message and "AgentRequest.question" in err.content


async def test_too_many_iterations_ends_in_an_error_message(agent):
    agent.prompt.replies = [action("joke", topic="cats")]
    agent.processor.manager.max_iterations = 1
    history = [{"thought": "t", "action": "joke", "arguments": {"topic": "dogs"}, "observation": "o",
                "step_type": "react", "plan": [], "subagent_results": {}}]
    _, got = await agent.ask(request_211("Again", False, history=history, session_id="s-2"))
    (err,) = got
    assert (err.message_type, err.end_of_message, err.end_of_dialog, err.message_id) == ("error", True, True, "")
    assert err.content.startswith("Too many agent iterations")


async def test_nulls_where_2_11_allows_defaults_are_read_as_the_defaults(agent):
    _, got = await agent.ask(json.dumps({"question": "Tell me a joke about cats", "state": None, "group": None,
                                         "history": None, "session_id": None, "pattern": None}).encode())
    assert got[-1].message_type == "answer" and got[-1].content == "a joke about cats"
    assert got[-1].message_id.startswith("urn:trustgraph:agent:") and got[-1].message_id.endswith("/final")
