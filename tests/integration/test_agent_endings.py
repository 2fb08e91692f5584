"""How dialogs end, on a real broker: each in one outcome a caller can tell apart, in seconds.

The agent runs in-process; the model is the scripted stand-in, which here
also sends the choice scores an LLM service reading the model's token
probabilities sends (``ScriptedPrompt.scores``); tool services are real
in-process DynamicToolServices.
"""

from __future__ import annotations

import json
import time

import pytest
from agent_stand_ins import AgentHarness, observations, service_descriptor, service_tool, unique
from support import wait_for_async
from trustgraph.base import DynamicToolService
from trustgraph.base.tool_services.dynamic_tool_service import ToolError
from trustgraph.catalog import embedding
from trustgraph.schema.services.agent import (
    OUTCOME_ASKED,
    OUTCOME_NO_TOOL,
    OUTCOME_TOOL,
    OUTCOME_UNAVAILABLE,
)


class Shout(DynamicToolService):
    """Says its text back in capitals (an echoing tool: its result is the question's words)."""

    async def invoke(self, user, config, arguments):
        text = arguments.get("text", "")
        if text == "fail":
            raise ToolError("cannot shout that")
        return text.upper()


class AnnouncedShout(Shout):
    tools = [{"name": "shout", "description": "Shout a text",
              "arguments": [{"name": "text", "type": "string", "description": "what"}]}]


@pytest.fixture
async def agent(broker):
    started: list[AgentHarness] = []

    async def make(**params):
        h = await AgentHarness(broker, **params).start()
        started.append(h)
        return h

    yield make
    for h in started:
        await h.stop()


@pytest.fixture
async def shout(broker):
    topic = unique("shout")
    svc = Shout(id=topic, pulsar_host=broker.url, metrics=False, topic=topic)
    await svc.start()
    yield topic
    await svc.stop()


def decide(action: str, **args) -> str:
    if action == "final-answer":
        return json.dumps({"action": action, "answer": args["answer"]})
    return json.dumps({"action": action, "args": args})


def tools_of(service: str, *names: str) -> dict:
    return {n: {**service_tool(n, service, args=("text",)), "description": f"The {n} tool"} for n in names}


@pytest.mark.parametrize("streaming", [False, True])
async def test_an_echoing_tools_result_is_the_answer_not_a_refusal(agent, shout, streaming):
    a = await agent()
    a.model.replies = [decide("shout", text="fire drill at noon"),
                       lambda terms: decide("final-answer", answer=terms["history"][-1]["observation"])]
    await a.configure(tools=tools_of(shout, "shout"), services={shout: service_descriptor(shout)})
    got = await a.ask("Shout 'fire drill at noon'", streaming=streaming)
    last = got[-1]
    if streaming:
        assert "".join(r.content for r in got if r.chunk_type == "answer") == "FIRE DRILL AT NOON"
    else:
        assert last.answer == "FIRE DRILL AT NOON"
    assert (last.outcome, last.candidates) == (OUTCOME_TOOL, ["shout"])
    assert len(a.model.calls) == 2   # no "restates the question" refusal in between


@pytest.fixture
def words_ranker(monkeypatch):
    """Tools ranked by shared words: the model's shares alone decide."""
    monkeypatch.setenv(embedding.RANKER_ENV, embedding.WORDS)
    embedding.reset()
    yield
    embedding.reset()


@pytest.mark.parametrize("streaming", [False, True])
async def test_a_guess_asks_back_with_the_likely_tools(agent, shout, streaming, words_ranker):
    # The model's shares alone (the ranker's part, which puts "The shout tool" and "The whisper
    # tool" within 0.001 of each other for this question, is tested in tests/unit).
    a = await agent()
    a.model.replies = [decide("whisper", text="hello")]
    # The model named whisper, but found shout more likely, and neither clearly.
    a.model.scores = [{"shout": 0.30, "whisper": 0.06, "sing": 0.01, "final-answer": 0.2}]
    await a.configure(tools=tools_of(shout, "shout", "whisper", "sing"),
                      services={shout: service_descriptor(shout)})
    got = await a.ask("say hello softly or loudly", streaming=streaming)
    last = got[-1]
    text = "".join(r.content for r in got if r.chunk_type == "answer") if streaming else last.answer
    assert (last.outcome, last.candidates) == (OUTCOME_ASKED, ["shout", "whisper"])
    assert "`shout` (The shout tool) or `whisper` (The whisper tool)?" in text
    assert [r for r in got if r.chunk_type == "action"] == [] and not observations(got)  # no tool called


async def test_a_clear_choice_is_called(agent, shout):
    a = await agent()
    a.model.replies = [decide("shout", text="hi"),
                       lambda terms: decide("final-answer", answer=terms["history"][-1]["observation"])]
    a.model.scores = [{"shout": 0.6, "whisper": 0.1}, None]
    await a.configure(tools=tools_of(shout, "shout", "whisper"), services={shout: service_descriptor(shout)})
    got = await a.ask("shout hi")
    assert (got[-1].answer, got[-1].outcome) == ("HI", OUTCOME_TOOL)


@pytest.mark.parametrize("check", [True, False])
async def test_a_sure_choice_with_a_made_up_value_asks_back_unless_the_check_is_off(agent, shout, check):
    a = await agent(argument_check=check)
    a.model.replies = [decide("shout", text="the weather in London"),
                       lambda terms: decide("final-answer", answer=terms["history"][-1]["observation"])]
    a.model.scores = [{"shout": 0.9, "whisper": 0.05}, None]
    await a.configure(tools=tools_of(shout, "shout", "whisper"), services={shout: service_descriptor(shout)})
    got = await a.ask("count the words of: good morning everyone")
    if check:
        assert (got[-1].outcome, got[-1].candidates) == (OUTCOME_ASKED, ["shout"])
        assert got[-1].answer.startswith("I am not sure how to answer: the likeliest tool, `shout`, needs its "
                                         "text, and your question does not say it.")
        assert not observations(got)   # the made-up call was never made
    else:
        assert (got[-1].answer, got[-1].outcome) == ("THE WEATHER IN LONDON", OUTCOME_TOOL)


async def test_no_tool_fits_answers_from_the_model_alone_marked(agent, shout):
    a = await agent()

    def reply(terms):   # the second call is the model's own answer (its schema holds only the answer)
        return decide("shout", text="x") if len(a.model.calls) == 1 else decide("final-answer", answer="Paris.")

    a.model.replies = [reply]
    a.model.scores = [{"shout": 0.0001, "whisper": 0.0002, "final-answer": 0.9}]
    await a.configure(tools=tools_of(shout, "shout", "whisper"), services={shout: service_descriptor(shout)})
    got = await a.ask("What is the capital of France?")
    assert got[-1].outcome == OUTCOME_NO_TOOL
    assert got[-1].answer == ("No tool fits this question, so this answer is the model's own, not checked "
                              "by any tool: Paris.")
    second = json.loads(a.prompt.properties[1]["decision-schema"])
    assert [alt["properties"]["action"]["const"] for alt in second["anyOf"]] == ["final-answer"]
    assert second["anyOf"][0]["properties"]["answer"]["maxLength"] == 400


@pytest.mark.parametrize("streaming", [False, True])
async def test_an_answer_that_runs_on_until_it_is_cut_off_ends_at_once(agent, shout, streaming):
    # "How tall is Mount Everest?": the 135M model wrote "8,976,231,836,...,000,000,..." until its
    # tokens ran out, was told the reply was no JSON, did it again, and the dialog ran out of time.
    a = await agent()
    a.model.replies = ['{"action": "final-answer", "answer": "Mount Everest is 8,976,231,' + "000," * 150]
    a.model.scores = [{"shout": 0.0001, "whisper": 0.0002, "final-answer": 0.9}]
    await a.configure(tools=tools_of(shout, "shout", "whisper"), services={shout: service_descriptor(shout)})
    got = await a.ask("How tall is Mount Everest?", streaming=streaming)
    assert got[-1].outcome == OUTCOME_NO_TOOL and len(a.model.calls) == 1
    text = "".join(r.content for r in got if r.chunk_type == "answer") if streaming else got[-1].answer
    assert text == "No tool fits this question, and the model has no answer of its own."


async def test_the_same_failing_call_twice_ends_the_dialog_with_the_models_own_answer_saying_why(agent, shout):
    a = await agent()
    # The model repeats the call; asked for its own answer then (the same step), it gives one.
    asked: list[int] = []

    def second_step(terms: dict) -> str:
        asked.append(1)
        return decide("shout", text="fail") if len(asked) == 1 else decide("final-answer", answer="I cannot shout that")

    a.model.replies = [decide("shout", text="fail"), second_step]
    await a.configure(tools=tools_of(shout, "shout"), services={shout: service_descriptor(shout)})
    got = await a.ask("shout fail")
    assert len(a.model.calls) == 3       # two decisions, then its own answer
    last = got[-1]
    assert last.error is None and last.outcome == OUTCOME_NO_TOOL
    assert last.answer == ("No tool answered this question (the same call of tool 'shout' failed twice: tool "
                           "'shout' failed: tool-service-error: cannot shout that), so this answer is the model's "
                           "own, not checked by any tool: I cannot shout that")


class Calendar(DynamicToolService):
    """Two tools of one service, told apart by their config param ``operation``."""

    async def invoke(self, user, config, arguments):
        date = arguments.get("date", "")
        return f"{date} is a Saturday." if config.get("operation") == "day" else f"{date} is 24 days away."


@pytest.mark.parametrize("streaming", [False, True])
async def test_a_question_of_two_requests_is_answered_by_both_tools_in_turn(agent, broker, streaming):
    # The 135M model answered "What day of the week is ... and how many days away is it?" with the
    # first tool's result alone; after it the agent calls the second request's tool itself (the
    # model giving only its arguments), and the results, in turn, are the answer.
    topic = unique("calendar")
    svc = Calendar(id=topic, pulsar_host=broker.url, metrics=False, topic=topic)
    await svc.start()
    try:
        a = await agent()
        a.model.replies = [decide("day-of-week", date="31 October 2026"),
                           decide("days-until", date="31 October 2026")]
        date = [{"name": "date", "type": "string", "description": "The date"}]
        tools = {"day-of-week": {**service_tool("day-of-week", topic, operation="day"), "arguments": date,
                                 "description": "The day of the week a date falls on"},
                 "days-until": {**service_tool("days-until", topic, operation="until"), "arguments": date,
                                "description": "How many days from today until a date"},
                 "weather": {**service_tool("weather", topic, args=("city",)), "description": "Current weather in a city"}}
        await a.configure(tools=tools, services={topic: service_descriptor(topic, [{"name": "operation"}])})
        got = await a.ask("What day of the week is 31 October 2026 and how many days away is it?",
                          streaming=streaming)
        assert observations(got) == ["31 October 2026 is a Saturday.", "31 October 2026 is 24 days away."]
        last = got[-1]
        text = "".join(r.content for r in got if r.chunk_type == "answer") if streaming else last.answer
        assert text == "31 October 2026 is a Saturday.\n31 October 2026 is 24 days away."
        assert (last.outcome, last.candidates, last.error) == (OUTCOME_TOOL, ["day-of-week", "days-until"], None)
        assert len(a.model.calls) == 2     # the first decision, then only the second call's arguments
        second = json.loads(a.prompt.properties[1]["decision-schema"])
        assert [alt["properties"]["action"]["const"] for alt in second["anyOf"]] == ["days-until"]
    finally:
        await svc.stop()


async def test_a_stopped_announced_service_ends_the_dialog_as_unavailable(agent, broker):
    a = await agent()
    topic = unique("gone")
    svc = AnnouncedShout(id=topic, pulsar_host=broker.url, metrics=False, topic=topic, **a.announce)
    await svc.start()
    await a.configure()
    a.model.replies = [decide("shout", text="x")]
    await wait_for_async("the announced tool in the agent", lambda: "shout" in a.proc.registry.tools, 60)
    await svc.stop()                                # a clean stop says "down"
    await wait_for_async("the service down in the agent's directory",
                         lambda: a.proc.feed.directory.live_for(topic) is False, 60)
    # Its tool leaves the catalog when the agent rebuilds it, a step after the directory knows.
    await wait_for_async("the stopped service's tool gone from the agent's catalog",
                         lambda: "shout" not in a.proc.registry.tools, 60)
    t0 = time.monotonic()
    got = await a.ask("shout x")
    assert time.monotonic() - t0 < 30   # at once: not the tool call's timeout
    err = got[-1]
    assert err.outcome == OUTCOME_UNAVAILABLE, err.error
    assert err.error.message.startswith("Tool 'shout' cannot be used now: tool service ")
    assert "is not running" in err.error.message and "Final Answer" not in err.error.message
    # Ended before the model was asked: the question is about the stopped service's tool, which the
    # catalog no longer shows (steps.gone_nearer); it used to end as no-tool, the model answering alone.
    assert a.model.calls == []
    # A question about nothing it offered goes to the model as ever.
    a.model.replies = [decide("final-answer", answer="Paris")]
    got = await a.ask("What is the capital of France?")
    assert got[-1].error is None and len(a.model.calls) == 1
