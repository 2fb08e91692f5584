"""Prompt templates: config loading, rendering, answer parsing, prefix joining."""

from __future__ import annotations

import json

import pytest
from trustgraph.base.processors.llm_service import StopFilter, cut_at_stop, parse_stop
from trustgraph.prompt.template.templates import (
    DEFAULT_SYSTEM,
    PrefixStream,
    PromptError,
    PromptSet,
    join_prefix,
    parse_json,
    parse_jsonl,
    strip_fences,
)


def config(templates: dict[str, dict], system: str | None = "You are {{role}}.",
           index: list[str] | None = None) -> dict[str, str]:
    values = {f"template.{k}": json.dumps(v) for k, v in templates.items()}
    values["template-index"] = json.dumps(list(templates) if index is None else index)
    if system is not None:
        values["system"] = json.dumps(system)
    return values


def terms(**kw) -> dict[str, str]:
    return {k: json.dumps(v) for k, v in kw.items()}


AGENT = {
    "prompt": "Tools:\n{% for t in tools %}- {{t.name}}: {{t.description}}\n{% endfor %}"
              "{% for k, v in extra.items() %}{{k}}={{v}};{% endfor %}\nQuestion: {{question}}",
    "stop": ["\nObservation"], "prefix": "Thought:",
}


def test_renders_loops_items_and_system_from_json_terms():
    ps = PromptSet.from_config(config({"agent": AGENT}))
    r = ps.render("agent", terms(role="an agent", question="Why?", extra={"a": 1},
                                 tools=[{"name": "kb", "description": "facts"}]))
    assert r.system == "You are an agent."
    assert r.prompt == "Tools:\n- kb: facts\na=1;\nQuestion: Why?"
    assert r.properties == {"stop": json.dumps(["\nObservation"]), "prefix": "Thought:",
                            "prefix-prompt": r.prompt}
    # The request's prompt ends with the turn too, for an LLM service that cannot continue one.
    assert r.request_prompt == "Tools:\n- kb: facts\na=1;\nQuestion: Why?\nThought:"


def test_missing_variable_names_template_and_variable():
    # Strictness is a template's opt-in (upstream renders a missing variable empty).
    ps = PromptSet.from_config(config({"agent": {**AGENT, "strict": True}}))
    with pytest.raises(PromptError) as e:
        ps.render("agent", terms(role="x", tools=[], extra={}))
    assert str(e.value) == "template 'agent': missing variable 'question'"
    with pytest.raises(PromptError, match=r"template 'agent': missing variable 'name'"):
        ps.render("agent", terms(role="x", question="q", extra={}, tools=[{"description": "d"}]))
    with pytest.raises(PromptError, match=r"system template \(rendering 'agent'\): missing variable 'role'"):
        ps.render("agent", terms(question="q", tools=[], extra={}))


def test_a_missing_variable_renders_as_upstream_renders_it():
    # ibis: empty text, false, empty when iterated; chained attributes too.
    ps = PromptSet.from_config(config({"t": {"prompt": "[{{ nope }}][{{ a.b.c }}]{% if nope %}x{% endif %}"
                                                       "{% for i in nope %}y{% endfor %}{{ q }}"}}))
    r = ps.render("t", terms(q="Q"))
    assert r.prompt == "[][]Q" and r.system == "You are ."
    with pytest.raises(PromptError, match="'strict' must be true or false"):
        PromptSet.from_config(config({"t": {"prompt": "x", "strict": "yes"}})).render("t", {})


def test_prompt_jinja2_is_preferred_over_the_common_prompt():
    ps = PromptSet.from_config(config({"t": {"prompt": "both: {{ q }}", "prompt-jinja2": "{{ q | upper }}"}}))
    assert ps.render("t", terms(q="x")).prompt == "X"


def test_optional_variables_and_sandbox():
    ps = PromptSet.from_config(config({
        "opt": {"prompt": "{% if ctx is defined %}[{{ctx}}]{% endif %}{{q}}"},
        "evil": {"prompt": "{{ q.__class__.__mro__ }}"},
    }, system=None))
    assert ps.render("opt", terms(q="x")).prompt == "x"
    assert ps.render("opt", terms(q="x", ctx="c")).system == DEFAULT_SYSTEM
    with pytest.raises(PromptError, match="sandbox"):
        ps.render("evil", terms(q="x"))


def test_unknown_template_bad_terms_and_index_rules():
    ps = PromptSet.from_config(config({"a": {"prompt": "A"}, "b": {"prompt": "B"}}, index=["a", "ghost"]))
    assert set(ps.templates) == {"a", "ghost"}            # only listed ids load
    with pytest.raises(PromptError, match=r"template 'b' is not defined \(templates: a, ghost\)"):
        ps.render("b", {})
    with pytest.raises(PromptError, match="template.ghost is missing"):
        ps.render("ghost", {})
    with pytest.raises(PromptError, match="term 'q' is not JSON"):
        ps.render("a", {"q": "not json"})


def test_broken_templates_are_reported_and_do_not_stop_the_others():
    values = config({
        "ok": {"prompt": "fine"},
        "syntax": {"prompt": "{% for %}"},
        "kind": {"prompt": "x", "response-type": "xml"},
        "schema": {"prompt": "x", "response-type": "json", "schema": {"type": "nope"}},
        "stop": {"prompt": "x", "stop": [1]},
    }, system="S")
    values["template.notjson"] = "{"
    values["template-index"] = json.dumps(["ok", "syntax", "kind", "schema", "stop", "notjson"])
    ps = PromptSet.from_config(values)
    assert ps.render("ok", {}).prompt == "fine"
    assert set(ps.errors) == {"kind", "schema", "stop", "notjson"}   # a template compiles on first use
    with pytest.raises(PromptError, match="^template 'syntax' does not compile: "):
        ps.render("syntax", {})
    assert "does not compile" in ps.errors["syntax"]
    with pytest.raises(PromptError, match="response-type 'xml'"):
        ps.render("kind", {})


def test_invalid_system_falls_back_like_upstream():
    values = config({"a": {"prompt": "A"}})
    values["system"] = "not json"
    assert PromptSet.from_config(values).render("a", {}).system == DEFAULT_SYSTEM


def test_reload_builds_a_new_set_and_keeps_the_old_one_intact():
    old = PromptSet.from_config(config({"a": {"prompt": "v1 {{x}}"}}, system="S"))
    new = PromptSet.from_config(config({"a": {"prompt": "v2 {{x}}"}, "b": {"prompt": "B"}}, system="S"))
    assert old.render("a", terms(x=1)).prompt == "v1 1"
    assert new.render("a", terms(x=1)).prompt == "v2 1"
    assert "b" not in old.templates and new.render("b", {}).prompt == "B"


SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


@pytest.fixture
def json_template():
    return PromptSet.from_config(config({"j": {"prompt": "p", "response-type": "json", "schema": SCHEMA}})).templates["j"]


@pytest.mark.parametrize("text", [
    '{"name": "x"}',
    '```json\n{"name": "x"}\n```',
    'Here you are:\n```\n{"name": "x"}\n```\nAnything else?',
    '  ```JSON\n{"name": "x"}```  ',
])
def test_json_answers_with_and_without_fences(json_template, text):
    assert parse_json(json_template, text) == {"name": "x"}


def test_json_errors_are_clear(json_template):
    with pytest.raises(PromptError, match=r"template 'j': the LLM's answer is not valid JSON .*'oops"):
        parse_json(json_template, "oops, no JSON")
    with pytest.raises(PromptError, match=r"does not match the schema: 'name' is a required property"):
        parse_json(json_template, '{"other": 1}')
    with pytest.raises(PromptError, match=r"does not match the schema: 5 is not of type 'string' \(at /name\)"):
        parse_json(json_template, '```json\n{"name": 5}\n```')


def test_jsonl_skips_bad_and_invalid_lines_and_survives_truncation(json_template):
    text = '```jsonl\n{"name": "a"}\nnot json\n{"other": 1}\n\n{"name": "b"}\n{"name": "c'
    assert parse_jsonl(json_template, text) == [{"name": "a"}, {"name": "b"}]
    assert parse_jsonl(json_template, "") == []


def test_strip_fences():
    assert strip_fences("```python\nx = 1\n```") == "x = 1"
    assert strip_fences("plain") == "plain"
    assert strip_fences("```json\n[1,") == "[1,"


def test_prefix_joining_whole_and_streamed():
    assert join_prefix("Thought:", " I know") == "Thought: I know"
    assert join_prefix("Thought:", "Thought: I know") == "Thought: I know"   # an LLM that ignored it
    assert join_prefix("", "x") == "x"
    for chunks, whole in [
        ([" I", " know"], "Thought: I know"),
        (["Tho", "ught: I", " know"], "Thought: I know"),
        (["Thou"], "Thought:Thou"),
        (["\n", "Final"], "Thought:\nFinal"),
    ]:
        ps = PrefixStream("Thought:")
        out = [ps.feed(c) for c in chunks] + [ps.finish()]
        assert "".join(out) == whole, chunks


def test_stop_strings_whole_and_streamed():
    assert parse_stop(json.dumps(["\nObservation", ""])) == ["\nObservation"]
    assert parse_stop(None) == []
    assert cut_at_stop("a\nObservation: b", ["\nObservation"]) == ("a", True)
    f = StopFilter(["\nObservation"])
    out = [f.feed(c) for c in ["Act", "ion: x\nObs", "ervation: y", "more"]] + [f.finish()]
    assert out == ["Act", "ion: x", "", "", ""] and f.stopped
    f = StopFilter(["\nObservation"])
    assert [f.feed("a\nOb"), f.feed("ey"), f.finish()] == ["a", "\nObey", ""]
    g = StopFilter([])
    assert g.feed("abc") == "abc" and g.finish() == ""


def test_prefix_is_given_back_whole_and_the_replay_is_not():
    # The whole prefix goes back in front of the answer (a streamed answer then
    # reads as the non-streamed one); earlier turns replayed to the LLM go in 'replay'.
    spec = {"prompt": "Q: {{question}}", "prefix": "{% if history %}Thought: again\n{% endif %}Thought:",
            "replay": "{% for s in history %}Thought: {{s.thought}}\nObservation: {{s.obs}}\n{% endfor %}"}
    ps = PromptSet.from_config(config({"r": spec}, system="S"))
    r = ps.render("r", terms(question="q", history=[{"thought": "a", "obs": "b"}]))
    assert r.replay == "Thought: a\nObservation: b\n" and r.prefix == "Thought: again\nThought:"
    assert r.properties["prefix"] == r.replay + r.prefix   # the LLM continues after the replayed turns
    assert r.visible_prefix == r.prefix                    # the caller gets the whole prefix back
    assert ps.render("r", terms(question="q", history=[])).properties["prefix"] == "Thought:"


def test_bootstrap_text_agent_template_loads_and_renders():
    from pathlib import Path
    root = Path(__file__).resolve().parents[2] / "config-examples"
    spec = json.loads((root / "prompt-agent-react-text.json").read_text())
    ps = PromptSet.from_config(config({"agent-react": spec}, system="S"))
    tools = [{"name": "tell-joke", "description": "jokes",
              "arguments": [{"name": "topic", "type": "string", "description": "t"}]}]
    r = ps.render("agent-react", terms(question="Tell me a joke", tools=tools, tool_names="tell-joke",
                                       context="", history=[{"thought": "t", "action": "tell-joke",
                                                             "arguments": {"topic": "x"},
                                                             "observation": "line1\nline2"}]))
    assert "Question: Tell me a joke" in r.prompt and 'Args: {"topic": "example 1"}' in r.prompt
    # After a tool result the replayed turn asks for the final answer ...
    assert r.properties["prefix"].endswith("Observation: <tool-data>line1 line2</tool-data>\nThought: I have the "
                                           "result, so I know the answer\nFinal Answer:")
    assert r.visible_prefix == "Thought: I have the result, so I know the answer\nFinal Answer:"
    assert json.loads(r.properties["stop"]) == ["\nObservation", "\nQuestion:", "\nExample"]
    # ... after an error it lets the model think again.
    r = ps.render("agent-react", terms(question="q", tools=tools, tool_names="tell-joke", context="",
                                       history=[{"thought": "t", "action": "x", "arguments": {},
                                                 "observation": "Error: unknown tool"}]))
    assert r.properties["prefix"].endswith("Observation: <tool-data>Error: unknown tool</tool-data>\nThought:")
    assert r.visible_prefix == "Thought:"


@pytest.mark.parametrize("name", ["prompt-agent-react.json", "prompt-agent-react-text.json"])
def test_bootstrap_common_prompt_renders_in_jinja_too(name):
    # 'prompt' is what upstream's ibis renders (the ReAct text form, in both files); it must stay
    # valid Jinja2 as well (the interop suite loads it into upstream's prompt-template).
    from pathlib import Path
    spec = json.loads((Path(__file__).resolve().parents[2] / "config-examples" / name).read_text())
    common = {k: v for k, v in spec.items() if k not in ("prompt-jinja2", "decision")}
    ps = PromptSet.from_config(config({"agent-react": common}, system="S"))
    r = ps.render("agent-react", terms(question="Q?", tools=[], tool_names="", context="",
                                       history=[{"thought": "t", "action": "a", "arguments": {"x": "1"},
                                                 "observation": "o"}]))
    assert "Question: Q?" in r.prompt and "Observation: o" in r.prompt and "Final Answer" in r.prompt


def test_an_answer_that_repeats_the_prefix_last_lines_gets_only_the_rest_back():
    from trustgraph.prompt.template.templates import PrefixStream, join_prefix
    prefix = "Thought: I know\nFinal Answer:"
    assert join_prefix(prefix, " forty-two") == "Thought: I know\nFinal Answer: forty-two"
    assert join_prefix(prefix, "Final Answer: 42") == "Thought: I know\nFinal Answer: 42"
    assert join_prefix(prefix, "Thought: I know\nFinal Answer: 42") == "Thought: I know\nFinal Answer: 42"
    stream = PrefixStream(prefix)
    assert stream.feed("Fin") == "" and stream.feed("al Answer: 4") == "Thought: I know\nFinal Answer: 4"
    assert stream.feed("2") == "2"


@pytest.mark.parametrize("spec, message", [
    (["not", "an", "object"], "template.t must be a JSON object with a string field 'prompt'"),
    ({"prompt": 5}, "template.t must be a JSON object with a string field 'prompt'"),
    ({"prompt": "x", "prompt-jinja2": 1}, "template 't': 'prompt-jinja2' must be a string"),
    ({"prompt": "x", "stop": ["a", 2]}, "template 't': 'stop' must be a list of strings"),
    ({"prompt": "x", "prefix": ["Thought:"]}, "template 't': 'prefix' must be a string"),
    ({"prompt": "x", "replay": 3}, "template 't': 'replay' must be a string"),
    ({"prompt": "x", "decision": {"first": "tool", "after": "answer"}},
     "template 't': 'decision' has unknown field(s) after, first"),
    ({"prompt": "x", "decision": {"text-template": "t"}},
     "template 't': decision text-template must name another template"),
])
def test_a_bad_template_field_is_named_in_one_line(spec, message):
    """Each field of template.<id> that has the wrong shape is named, with what it must be."""
    assert PromptSet.from_config(config({"t": spec})).errors == {"t": message}


def test_empty_optional_fields_mean_their_defaults_and_unknown_fields_are_ignored():
    ps = PromptSet.from_config(config({"t": {"prompt": "hi", "response-type": "", "stop": "\nObs",
                                             "prefix": None, "decision": False, "object-schema": {}}}))
    t = ps.templates["t"]
    assert (t.error, t.response_type, t.stop, t.prefix, t.decision) == (None, "text", ["\nObs"], "", None)
