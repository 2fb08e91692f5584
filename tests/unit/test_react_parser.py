"""The ReAct reply parser, whole and streamed (trustgraph.agent.react.parser)."""

from __future__ import annotations

import pytest
from trustgraph.agent.react.parser import StreamParser, parse_react, strip_fences
from trustgraph.agent.react.vocabulary import Action, Answer, Final, ReactParseError, Thought

# -- whole replies ---------------------------------------------------------------------


def test_action_with_args():
    r = parse_react('Thought: I need a joke\nAction: tell-joke\nArgs: {"topic": "cats"}')
    assert r == Action("I need a joke", "tell-joke", {"topic": "cats"})


def test_braces_and_quotes_inside_strings():
    r = parse_react('Thought: t\nAction: calc\nArgs: {"expr": "f(x) = {a: \\"}\\"}", "n": 2}\nmore text')
    assert r.arguments == {"expr": 'f(x) = {a: "}"}', "n": 2}


def test_args_on_following_lines_and_nested():
    r = parse_react('Thought: t\nAction: q\nArgs:\n{\n  "a": {"b": [1, 2]},\n  "c": "}"\n}\n')
    assert r.arguments == {"a": {"b": [1, 2]}, "c": "}"}


def test_quoted_and_backticked_action_names():
    for name in ('"tell-joke"', "'tell-joke'", "`tell-joke`", "**tell-joke**"):
        r = parse_react(f'Thought: t\nAction: {name}\nArgs: {{"topic": "x"}}')
        assert r.name == "tell-joke", name


def test_code_fences_around_reply_and_args():
    r = parse_react('```text\nThought: t\nAction: x\nArgs: {"a": 1}\n```')
    assert r == Action("t", "x", {"a": 1})
    r = parse_react('Thought: t\nAction: x\nArgs: ```json\n{"a": 1}\n```')
    assert r.arguments == {"a": 1}
    assert parse_react("```\nThought: t\nFinal Answer: 42\n```") == Final("t", "42")


def test_fence_inside_final_answer_is_kept():
    r = parse_react("Thought: t\nFinal Answer: code:\n```python\nx = 1\n```")
    assert r.answer == "code:\n```python\nx = 1\n```"


def test_thought_is_optional():
    assert parse_react('Action: x\nArgs: {"a": "b"}') == Action("", "x", {"a": "b"})
    assert parse_react("Final Answer: yes") == Final("", "yes")
    # Unlabelled text before the action is the thought.
    assert parse_react("I will look.\nAction: x\nArgs: {}").thought == "I will look."


def test_echoed_thought_label_is_dropped():
    assert parse_react("Thought: Thought: twice\nFinal Answer: a") == Final("twice", "a")


def test_one_line_reply():
    r = parse_react('Thought: I need a joke. Action: tell-joke Args: {"topic": "programming"}')
    assert r == Action("I need a joke.", "tell-joke", {"topic": "programming"})


def test_multiline_thought_and_answer_keep_lines():
    r = parse_react("Thought: first\nsecond\nFinal Answer: line one\nline two")
    assert r == Final("first\nsecond", "line one\nline two")


def test_markers_any_case_at_line_start_and_markdown():
    r = parse_react('thought: t\n**Action:** x\n- args: {"a": 1}')
    assert r == Action("t", "x", {"a": 1})
    assert parse_react("THOUGHT: t\nfinal answer: ok").answer == "ok"


def test_lowercase_word_inside_thought_is_not_a_marker():
    r = parse_react('Thought: my next action: call it\nAction: x\nArgs: {}')
    assert r == Action("my next action: call it", "x", {})


def test_missing_args_means_no_arguments():
    assert parse_react("Thought: t\nAction: now") == Action("t", "now", {})
    assert parse_react("Thought: t\nAction: now\nArgs:") == Action("t", "now", {})
    # A bare JSON object on the line after the action is taken as the Args.
    assert parse_react('Action: x\n{"a": 1}').arguments == {"a": 1}


def test_trailing_observation_is_ignored():
    r = parse_react('Thought: t\nAction: x\nArgs: {"a": 1}\nObservation: made up')
    assert r.arguments == {"a": 1}


@pytest.mark.parametrize("text, reason", [
    ("", "empty"),
    ("```\n```", "empty"),
    ("Hello there", "neither"),
    ("Thought: only thinking", "neither"),
    ("Thought: t\nFinal Answer:   ", "Final Answer is empty"),
    ("Thought: t\nAction:\nArgs: {}", "names no tool"),
    ('Thought: t\nAction: x\nArgs: {"a": 1,}', "not valid JSON"),
    ("Thought: t\nAction: x\nArgs: {'a': 1}", "not valid JSON"),
    ('Thought: t\nAction: x\nArgs: {"a": "unterminated', "not valid JSON"),
    ("Thought: t\nAction: x\nArgs: [1, 2]", "JSON object"),
    ("Thought: t\nAction: x\nArgs: topic=cats", "JSON object"),
])
def test_bad_replies(text, reason):
    with pytest.raises(ReactParseError) as e:
        parse_react(text)
    assert reason in e.value.reason


def test_parse_error_keeps_the_thought():
    with pytest.raises(ReactParseError) as e:
        parse_react('Thought: I will call it\nAction: x\nArgs: {bad}')
    assert e.value.thought == "I will call it"


def test_strip_fences():
    assert strip_fences("```json\nabc\n```") == "abc"
    assert strip_fences("  plain  ") == "plain"
    assert strip_fences("ends with ```") == "ends with ```"


# -- streamed replies ------------------------------------------------------------------


def run_stream(chunks: list[str]):
    p = StreamParser()
    events = []
    for c in chunks:
        events += p.feed(c)
    tail, result = p.finish()
    return events + tail, result


def split_every(text: str, n: int) -> list[str]:
    return [text[i:i + n] for i in range(0, len(text), n)]


STREAM_CASES = [
    'Thought: I need a joke about cats\nAction: tell-joke\nArgs: {"topic": "cats"}',
    "Thought: I know this.\nIt is easy.\nFinal Answer: The answer is 42.\nSecond line.",
    '```\nThought: fenced\nFinal Answer: ok then\n```',
    'Thought: one line. Action: tell-joke Args: {"topic": "x"}',
    "Thought: The Final Answer: is near\nFinal Answer: here",
    "Final Answer: no thought at all",
    "Thought: thinking but no decision",
    "Thought: Act now\nAction: x\nArgs: {}",
    "I think without a label\nFinal Answer: fine",
    "Thought: Thought: echoed\nAction: x\nArgs: {}",
]


@pytest.mark.parametrize("text", STREAM_CASES)
@pytest.mark.parametrize("size", [1, 2, 3, 5, 7, 1000])
def test_stream_chunks_join_to_the_parsed_reply(text, size):
    events, result = run_stream(split_every(text, size))
    try:
        expected = parse_react(text)
    except ReactParseError as e:
        expected = e
    assert type(result) is type(expected)
    thought = "".join(e.content for e in events if isinstance(e, Thought))
    answer = "".join(e.content for e in events if isinstance(e, Answer))
    assert thought == expected.thought
    if isinstance(expected, Final):
        assert answer == expected.answer
    else:
        assert answer == ""
    ends = [e for e in events if isinstance(e, Thought) and e.end]
    # The thought is closed exactly once, by its last chunk, when there was one.
    assert len(ends) == (1 if expected.thought else 0)
    if ends:
        last_thought = [e for e in events if isinstance(e, Thought)][-1]
        assert last_thought.end
    # Thought chunks all come before answer chunks.
    kinds = [type(e) for e in events]
    if Answer in kinds:
        assert Thought not in kinds[kinds.index(Answer):]


def test_stream_forwards_thought_before_the_reply_ends():
    p = StreamParser()
    assert p.feed("Thought: I need") == [Thought("I need", end=False)]
    assert p.feed(" a joke") == [Thought(" a joke", end=False)]
    # "Act" may be the start of "Action:": held back until it is certain.
    assert p.feed("\nAct") == []
    assert p.feed("ion: tell-joke\n") == [Thought("", end=True)]
    assert p.feed('Args: {"topic": "x"}') == []
    tail, result = p.finish()
    assert tail == [] and result == Action("I need a joke", "tell-joke", {"topic": "x"})


def test_stream_answer_chunks_arrive_as_they_come():
    p = StreamParser()
    p.feed("Thought: done\nFinal Answer: ")
    assert p.feed("Hello") == [Answer("Hello", end=False)]
    assert p.feed(" world") == [Answer(" world", end=False)]
    tail, result = p.finish()
    assert tail == [] and result == Final("done", "Hello world")


def test_stream_label_split_across_chunks():
    events, result = run_stream(["Tho", "ught", ":", " hi", "\nFinal ", "Answer: x"])
    assert [e for e in events if isinstance(e, Thought)][0].content == "hi"
    assert result == Final("hi", "x")


def test_stream_bad_json_is_reported_at_the_end():
    events, result = run_stream(split_every('Thought: t\nAction: x\nArgs: {"a": }', 4))
    assert isinstance(result, ReactParseError) and "not valid JSON" in result.reason
    assert "".join(e.content for e in events) == "t"
