"""agent-manager-react on the in-memory transport, with a scripted prompt and a real tool service."""

from __future__ import annotations

import asyncio
import json
import time

import pytest
from trustgraph.agent.react import Processor as Agent
from trustgraph.base import DynamicToolService
from trustgraph.base.messaging.broker_consumers import topic_key
from trustgraph.base.messaging.unserved import GRACE, UnservedTopics
from trustgraph.base.testing import MemoryBroker, ScriptedPrompt, action, final_answer, worker
from trustgraph.schema import AgentRequest, AgentResponse, PromptRequest
from trustgraph.topics import tool_service_topics

REQ, RESP = tool_service_topics("unit-joke")


class Joke(DynamicToolService):
    default_topic = "unit-joke"

    async def invoke(self, user, config, arguments):
        return f"a joke about {arguments['topic']} for {user}" if "topic" in arguments else f"a song for {user}"


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


@pytest.mark.parametrize("question", ["", "   ", "\n", " \t\r\n "])
@pytest.mark.parametrize("streaming", [False, True])
async def test_a_blank_question_is_an_agent_error_not_an_answer(agent, question, streaming):
    # A caller on the broker (the gateway refuses it before sending): refused before any model step.
    await agent.configure({"tool": {"joke": TOOL}, "tool-service": {"joke-svc": SERVICE}})
    d = agent.processor.flows["f"].definition
    got = await agent.call(d["request"], d["response"],
                           AgentRequest(question=question, user="alice", streaming=streaming),
                           AgentResponse, until=end_of_dialog)
    (err,) = got
    assert (err.error.type, err.error.message) == (
        "agent-error", "the agent request's question is empty: ask a question")
    assert agent.prompt.calls == []


async def test_a_tool_on_an_interface_nothing_serves_ends_the_dialog_at_once_naming_it():
    # With the broker's admin URL (tg-launch passes it), the agent's flow clients know which
    # request topics nothing has consumed for a while: a knowledge-query tool on a flow whose
    # graph-rag nobody serves ends the dialog at once as tool-unavailable, naming the tool and
    # the topic, not a wait for the tool timeout nor the model's guess instead.
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
    last = got[-1]
    assert last.outcome == "tool-unavailable" and last.error is not None
    assert last.error.message.startswith("Tool 'graph' cannot be used now: nothing serves ")
    assert d["graph-rag-request"].split("://")[1] in last.error.message
    assert "Final Answer" not in last.error.message   # the advice to the model is not the user's
    assert len(prompt.calls) == 1                      # no second model step


async def test_a_tool_call_made_in_its_queue_s_grace_ends_when_the_grace_does_not_at_the_tool_timeout():
    # A tool put a moment ago whose service nothing runs: the broker has not counted its queue for
    # the 12 s grace yet. Before, the call went to a topic nobody consumes and the dialog waited the
    # tool timeout (61 s, then exit 1); now it is held, and ends as tool-unavailable at the grace's end.
    broker = MemoryBroker()
    gone_req, gone_resp = tool_service_topics("unit-gone")
    async with worker(Agent, broker=broker) as w:
        d = w.flow_definition("f")
        d["next"] = d["request"]
        readings = UnservedTopics(None)             # the broker's consumer counts, as the test gives them
        now = time.monotonic()
        readings.take({topic_key(gone_req): 0}, now - GRACE + 0.5)   # listed just under the grace ago
        readings.take({topic_key(gone_req): 0}, now)
        w.processor.tool_clients.unserved = readings
        w.processor.tool_timeout = 3600.0           # a wait for it would outlast the test's own bound
        await w.open_flow("f", d)
        prompt = ScriptedPrompt(replies=[action("gone", topic="x"),
                                         final_answer(lambda t: t["history"][-1]["observation"])])
        await w.respond(d["prompt-request"], d["prompt-response"], PromptRequest, prompt)
        await w.configure({"tool": {"gone": {**TOOL, "name": "gone", "service": "gone-svc"}},
                           "tool-service": {"gone-svc": {"id": "gone-svc", "request-queue": gone_req,
                                                         "response-queue": gone_resp}}})
        t0 = time.monotonic()
        got = await w.call(d["request"], d["response"], AgentRequest(question="A joke about x?", user="alice"),
                           AgentResponse, until=end_of_dialog)
        took = time.monotonic() - t0
    last = got[-1]
    assert took < 30, f"the dialog took {took:.1f} s"
    assert last.outcome == "tool-unavailable" and last.error is not None, last
    assert "nothing serves" in last.error.message and topic_key(gone_req) in last.error.message
    assert broker.sent.get(gone_req) is None         # the request was never sent to the empty topic


# -- a dialog whose caller was told it failed -------------------------------------------------

COUNT_REQ, COUNT_RESP = tool_service_topics("unit-count")
COUNT_TOOL = {"type": "tool-service", "name": "count", "description": "Count once more", "service": "count-svc",
              "arguments": [{"name": "n", "type": "string", "description": "which count"}]}
COUNT_SERVICE = {"id": "count-svc", "request-queue": COUNT_REQ, "response-queue": COUNT_RESP}


class Counting(DynamicToolService):
    """Not idempotent: every call counts; ``during`` runs inside each call."""

    default_topic = "unit-count"

    def __init__(self, **params):
        super().__init__(**params)
        self.calls: list[str] = []
        self.during = None

    async def invoke(self, user, config, arguments):
        self.calls.append(arguments["n"])
        if self.during is not None:
            self.during()
        return f"counted {arguments['n']}"


@pytest.fixture
async def counting():
    """An agent whose model calls ``count`` at every step, beside the counting service."""
    broker = MemoryBroker()
    async with worker(Counting, broker=broker) as tool, worker(Agent, broker=broker) as w:
        d = w.flow_definition("f")
        d["next"] = d["request"]
        await w.open_flow("f", d)
        w.prompt = ScriptedPrompt(replies=[action("count", n="1")])   # and again, and again
        await w.respond(d["prompt-request"], d["prompt-response"], PromptRequest, w.prompt)
        await w.configure({"tool": {"count": COUNT_TOOL}, "tool-service": {"count-svc": COUNT_SERVICE}})
        w.tool, w.definition = tool.processor, d
        yield w


async def test_a_dialog_in_flight_when_the_broker_connection_went_calls_no_tool_again(counting):
    # What the agent's connection watcher does when the broker goes: here while the tool runs.
    counting.tool.during = lambda: counting.processor.pubsub.calls.connection_lost()
    d = counting.definition
    got = await counting.call(d["request"], d["response"], AgentRequest(question="Count 1", user="alice"),
                              AgentResponse, until=end_of_dialog)
    assert counting.tool.calls == ["1"]                  # before: run again at the next step
    assert len(counting.prompt.calls) == 1               # and no further model step
    assert got[-1].error.type == "agent-error"
    assert got[-1].error.message == (
        "The dialog stopped: the agent lost its broker connection during it, so its caller was told the call "
        "failed, and no further tool call or model step was made for it. Ask again.")


async def test_a_next_step_started_before_a_loss_another_process_told_of_is_not_taken(counting):
    # Another replica ran the first step; this one hears a notice that a process lost the broker
    # since: the dialog's caller has ended the call, so the step is not taken (no model, no tool).
    from trustgraph.base.messaging.lost_calls import ANY_TOPIC
    from trustgraph.schema import AgentStep, ServingStarted
    from trustgraph.schema.services.agent import DIALOG_STARTED
    from trustgraph.topics import SERVING

    d = counting.definition
    started = time.time() - 5
    watch = counting.processor.pubsub.calls
    await counting.send(SERVING, ServingStarted(topic=ANY_TOPIC, processor="prompt", instance="other",
                                                sent=started + 1))
    for _ in range(1000):   # the notice is handled on the agent's loop
        if watch.lost_since(started) is not None:
            break
        await asyncio.sleep(0)
    assert watch.lost_since(started) is not None and watch.lost_since(started + 2) is None
    step = AgentStep(action="count", arguments={"n": "1"}, observation="counted 1")
    got = await counting.call(d["request"], d["response"],
                              AgentRequest(question="Count", user="alice", history=[step]), AgentResponse,
                              until=end_of_dialog, properties={DIALOG_STARTED: f"{started:.3f}"})
    assert counting.tool.calls == [] and counting.prompt.calls == []
    assert got[-1].error.message.startswith("The dialog stopped: prompt lost its broker connection during it")
    # A dialog that starts now is answered as ever, and its next step carries when it started.
    nexts = await counting.listen(d["request"], AgentRequest)
    counting.prompt.replies = [action("count", n="2"), final_answer("done")]
    got = await counting.call(d["request"], d["response"], AgentRequest(question="Count 2", user="alice"),
                              AgentResponse, until=end_of_dialog)
    assert got[-1].answer == "done" and counting.tool.calls == ["2"]
    (second,) = [m for m in nexts.messages if m.value.history]
    assert abs(float(second.properties[DIALOG_STARTED]) - time.time()) < 60


# -- the ranker and the model together ---------------------------------------------------------

def decision(tool: str, **args: str) -> str:
    """A structured (JSON) decision calling ``tool``: what a template with a ``decision`` policy gets."""
    return json.dumps({"action": tool, "args": args})


def own_answer(text: str) -> str:
    """A structured (JSON) final answer."""
    return json.dumps({"action": "final-answer", "answer": text})


WEATHER = {"type": "tool-service", "name": "weather", "description": "Current weather in a city",
           "service": "joke-svc", "arguments": [{"name": "topic", "type": "string", "description": "The city"}]}


async def test_an_unsure_model_is_overruled_by_a_clear_ranker_and_the_arguments_are_asked_for_its_tool(agent):
    # "Tell me a joke about cats": the ranker clearly puts `joke` first; the model, unsure
    # (share 0.6), chose `weather`.  The agent calls `joke`, asking the model for its arguments
    # in a step whose schema allows `joke` alone, and answers with its result.
    await agent.configure({"tool": {"joke": TOOL, "weather": WEATHER}, "tool-service": {"joke-svc": SERVICE}})
    decisions = []

    def first(terms):
        decisions.append(1)
        return decision("weather", topic="cats") if len(decisions) == 1 else decision("joke", topic="cats")

    agent.prompt.replies = [first, final_answer(lambda t: t["history"][-1]["observation"])]
    agent.prompt.scores = [{"weather": 0.6, "joke": 0.4, "final-answer": 0.1}]
    got = await agent.ask("Tell me a joke about cats")
    assert got[-1].answer == "a joke about cats for alice" and got[-1].outcome == "tool-result"
    assert len(decisions) == 2                       # the choice, then the joke's arguments
    first_step = [c for c in agent.prompt.calls if c["id"] == "agent-react" and not c["history"]]
    assert len(first_step) == 2



NOW_PLAYING = {**TOOL, "name": "now-playing", "arguments": [],
               "description": "Which song and artist is playing on the speakers right now",
               "examples": ["What's this song?", "Who sings the track that's on?"]}


@pytest.mark.parametrize(("question", "outcome"), [("ooh whats this song called??", "tool-result"),
                                                   ("thanks, that's all for now!", "asked-back")])
async def test_the_rankers_tool_of_no_arguments_is_called_only_when_plainly_asked_for(agent, question, outcome):
    # The ranker's now-playing taken over the model's unsure weather; the model gives it no values,
    # so nothing but the ranker confirms the call: near the question, it is made; "thanks, that's
    # all for now!" (0.32) is asked back instead of showing what is playing.
    await agent.configure({"tool": {"now-playing": NOW_PLAYING, "weather": WEATHER},
                           "tool-service": {"joke-svc": SERVICE}})
    decisions = []

    def first(terms):
        decisions.append(1)
        return decision("weather", city="Paris") if len(decisions) == 1 else decision("now-playing")

    agent.prompt.replies = [first, final_answer(lambda t: t["history"][-1]["observation"])]
    agent.prompt.scores = [{"weather": 0.6, "now-playing": 0.4, "final-answer": 0.1}]
    got = await agent.ask(question)
    assert got[-1].outcome == outcome, got[-1]
    called = [r.observation for r in got if r.observation]
    assert called == (["a song for alice"] if outcome == "tool-result" else [])
    assert len(decisions) == 2                       # the choice, then now-playing's (empty) arguments
    if outcome == "asked-back":
        assert "now-playing" in got[-1].answer


@pytest.mark.parametrize("streaming", [False, True])
async def test_a_react_text_reply_overruled_by_the_ranker_asks_back_without_asking_the_model_again(agent, streaming):
    # A text template (no structured decision) does not narrow the schema: the same prompt asked
    # again for the ranker's tool would get the same reply (greedy).  So the dialog asks back at
    # once, offering the ranker's tool first, and the model is asked once.
    await agent.configure({"tool": {"joke": TOOL, "weather": WEATHER}, "tool-service": {"joke-svc": SERVICE}})
    agent.prompt.replies = ['Thought: the weather\nAction: weather\nArgs: {"topic": "cats"}']
    agent.prompt.scores = [{"weather": 0.6, "joke": 0.4, "final-answer": 0.1}]
    d = agent.processor.flows["f"].definition
    got = await agent.call(d["request"], d["response"],
                           AgentRequest(question="Tell me a joke about cats", user="alice", streaming=streaming),
                           AgentResponse, until=lambda r: r.end_of_dialog or r.error is not None)
    assert got[-1].outcome == "asked-back" and got[-1].candidates == ["joke", "weather"]
    assert len([c for c in agent.prompt.calls if c["id"] == "agent-react"]) == 1

async def test_a_sure_model_is_not_overruled(agent):
    # The ranker puts `joke` first by far, but the question is about the weather's subject too
    # (rain, in a city): the sure model's choice stands.  (Sure of a tool the question is not about
    # at all, it would not: decisions._with_ranker.)
    await agent.configure({"tool": {"joke": TOOL, "weather": WEATHER}, "tool-service": {"joke-svc": SERVICE}})
    agent.prompt.replies = [action("weather", topic="Oslo"), final_answer(lambda t: t["history"][-1]["observation"])]
    agent.prompt.scores = [{"weather": 0.97, "joke": 0.01}]
    got = await agent.ask("Tell me a joke about rain in Oslo")
    assert got[-1].outcome == "tool-result" and got[-1].candidates == ["weather"]


async def test_a_sure_model_calling_a_tool_the_question_is_not_about_is_overruled(agent):
    await agent.configure({"tool": {"joke": TOOL, "weather": WEATHER}, "tool-service": {"joke-svc": SERVICE}})
    decisions = []

    def first(terms):
        decisions.append(1)
        return decision("weather", topic="cats") if len(decisions) == 1 else decision("joke", topic="cats")

    agent.prompt.replies = [first, final_answer(lambda t: t["history"][-1]["observation"])]
    agent.prompt.scores = [{"weather": 0.97, "joke": 0.01}]
    got = await agent.ask("Tell me a joke about cats")
    assert got[-1].answer == "a joke about cats for alice" and got[-1].candidates == ["joke"]
    assert len(decisions) == 2                       # the choice, then the joke's arguments


@pytest.mark.parametrize("streaming", [False, True])
async def test_a_model_answering_alone_a_question_that_plainly_asks_for_a_tool_gets_the_tools_answer(agent, streaming):
    # The ranker puts `joke` clearly first; the model would answer itself.  The agent asks the
    # model for the joke's arguments (a step allowing `joke` alone) and answers with its result;
    # the model's own answer never reaches the user, streamed or not.
    await agent.configure({"tool": {"joke": TOOL, "weather": WEATHER}, "tool-service": {"joke-svc": SERVICE}})
    steps = []

    def first(terms):
        steps.append(1)
        return own_answer("Cats are funny animals.") if len(steps) == 1 else decision("joke", topic="cats")

    agent.prompt.replies = [first, final_answer(lambda t: t["history"][-1]["observation"])]
    agent.prompt.scores = [{"weather": 0.001, "joke": 0.01, "final-answer": 0.9}]
    d = agent.processor.flows["f"].definition
    got = await agent.call(d["request"], d["response"],
                           AgentRequest(question="Tell me a joke about cats", user="alice", streaming=streaming),
                           AgentResponse, until=lambda r: r.end_of_dialog or r.error is not None)
    said = "".join((r.content or r.answer or "") if r.chunk_type != "observation" else "" for r in got)
    assert "Cats are funny" not in said
    assert got[-1].outcome == "tool-result" and got[-1].candidates == ["joke"]
    assert "a joke about cats for alice" in said
    assert len(steps) == 2


@pytest.mark.parametrize("own", [False, True])
async def test_a_failure_asking_for_the_rankers_tools_arguments_ends_the_dialog_saying_so(agent, own):
    # Asked for the arguments of the ranker's tool (over the model's unsure call, or its own answer),
    # the prompt service fails: the dialog ends with that failure (a loaded machine ran out of
    # time there), not with a question back as though no tool were clearly meant.
    from trustgraph.schema import Error
    await agent.configure({"tool": {"joke": TOOL, "weather": WEATHER}, "tool-service": {"joke-svc": SERVICE}})
    steps = []

    def first(terms):
        steps.append(1)
        if len(steps) == 2:
            return Error(type="llm-error", message="text-completion did not answer: no response within 89.9s")
        return own_answer("Cats are funny animals.") if own else decision("weather", topic="cats")

    agent.prompt.replies = [first]
    agent.prompt.scores = [{"weather": 0.001, "joke": 0.01, "final-answer": 0.9} if own else
                           {"weather": 0.6, "joke": 0.4, "final-answer": 0.1}]
    got = await agent.ask("Tell me a joke about cats")
    assert len(steps) == 2
    assert got[-1].error is not None and got[-1].outcome != "asked-back", got[-1]
    assert "text-completion did not answer" in got[-1].error.message

async def test_a_model_answering_alone_a_question_near_no_tool_keeps_its_own_marked_answer(agent):
    await agent.configure({"tool": {"joke": TOOL, "weather": WEATHER}, "tool-service": {"joke-svc": SERVICE}})
    agent.prompt.replies = [final_answer("William Shakespeare."), final_answer("William Shakespeare.")]
    agent.prompt.scores = [{"weather": 0.001, "joke": 0.001, "final-answer": 0.9}]
    got = await agent.ask("Who wrote Hamlet?")
    assert got[-1].outcome == "no-tool" and got[-1].answer.endswith("William Shakespeare.")


async def test_the_ranker_flags_reach_the_judge():
    async with worker(Agent, ranker_lead=0.2, model_sure=0.9) as w:
        assert (w.processor.manager.confidence.lead, w.processor.manager.confidence.sure) == (0.2, 0.9)


async def test_the_agent_starts_loading_the_ranker_model_when_it_starts(monkeypatch):
    # Not on its first question: a restarted agent spent 3 s of its recovery there (make reliability).
    from trustgraph.catalog import embedding
    started = []
    monkeypatch.setattr(embedding, "preload", lambda: started.append(True))
    async with worker(Agent, broker=MemoryBroker()):
        assert started == [True]
