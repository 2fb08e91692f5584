"""agent-manager-react on a real broker: the loop, its messages, its tools and their mistakes.

The agent runs in-process on a flow of its own; the model is a scripted
stand-in (trustgraph.base.testing.ScriptedPrompt); tool services are the real
joke-service process or in-process DynamicToolServices.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time

import pulsar
import pytest
from agent_stand_ins import (
    AgentHarness,
    Responder,
    call,
    final,
    last_observation,
    observations,
    service_descriptor,
    service_tool,
    unique,
)
from trustgraph.agent.react.decisions import NO_RESULT_PREFIX, NO_TOOL_PREFIX
from trustgraph.base import DynamicToolService
from trustgraph.base.tool_services.dynamic_tool_service import ToolError
from trustgraph.schema import GraphRagResponse, ToolResponse
from trustgraph.schema.services.agent import OUTCOME_NO_TOOL


class Echo(DynamicToolService):
    """Echoes user, config and arguments; fails, or holds a call until the test lets it go."""

    def __init__(self, **params):
        super().__init__(**params)
        self.holding = asyncio.Event()   # a call with topic "hold" has arrived
        self.release = asyncio.Event()   # set by the test: the held call answers

    async def invoke(self, user, config, arguments):
        topic = arguments.get("topic", "")
        if topic == "fail":
            raise ToolError("no jokes about failure")
        if topic == "hold":
            self.holding.set()
            await self.release.wait()
        return {"user": user, "config": config, "arguments": arguments}


#: The running Echo services by topic (the ``echo`` fixture gives tests the topic).
ECHOES: dict[str, Echo] = {}


@pytest.fixture
async def agent(broker):
    started: list[object] = []

    async def make(**params):
        h = await AgentHarness(broker, **params).start()
        started.append(h)
        return h

    yield make
    for h in started:
        await h.stop()


@pytest.fixture
async def echo(broker):
    topic = unique("echo")
    svc = Echo(id=topic, pulsar_host=broker.url, metrics=False, topic=topic)
    await svc.start()
    ECHOES[topic] = svc
    yield topic
    ECHOES.pop(topic, None)
    await svc.stop()


async def test_joke_service_answers_non_streaming_and_streaming(agent, broker, spawn):
    topic = unique("joke")
    spawn("joke-service", "-t", topic, broker=broker)
    a = await agent()
    a.model.replies = [call("tell-joke", topic="programming"), final(last_observation)]
    await a.configure(tools={"tell-joke": service_tool("tell-joke", topic, style="pun")},
                      services={topic: service_descriptor(topic, [{"name": "style"}])},
                      agent={"additional-context": "Be brief."})

    raw = pulsar.Client(broker.url)
    wire = raw.subscribe(a.definition["response"], unique("raw"))
    try:
        got = await a.ask("Tell me a joke about programming")
        messages = [await asyncio.to_thread(wire.receive, 5000) for _ in got]
    finally:
        raw.close()
    joke = got[2].observation
    # On the wire: the id on every message, unused legacy fields written as explicit nulls.
    assert {m.properties()["id"] for m in messages} == {a.seen[0][0]}
    bodies = [json.loads(m.data()) for m in messages]
    assert [(b["thought"] is None, b["observation"] is None, b["answer"] is None) for b in bodies] == [
        (False, True, True), (True, True, True), (True, False, True), (False, True, True), (True, True, False)]
    assert joke.startswith("Hey alice! Here's a pun for you:")
    shapes = [(r.chunk_type, r.content, r.thought, r.observation, r.answer, r.end_of_message, r.end_of_dialog)
              for r in got]
    assert shapes == [
        ("", "", "I will use tell-joke", None, None, True, False),
        ("action", 'tell-joke {"topic": "programming"}', None, None, None, True, False),  # ours, for -v
        ("", "", None, joke, None, True, False),
        ("", "", "I know now", None, None, True, False),
        ("", "", None, None, joke, True, True),
    ]
    # The loop went through `next`: same id, the history carried over.
    (rid, first), (rid2, second) = a.seen
    assert rid == rid2 and first.history == []
    step = second.history[0]
    assert (step.thought, step.action, step.arguments, step.observation) == (
        "I will use tell-joke", "tell-joke", {"topic": "programming"}, joke)
    assert (second.question, second.user, second.state, second.group, second.streaming) == (
        first.question, "alice", "undefined", None, False)
    # The agent-react variables, each JSON-encoded.
    terms = a.model.calls[0]
    assert terms["tools"] == [{"name": "tell-joke", "description": "The tell-joke tool",
                               "arguments": [{"name": "topic", "type": "string", "description": "the topic"}]}]
    assert (terms["tool_names"], terms["context"], terms["history"]) == ("tell-joke", "Be brief.", [])
    assert a.model.calls[1]["history"][0]["arguments"] == {"topic": "programming"}

    got = await a.ask("Tell me a joke about programming", streaming=True, user="bob")
    kinds = [r.chunk_type for r in got]
    at = kinds.index("action")
    thoughts, act, obs, rest = got[:at], got[at], got[at + 1], got[at + 2:]
    assert kinds[:at] == ["thought"] * at and at > 2  # streamed in pieces, as it came
    assert (act.content, act.end_of_message) == ('tell-joke {"topic": "programming"}', True)
    assert "".join(r.content for r in thoughts) == "I will use tell-joke"
    assert all(r.thought == r.content and r.answer == "" for r in thoughts)
    assert [r.end_of_message for r in thoughts] == [False] * (at - 1) + [True]
    assert not any(r.end_of_dialog for r in got[:-1])
    assert obs.content == obs.observation and obs.content.startswith("Hey bob! Here's a pun")
    assert obs.end_of_message
    answer = [r for r in rest if r.chunk_type == "answer"]
    assert "".join(r.content for r in answer) == obs.content
    assert [r.end_of_message for r in answer[:-1]] == [False] * (len(answer) - 1)
    assert (answer[-1].content, answer[-1].end_of_message, answer[-1].end_of_dialog) == ("", True, True)
    assert [r.chunk_type for r in rest] == ["thought"] * (len(rest) - len(answer)) + ["answer"] * len(answer)
    assert a.seen[-1][1].streaming and a.seen[-1][1].history[0].observation == obs.content


async def test_tool_service_error_becomes_an_observation(agent, echo):
    a = await agent()
    a.model.replies = [call("echo", topic="fail"), final("sorry, no joke")]
    await a.configure(tools={"echo": service_tool("echo", echo)}, services={echo: service_descriptor(echo)})
    got = await a.ask("q")
    assert observations(got) == [
        "Error: tool 'echo' failed: tool-service-error: no jokes about failure. Check the arguments "
        "and try again, use another tool, or give a Final Answer."]
    # Its only call failed: the answer is the model's own, and says so.
    assert got[-1].answer == NO_RESULT_PREFIX + "sorry, no joke" and got[-1].outcome == OUTCOME_NO_TOOL


async def test_tool_service_not_running_times_out_and_dialog_goes_on(agent):
    a = await agent(tool_timeout=30)
    gone = unique("nobody")
    a.model.replies = [call("absent", topic="x"), final("gave up")]
    await a.configure(tools={"absent": service_tool("absent", gone, timeout=1)},
                      services={gone: service_descriptor(gone)})
    t0 = time.monotonic()
    got = await a.ask("q", streaming=True)
    assert time.monotonic() - t0 < 20  # the descriptor's 1 s, not the agent's 30 s
    obs = [r.content for r in got if r.chunk_type == "observation"]
    assert obs == ["Error: tool 'absent' did not answer within 1 seconds; it may be busy or not running. "
                   "Try again, use another tool, or give a Final Answer with what you know."]
    # Streamed, the mark comes first: the only call failed, so the answer is the model's own.
    assert "".join(r.content for r in got if r.chunk_type == "answer") == NO_RESULT_PREFIX + "gave up"
    assert got[-1].outcome == OUTCOME_NO_TOOL


async def test_model_mistakes_become_observations(agent, echo):
    a = await agent()
    a.model.replies = [
        call("no-such-tool", topic="x"),
        'Thought: t\nAction: echo\nArgs: {"topic": "x",}',
        call("echo", subject="x"),
        "I am just chatting",
        'Thought: fixed\nAction: "echo"\nArgs: {"topic": "a {brace} inside"}',
        final("done"),
    ]
    await a.configure(tools={"echo": service_tool("echo", echo)}, services={echo: service_descriptor(echo)})
    got = await a.ask("q", user="carol")
    obs = observations(got)
    assert obs[0].startswith("Error: No action for 'no-such-tool': there is no tool of that name. "
                             "The tools you can use are: echo.")
    assert obs[1].startswith("Error: the Args are not valid JSON")
    assert obs[2].startswith("Error: wrong arguments for tool 'echo': unknown argument(s) 'subject'; "
                             "missing argument(s) 'topic'")
    assert obs[3].startswith("Error: the reply has neither an 'Action:' nor a 'Final Answer:' line")
    assert json.loads(obs[4]) == {"user": "carol", "config": {}, "arguments": {"topic": "a {brace} inside"}}
    assert got[-1].answer == "done" and len(a.seen) == 6
    # Every message of the dialog, error steps included, kept the thought-then-result order
    # (with our action message before each tool call: the three replies that named a tool).
    assert [("t" if r.thought else "c" if r.chunk_type == "action" else "o" if r.observation is not None
             else "a") for r in got] == ["t", "c", "o", "t", "o", "t", "c", "o", "t", "o", "t", "c", "o", "t", "a"]


def decide(action: str, **args) -> str:
    """A structured decision, as a model under the decision schema writes it."""
    if action == "final-answer":
        return json.dumps({"action": action, "answer": args["answer"]})
    return json.dumps({"action": action, "args": args}, indent=2)


@pytest.mark.parametrize("streaming", [False, True])
async def test_json_decisions_the_schema_sent_and_honest_endings(agent, echo, streaming):
    a = await agent()
    question = "What is the echo of cats?"
    a.model.replies = [
        decide("echo", topic="cats"),
        decide("final-answer", answer="I will use the echo tool to find the echo of cats."),  # a thought
        decide("final-answer", answer="  "),                                                  # nothing
        decide("final-answer", answer="What is the echo of cats"),                            # said back
        "```json\n" + decide("final-answer", answer="The echo says cats.") + "\n```",
    ]
    counted = {**service_tool("count", echo, args=()), "arguments": [
        {"name": "n", "type": "integer", "description": "how many"}]}
    await a.configure(tools={"echo": service_tool("echo", echo), "count": counted},
                      services={echo: service_descriptor(echo)})
    got = await a.ask(question, streaming=streaming)

    # Each step's prompt request carries the schema of what the model may do next: each tool
    # with its own argument schema, or the answer.
    sent = json.loads(a.prompt.properties[0]["decision-schema"])
    by_action = {alt["properties"]["action"]["const"]: alt for alt in sent["anyOf"]}
    assert set(by_action) == {"echo", "count", "final-answer"}
    assert by_action["count"]["properties"]["args"]["properties"]["n"]["type"] == "integer"
    assert by_action["echo"]["properties"]["args"]["required"] == ["topic"]
    assert len(a.prompt.properties) == 5
    assert all("decision-schema" in p for p in a.prompt.properties)

    if streaming:
        kinds = [r.chunk_type for r in got]
        obs = [r.content for r in got if r.chunk_type == "observation"]
        assert [r.content for r in got if r.chunk_type == "action"] == ['echo {"topic": "cats"}']
        assert kinds[:2] == ["action", "observation"]
        assert "".join(r.content for r in got if r.chunk_type == "answer") == "The echo says cats."
        assert got[-1].end_of_dialog and "thought" not in kinds   # JSON decisions carry no thought
    else:
        obs = observations(got)
        assert [r.content for r in got if r.chunk_type == "action"] == ['echo {"topic": "cats"}']
        assert got[-1].answer == "The echo says cats."
        # JSON decisions carry no thought, and no empty thought message is sent for them (upstream's
        # client read each as an empty chunk).
        assert not [r for r in got if r.thought is not None and not r.answer and not r.observation
                    and r.chunk_type != "action"]
    assert json.loads(obs[0])["arguments"] == {"topic": "cats"}
    assert obs[1] == ("Error: the final answer announces a tool call instead of making it: call the tool "
                      "with an action and its args, then answer from its result.")
    assert obs[2] == "Error: the final answer is empty: give the answer itself."
    assert obs[3].startswith("Error: the final answer only restates the question")
    assert len(obs) == 4


@pytest.mark.parametrize("streaming", [False, True])
async def test_action_messages_only_for_a_caller_that_asks(agent, echo, streaming):
    # Upstream's clients never ask, and would show an action message as a thought.
    a = await agent()
    a.model.replies = [decide("echo", topic="cats"), decide("final-answer", answer="The echo says cats.")]
    await a.configure(tools={"echo": service_tool("echo", echo)}, services={echo: service_descriptor(echo)})
    plain = await a.ask("What is the echo of cats?", streaming=streaming, show_actions=False)
    assert "action" not in [r.chunk_type for r in plain]
    assert json.loads((observations(plain) or [r.content for r in plain if r.chunk_type == "observation"])[0])
    asked = await a.ask("What is the echo of cats?", streaming=streaming)
    assert [r.content for r in asked if r.chunk_type == "action"] == ['echo {"topic": "cats"}']
    # The request's property goes on with the dialog's next iteration, and only with it.
    assert [p.get("show-actions") for p in a.seen_properties] == [None, None, "true", "true"]


async def test_arguments_are_checked_against_the_tools_schema(agent, echo):
    a = await agent()
    counted = {**service_tool("count", echo, args=()), "arguments": [
        {"name": "topic", "type": "string", "description": "what"},
        {"name": "n", "type": "integer", "description": "how many"},
        {"name": "unit", "type": "string", "enum": ["C", "F"], "required": False}]}
    a.model.replies = [call("count", topic="x", n="many"), call("count", topic="x", n="3", unit="K"),
                       call("count", topic="x", n="3"), final(last_observation)]
    await a.configure(tools={"count": counted}, services={echo: service_descriptor(echo)})
    got = await a.ask("q")
    obs = observations(got)
    assert obs[0].startswith("Error: wrong arguments for tool 'count': argument 'n' must be of type integer, "
                             'got "many". ')
    assert obs[1].startswith("Error: wrong arguments for tool 'count': argument 'unit' must be one of "
                             '"C", "F", got "K". ')
    # The valid call reached the service, with the unambiguous coercion made.
    assert json.loads(obs[2])["arguments"] == {"topic": "x", "n": 3}
    assert json.loads(got[-1].answer)["arguments"] == {"topic": "x", "n": 3}


async def test_max_iterations_ends_the_dialog(agent, echo):
    a = await agent(max_iterations=2)
    a.model.replies = [call("echo", topic="x")]
    await a.configure(tools={"echo": service_tool("echo", echo)}, services={echo: service_descriptor(echo)})
    got = await a.ask("q")
    err = got[-1]
    limit = ("Too many agent iterations: the dialog reached the limit of 2 steps without an answer "
             "(agent-manager-react --max-iterations; tg-launch --max-iterations)")
    assert (err.error.type, err.error.message, err.end_of_dialog) == ("agent-error", limit, False)
    assert len(observations(got)) == 2 and len(a.model.calls) == 2
    got = await a.ask("q", streaming=True)
    err = got[-1]
    assert (err.chunk_type, err.content, err.end_of_message, err.end_of_dialog, err.error.type) == (
        "error", limit, True, True, "agent-error")


@pytest.mark.parametrize("streaming", [False, True])
async def test_a_blank_question_is_an_agent_error_before_any_model_step(agent, streaming):
    # A caller on the broker directly (the gateway refuses it before sending).
    a = await agent()
    a.model.replies = [final("an answer")]
    await a.configure()
    for question in ("", "   ", "\n\t "):
        got = await a.ask(question, streaming=streaming)
        assert [(r.error.type if r.error else None, r.error.message if r.error else None) for r in got] == [
            ("agent-error", "the agent request's question is empty: ask a question")]
    assert a.model.calls == []
    # A question after them reaches the model as ever.
    got = await a.ask("What is it?", streaming=streaming)
    assert got[-1].error is None and len(a.model.calls) == 1


async def test_prompt_service_silence_is_our_error(agent):
    a = await agent(prompt_timeout=0.5)
    a.model.silent = True
    await a.configure()
    got = await a.ask("q")
    assert got[-1].error.type == "agent-error" and "did not answer" in got[-1].error.message


async def test_group_and_state_filtering(agent, echo):
    a = await agent()
    tools = {
        "plain": service_tool("plain", echo),
        "fun": service_tool("fun", echo, group=["fun"], state="told"),
        "after": service_tool("after", echo, group=["fun"], **{"applicable-states": ["told"]}),
    }
    await a.configure(tools=tools, services={echo: service_descriptor(echo)})

    def offered(terms):
        return ",".join(t["name"] for t in terms["tools"]) or "none"

    a.model.replies = [call("fun", topic="x"), call("plain", topic="x"), final(offered)]
    got = await a.ask("q", group=["fun"])
    # Which tools each step offers (their order is the ranker's, not this test's subject).
    assert [sorted(c["tool_names"].split(", ")) for c in a.model.calls] == [["fun"], ["after", "fun"],
                                                                            ["after", "fun"]]
    assert observations(got)[1].startswith("Error: No action for 'plain'")
    assert [m.state for _, m in a.seen] == ["", "told", "told"]  # the tool's state, then kept
    # after a tool's result: not marked as the model's own
    assert sorted(got[-1].answer.split(",")) == ["after", "fun"]

    a.model.calls.clear()
    a.model.replies = [final(offered)]
    assert (await a.ask("q"))[-1].answer == NO_TOOL_PREFIX + "plain"
    assert (await a.ask("q", group=[]))[-1].answer == NO_TOOL_PREFIX + "none"
    assert a.model.calls[-1]["tools"] == [] and a.model.calls[-1]["tool_names"] == ""
    everything = (await a.ask("q", group=["*"], state="told"))[-1].answer
    assert everything.startswith(NO_TOOL_PREFIX)   # in the ranker's order: compared as a set
    assert sorted(everything[len(NO_TOOL_PREFIX):].split(",")) == ["after", "fun", "plain"]


async def test_bad_descriptor_beside_a_good_one(agent, echo, caplog):
    a = await agent()
    a.model.replies = [call("good", topic="x"), final(last_observation)]
    broken = {"id": "broken", "request-queue": "non-persistent://tg/request/b"}  # no response-queue
    with caplog.at_level(logging.WARNING, logger="trustgraph.agent.react.service"):
        await a.configure(tools={"good": service_tool("good", echo), "bad": service_tool("bad", "broken"),
                                 "worse": {"type": "knowledge-query"}},
                          services={echo: service_descriptor(echo), "broken": broken})
    assert sorted(a.proc.registry.tools) == ["good"]
    errors = a.proc.descriptor_errors
    assert "tool-service/broken: field 'response-queue': required field is missing" in errors
    assert any(e.startswith("tool/bad: field 'service': service 'broken' is invalid") for e in errors)
    assert any(e.startswith("tool/worse: field 'name'") for e in errors)
    logged = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any("tool/bad" in m and "'service'" in m for m in logged)
    got = await a.ask("q")
    assert json.loads(got[-1].answer)["arguments"] == {"topic": "x"}


async def test_builtin_tool_types_against_responders(agent):
    a = await agent()
    rag = await Responder(a.ps, a.definition, "graph-rag", lambda q: [GraphRagResponse(
        response=f"rag:{q.query}:{q.user}:{q.collection}", end_of_stream=True)]).start()
    mcp = await Responder(a.ps, a.definition, "mcp-tool", lambda r: [ToolResponse(
        text=None, object=json.dumps({"name": r.name, "params": json.loads(r.parameters)}))]).start()
    a.model.templates = {"summarise": lambda t: f"summary of {t['text']}", "question": lambda t: f"llm:{t['question']}"}
    a.model.replies = [call("kb", question="crew?"), call("weather", city="Paris"),
                       call("sum", text="a \"long\" text"), call("ask-llm", question="hi"), final("ok")]
    await a.configure(tools={
        "kb": {"type": "knowledge-query", "name": "kb", "description": "graph", "collection": "space"},
        "weather": {"type": "mcp-tool", "name": "weather", "description": "w", "mcp-tool": "wx",
                    "arguments": [{"name": "city", "type": "string", "description": "c"}]},
        "sum": {"type": "prompt", "name": "sum", "description": "s", "template": "summarise",
                "arguments": [{"name": "text", "type": "string", "description": "t"}]},
        "ask-llm": {"type": "text-completion", "name": "ask-llm", "description": "llm"},
    }, mcp={"wx": json.dumps({"url": "http://example.invalid/mcp"})})
    got = await a.ask("q", user="dave")
    assert observations(got) == ["rag:crew?:trustgraph:space", '{"name": "wx", "params": {"city": "Paris"}}',
                                 'summary of a "long" text', "llm:hi"]
    assert rag.requests[0].user == "trustgraph" and mcp.requests[0].name == "wx"
    sums = [c for c in a.model.calls if c["id"] == "summarise"]
    assert sums == [{"id": "summarise", "streaming": False, "text": 'a "long" text'}]


async def test_one_client_per_service_closed_when_unused(agent, echo):
    a = await agent()
    services = {echo: service_descriptor(echo, ["style"])}
    tools = {"pun": service_tool("pun", echo, style="pun"), "dad": service_tool("dad", echo, style="dad")}
    a.model.replies = [call("pun", topic="x"), call("dad", topic="hold"), final(last_observation)]
    await a.configure(tools=tools, services=services)
    assert a.proc.tool_clients.clients == {}  # created on first use
    dialog = asyncio.ensure_future(a.ask("q", user="erin"))
    await asyncio.wait_for(ECHOES[echo].holding.wait(), 60)  # the second call is in flight
    pool = a.proc.tool_clients
    assert len(pool.clients) == 1
    client = next(iter(pool.clients.values()))
    await a.configure(tools={}, services=services)  # reload: no tool uses the service any more
    assert client.started, "closed under a running call"
    ECHOES[echo].release.set()
    got = await dialog
    first, second = (json.loads(o) for o in observations(got))
    assert (first["config"], second["config"]) == ({"style": "pun"}, {"style": "dad"})
    assert first["user"] == second["user"] == "erin"
    assert pool.clients == {} and not client.started
