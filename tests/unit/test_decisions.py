"""Structured decisions: the schema of the agent's next step, its reading, a template's policy, honest endings."""

from __future__ import annotations

import json

import jsonschema
import pytest
from support import bootstrap_prompts
from trustgraph.agent.react.decisions import answer_problem, parse_decision
from trustgraph.agent.react.vocabulary import Action, Final, ReactParseError
from trustgraph.base.descriptors.arguments import ToolArgument, arguments_schema
from trustgraph.base.formats import decision_schema as ds
from trustgraph.prompt.template.templates import PromptError, PromptSet

WEATHER = ("weather", arguments_schema([ToolArgument(name="city", type="string", description="The city")]))
CONVERT = ("convert", arguments_schema([ToolArgument(name="amount", type="number", description="How much"),
                                        ToolArgument(name="to", type="string", description="Currency")]))


def valid(schema: dict, value: object) -> bool:
    return jsonschema.Draft202012Validator(schema).is_valid(value)


# -- the schema ---------------------------------------------------------------------------

def test_the_schema_allows_each_tool_with_its_own_arguments_and_the_answer():
    schema = ds.decision_schema([WEATHER, CONVERT])
    jsonschema.Draft202012Validator.check_schema(schema)
    assert valid(schema, {"action": "weather", "args": {"city": "Paris"}})
    assert valid(schema, {"action": "convert", "args": {"amount": 20, "to": "EUR"}})
    assert valid(schema, {"action": "final-answer", "answer": "It is sunny."})
    # The measured failure of ReAct text: another tool's argument name, a wrong type, a made-up tool.
    assert not valid(schema, {"action": "weather", "args": {"topic": "Paris"}})
    assert not valid(schema, {"action": "convert", "args": {"amount": "twenty", "to": "EUR"}})
    assert not valid(schema, {"action": "tell-joke", "args": {}})
    assert not valid(schema, {"action": "final-answer", "answer": ""})


def test_every_free_string_is_bounded_so_a_constrained_generation_ends():
    schema = ds.decision_schema([WEATHER])
    city = schema["anyOf"][0]["properties"]["args"]["properties"]["city"]
    assert city["maxLength"] == ds.STRING_LIMIT
    assert schema["anyOf"][-1]["properties"]["answer"]["maxLength"] == ds.ANSWER_LIMIT
    assert "maxLength" not in WEATHER[1]["properties"]["city"]  # the catalog's own schema is untouched
    # A list too: greedy decoding repeated one member until the token limit cut the reply.
    cart = ("add-to-cart", {"type": "object", "properties": {"products": {"type": "array", "items": {"type": "string"}}}})
    products = ds.decision_schema([cart])["anyOf"][0]["properties"]["args"]["properties"]["products"]
    assert products["maxItems"] == ds.ITEMS_LIMIT and products["items"]["maxLength"] == ds.STRING_LIMIT


def test_a_tool_that_declares_no_arguments_is_called_with_an_empty_object():
    # The catalog's schema of such a tool takes any object (upstream's pass-through descriptors);
    # under it the 135M model, asked for now-playing's arguments, invented a playlist until its
    # 512-token limit (10 s).  The prompt names no argument, so whatever it writes is made up.
    now = ("now-playing", arguments_schema([]))
    assert now[1] == {"type": "object"}   # the catalog's own schema is untouched
    schema = ds.decision_schema([now])
    assert valid(schema, {"action": "now-playing", "args": {}})
    assert not valid(schema, {"action": "now-playing", "args": {"title": "Road Trip"}})
    # A tool that says it takes any object, or whose arguments allow more, keeps that.
    passing = ("pass", {"type": "object", "additionalProperties": True})
    assert valid(ds.decision_schema([passing]), {"action": "pass", "args": {"q": "x"}})


def test_a_declared_default_is_no_part_of_what_the_model_is_asked_to_write():
    # It is what the tool gets when the call leaves the argument out (filled by the catalog's check),
    # not a constraint; some model servers refuse keywords they do not enforce.
    days = ("forecast", arguments_schema([ToolArgument(name="city"), ToolArgument(name="days", type="integer",
                                                                                 required=False, default=3)]))
    assert days[1]["properties"]["days"]["default"] == 3
    args = ds.decision_schema([days])["anyOf"][0]["properties"]["args"]
    assert args["properties"]["days"] == {"type": "integer"}


def test_a_final_answer_cut_off_while_it_repeated_itself_runs_on():
    from trustgraph.agent.react.prompting import parse_reply, runs_on
    from trustgraph.agent.react.vocabulary import RunawayAnswer
    looped = '{\n  "action": "final-answer",\n  "answer": "Mount Everest is 8,976,231,' + "000," * 120
    assert runs_on(looped) and isinstance(parse_reply(looped), RunawayAnswer)
    assert runs_on("I'm late. " * 7) and not runs_on("ha ha ha") and not runs_on("a" * 59)
    # Closed by the schema's length limit while repeating itself, it runs on too: "thanks!" had been
    # answered "The answer is: The answer is: ..." to 400 characters, as the model's own answer.
    limited = json.dumps({"action": "final-answer", "answer": ("The answer is: " * 30)[:400]})
    assert isinstance(parse_reply(limited), RunawayAnswer)
    assert isinstance(parse_reply(json.dumps({"action": "final-answer", "answer": "You're welcome!"})), Final)
    # Cut off without repeating itself, or a call: told why, as before.
    cut = '{"action": "final-answer", "answer": "Everest is the highest mountain on Earth, in the Himalaya'
    assert type(parse_reply(cut)) is ReactParseError
    call = '{"action": "add-to-cart", "args": {"products": [' + '"020 7946 0000", ' * 30
    assert type(parse_reply(call)) is ReactParseError


def test_narrowing_keeps_calls_or_answer_and_never_leaves_nothing():
    schema = ds.decision_schema([WEATHER, CONVERT])
    calls = ds.narrow(schema, answer=False)
    assert [a["properties"]["action"]["const"] for a in calls["anyOf"]] == ["weather", "convert"]
    answer = ds.narrow(schema, calls=False)
    assert [a["properties"]["action"]["const"] for a in answer["anyOf"]] == ["final-answer"]
    only_answer = ds.decision_schema([])
    assert ds.narrow(only_answer, answer=False) == only_answer   # no tools: the answer stays possible


def test_schema_properties_are_read_or_refused_with_a_reason():
    assert ds.parse(None) is None and ds.parse("") is None
    assert ds.parse('{"type": "object"}') == {"type": "object"}
    with pytest.raises(ValueError, match="not JSON"):
        ds.parse("{nope")
    with pytest.raises(ValueError, match="JSON Schema object"):
        ds.parse("[1]")


# -- reading a decision -------------------------------------------------------------------

def test_a_json_decision_is_read_and_react_text_is_left_to_the_react_parser():
    assert parse_decision('{"action": "weather", "args": {"city": "Paris"}}') == Action("", "weather", {"city": "Paris"})
    assert parse_decision('```json\n{"action": "final-answer", "answer": " Sunny. "}\n```') == Final("", "Sunny.")
    assert parse_decision('{"action": "ping"}') == Action("", "ping", {})
    assert parse_decision("Thought: hm\nAction: weather\nArgs: {}") is None


@pytest.mark.parametrize("text, reason", [
    ('{"action": "weather", "args": ', "not valid JSON"),
    ('{"args": {}}', 'names no "action"'),
    ('{"action": "weather", "args": [1]}', '"args" must be a JSON object'),
    ('{"action": "final-answer"}', 'needs "answer"'),
])
def test_a_broken_decision_says_what_is_wrong_and_how_to_reply(text, reason):
    with pytest.raises(ReactParseError) as e:
        parse_decision(text)
    assert reason in e.value.reason and '"final-answer"' in e.value.reason


# -- honest endings -----------------------------------------------------------------------

@pytest.mark.parametrize("answer, question", [
    ("", "What is the weather in Paris?"),
    ("   ", "What is the weather in Paris?"),
    ("What is the weather in Paris?", "What is the weather in Paris?"),
    ("the weather in Paris", "What is the weather in Paris?"),
    ("I will use the weather tool to determine the weather in Paris.", "What is the weather in Paris?"),
])
def test_a_non_answer_is_refused(answer, question):
    assert answer_problem(answer, question, ["weather", "tell-joke"]) is not None


@pytest.mark.parametrize("answer, question", [
    ("It is 21°C and sunny in Paris.", "What is the weather in Paris?"),
    ("Paris", "Which is the capital of France, Paris or Lyon?"),
    ("4", "How many words are in 'the quick brown fox'?"),
    ("I will use a map next time.", "Where is Paris?"),   # no tool is named
])
def test_a_real_answer_passes(answer, question):
    assert answer_problem(answer, question, ["weather", "tell-joke"]) is None


# -- a template's decision policy -----------------------------------------------------------

TOOLS = [{"name": f"tool-{i}", "description": f"Does thing {i}.",
          "arguments": [{"name": f"arg{i}", "type": "string", "description": "d"}]} for i in range(6)]


def agent_terms(history: list[dict]) -> dict[str, str]:
    return {"question": json.dumps("Q?"), "tools": json.dumps(TOOLS), "context": '""',
            "tool_names": json.dumps(", ".join(t["name"] for t in TOOLS)), "history": json.dumps(history)}


def step(observation: str) -> dict:
    return {"thought": "", "action": "tool-5", "arguments": {"arg5": "x"}, "observation": observation}


SCHEMA = ds.decision_schema((t["name"], {"type": "object", "properties": {}}) for t in TOOLS)


def actions(schema: dict) -> list[str]:
    return [a["properties"]["action"]["const"] for a in schema["anyOf"]]


def test_bootstrap_first_step_lists_every_tool_and_must_call_one():
    r = bootstrap_prompts().render("agent-react", agent_terms([]), SCHEMA)
    for t in TOOLS:  # every tool, not the first two
        assert f"- {t['name']}: Does thing" in r.prompt and f'"{t["arguments"][0]["name"]}" (string)' in r.prompt
    assert "Question: Q?" in r.prompt
    assert actions(json.loads(r.properties["schema"])) == [t["name"] for t in TOOLS]
    assert "stop" not in r.properties and "prefix" not in r.properties


def test_bootstrap_answers_with_a_successful_result_without_the_llm():
    r = bootstrap_prompts().render("agent-react", agent_terms([step(" It is sunny.\n")]), SCHEMA)
    assert json.loads(r.direct) == {"action": "final-answer", "answer": "It is sunny."}


def test_bootstrap_asked_for_a_call_alone_after_a_result_gets_the_models_call():
    # The next request of a question that makes several: the agent's schema holds one tool and no
    # answer, and the result of the first is no call of the second.
    only = ds.narrow(ds.decision_schema([(TOOLS[1]["name"], {"type": "object", "properties": {}})]), answer=False)
    r = bootstrap_prompts().render("agent-react", agent_terms([step("It is sunny.")]), only)
    assert r.direct is None and actions(json.loads(r.properties["schema"])) == [TOOLS[1]["name"]]


def test_bootstrap_after_an_error_shows_it_and_allows_every_step():
    r = bootstrap_prompts().render("agent-react", agent_terms([step("Error: bad city")]), SCHEMA)
    assert r.direct is None
    assert 'Step 1: {"action": "tool-5", "args": {"arg5": "x"}} gave: <tool-data>Error: bad city</tool-data>' in r.prompt
    assert actions(json.loads(r.properties["schema"])) == [*(t["name"] for t in TOOLS), "final-answer"]


def test_bootstrap_without_a_schema_is_the_react_text_template():
    # An upstream agent sends no schema: it gets the ReAct text form it parses.
    r = bootstrap_prompts().render("agent-react", agent_terms([]))
    assert r.template.id == "agent-react-text" and "schema" not in r.properties
    assert "Final Answer:" in r.prompt and json.loads(r.properties["stop"])


def policy_set(decision: object, extra: dict | None = None) -> PromptSet:
    templates = {"d": {"prompt": "Q: {{question}}", "decision": decision}, **(extra or {})}
    values = {f"template.{k}": json.dumps(v) for k, v in templates.items()}
    values["template-index"] = json.dumps(list(templates))
    return PromptSet.from_config(values)


@pytest.mark.parametrize("policy, after, direct, names", [
    ({"after-result": "answer"}, [step("ok")], None, ["final-answer"]),
    ({"after-result": "any"}, [step("ok")], None, [*(t["name"] for t in TOOLS), "final-answer"]),
    ({"first-step": "any"}, [], None, [*(t["name"] for t in TOOLS), "final-answer"]),
    (True, [step("")], None, [*(t["name"] for t in TOOLS), "final-answer"]),
    ({"after-result": "observation"}, [step("")], None, [*(t["name"] for t in TOOLS), "final-answer"]),
])
def test_policies_narrow_the_schema_as_they_say(policy, after, direct, names):
    r = policy_set(policy).render("d", agent_terms(after), SCHEMA)
    assert r.direct is direct and actions(json.loads(r.properties["schema"])) == names


def test_a_template_without_a_policy_ignores_the_schema():
    values = {"template.t": json.dumps({"prompt": "Q: {{question}}"}), "template-index": '["t"]'}
    r = PromptSet.from_config(values).render("t", agent_terms([]), SCHEMA)
    assert "schema" not in r.properties


@pytest.mark.parametrize("policy, problem", [
    ("yes", "must be a JSON object"),
    ({"first-step": "never"}, "first-step must be one of"),
    ({"after-result": "guess"}, "after-result must be one of"),
    ({"text-template": "d"}, "must name another template"),
    ({"bogus": 1}, "unknown field(s) bogus"),
])
def test_a_bad_policy_is_reported_on_its_template(policy, problem):
    ps = policy_set(policy)
    assert problem in ps.errors["d"]
    with pytest.raises(PromptError, match="decision"):
        ps.render("d", agent_terms([]), SCHEMA)


def test_a_missing_text_template_is_named_when_a_request_needs_it():
    ps = policy_set({"text-template": "gone"})
    assert ps.errors == {}
    with pytest.raises(PromptError, match="text-template 'gone'.*not defined"):
        ps.render("d", agent_terms([]))
    assert ps.render("d", agent_terms([]), SCHEMA).properties["schema"]   # with a schema it is not needed


# -- streaming an answer only once it cannot be refused ------------------------------------

def gate_run(question: str, chunks: list[str]) -> tuple[list[str], str, bool]:
    from trustgraph.agent.react.decisions import AnswerGate
    gate = AnswerGate(question)
    sent = [gate.feed(c) for c in chunks]
    return sent, gate.finish(), gate.released


def test_a_real_answer_streams_once_it_is_clearly_one():
    chunks = ["It is ", "21°C and sunny in Paris, ", "with a light breeze ", "from the west."]
    sent, rest, released = gate_run("What is the weather in Paris?", chunks)
    assert released and sent[0] == "" and "".join(sent) + rest == "".join(chunks)
    assert sent[-1] == "from the west."   # after release, chunks pass at once


@pytest.mark.parametrize("chunks", [
    ["I will use the weather ", "tool to find the weather in Paris ", "and tell you what it says."],
    ["What is the ", "weather in Paris"],
    ["   "],
])
def test_a_refusable_answer_is_never_released_while_streaming(chunks):
    sent, rest, released = gate_run("What is the weather in Paris?", chunks)
    assert not released and not any(sent) and rest == "".join(chunks)


def test_the_start_of_a_reply_tells_json_from_react_text():
    from trustgraph.agent.react.prompting import is_json as _is_json
    assert _is_json('{"action"') is True and _is_json('  \n{') is True
    assert _is_json("```json\n{") is True and _is_json("```\nThought:") is False
    assert _is_json("Thought: x") is False
    for undecided in ("", "  ", "`", "``", "```json", "```json\n  "):
        assert _is_json(undecided) is None


def test_tools_that_share_words_with_the_question_are_listed_first_without_the_model(monkeypatch):
    from types import SimpleNamespace as T

    from trustgraph.catalog import embedding
    from trustgraph.catalog.ranking import rank
    monkeypatch.setenv(embedding.RANKER_ENV, embedding.WORDS)
    embedding.reset()
    monkeypatch.setattr(embedding, "_loaded", embedding._loaded)

    def by_relevance(question, tools):
        return [r.tool for r in rank(question, tools)]
    arg = T(name="topic", description="The topic")
    joke = T(name="tell-joke", description="Tell a joke on a given topic", arguments=[arg])
    dad = T(name="tell-dad-joke", description="Tell a groan-worthy dad joke about a given topic", arguments=[arg])
    weather = T(name="weather", description="Current weather in a city",
                arguments=[T(name="city", description="The city")])
    names = lambda q, tools: [t.name for t in by_relevance(q, tools)]  # noqa: E731
    assert names("Tell me a dad joke about dogs", [joke, dad, weather]) == ["tell-dad-joke", "tell-joke", "weather"]
    # A tie on "joke": the more specific tool (fewer words of its own) first, in either config order.
    assert names("Tell me a joke about cats", [dad, joke, weather])[0] == "tell-joke"
    assert names("What is the weather in Paris?", [dad, joke, weather])[0] == "weather"
    assert names("Hello there", [dad, weather, joke]) == ["tell-dad-joke", "weather", "tell-joke"]
    embedding.reset()


def test_a_schema_too_big_for_a_message_property_is_not_sent(caplog):
    from types import SimpleNamespace as T

    from trustgraph.agent.react.agent_manager import MAX_SCHEMA_CHARS, AgentManager
    from trustgraph.agent.react.grounding import Said
    schema = {"type": "object", "properties": {"text": {"type": "string", "description": "x" * 200}}}
    few = [T(name=f"tool-{i}", schema=schema, arguments=(), description="") for i in range(3)]
    many = [T(name=f"tool-{i}", schema=schema, arguments=(), description="") for i in range(MAX_SCHEMA_CHARS // 200)]
    manager = AgentManager()
    said = Said([], [])
    assert json.loads(manager._schema_property(few, said)["decision-schema"])["anyOf"]
    assert manager._schema_property(many, said) == {} and manager._schema_property(many, said) == {}
    assert sum("steps go without it" in r.message for r in caplog.records) == 1   # said once


def test_the_llm_is_asked_to_score_every_action_the_agent_offered():
    # Narrowed to the tools on the first step, yet the answer is scored too: how much the model
    # would rather have answered itself is part of how sure it was of a tool.
    r = policy_set({"first-step": "tool"}).render("d", agent_terms([]), SCHEMA)
    assert actions(json.loads(r.properties["schema"])) == [t["name"] for t in TOOLS]
    asked = json.loads(r.properties["score-choices"])
    assert asked == {"field": "action", "options": [*(t["name"] for t in TOOLS), "final-answer"]}
    # A template that asks for ReAct text: scored where the reply first names one of them.
    values = {"template.t": json.dumps({"prompt": "Q: {{question}}"}), "template-index": '["t"]'}
    text = PromptSet.from_config(values).render("t", agent_terms([]), SCHEMA).properties
    assert json.loads(text["score-choices"]) == {**asked, "field": "*"} and "schema" not in text
    # An upstream agent sends no schema: nothing is offered, so nothing is scored.
    assert "score-choices" not in PromptSet.from_config(values).render("t", agent_terms([])).properties


def test_an_upstream_agents_thousands_of_tools_are_cut_to_what_fits():
    many = [{"name": f"tool-{i}", "description": "x" * 2400, "arguments": []} for i in range(2000)]
    terms = {**agent_terms([]), "tools": json.dumps(many), "question": json.dumps("what does tool-7 do?")}
    values = {"template.t": json.dumps({"prompt": "{% for t in tools %}{{ t.name }} {% endfor %}"}),
              "template-index": '["t"]'}
    # The service cuts the list before the render (outside the template's budget), as it does for
    # every request; the template then renders what fits.
    from trustgraph.prompt.template.rendering import fit_tool_terms
    r = PromptSet.from_config(values).render("t", fit_tool_terms(terms))
    assert r.prompt.split()[0] == "tool-7" and len(r.prompt.split()) < 10
