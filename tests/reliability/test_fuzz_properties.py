"""Property-based fuzzing: the parsers and decoders that read what others write.

The ReAct parser and the structured decisions read a model's reply; the
descriptor models and the catalog read config anyone can put; the wire codec
reads every message on the bus.  Each may fail only in its documented way
(``ReactParseError``, pydantic's ``ValidationError``, ``SchemaError``; the
catalog never raises), and what it accepts must mean what was written: a
rendered action parses back to itself, a record survives the wire, two tools
with one name are never a silent winner, no service lands on a framework
topic.  Example counts are modest so ``make test`` stays fast; each property
records one row with the number of examples it ran.
"""

from __future__ import annotations

import dataclasses
import json
import re
import types
import typing
import unicodedata
from collections.abc import Callable
from typing import Any

import pydantic
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from trustgraph import schema
from trustgraph.agent.react.decisions import parse_decision
from trustgraph.agent.react.parser import StreamParser, parse_react
from trustgraph.agent.react.vocabulary import Action, Answer, Final, ReactParseError, Thought
from trustgraph.base.formats.decision_schema import FINAL_ACTION
from trustgraph.catalog import TOOL_TYPES, McpServer, ToolServiceDescriptor, build_catalog, check_item
from trustgraph.catalog.data_blocks import neutralise
from trustgraph.schema import SchemaError, decode, encode, from_dict
from trustgraph.topics import (
    ANNOUNCE,
    CONFIG_REQUEST,
    CONFIG_RESPONSE,
    FLOW_REQUEST,
    FLOW_RESPONSE,
    PROBE,
)


def fuzz(
    scenario: Any,
    name: str,
    what: str,
    documented: str,
    examples: int,
    strategy: st.SearchStrategy,
    prop: Callable[[Any], None],
) -> None:
    """Run ``prop`` over ``examples`` draws of ``strategy`` and record the row (FAIL too)."""
    ran = 0

    @settings(
        max_examples=examples, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow]
    )
    @given(strategy)
    def check(value: Any) -> None:
        nonlocal ran
        ran += 1
        prop(value)

    failure: BaseException | None = None
    try:
        check()
    except BaseException as e:  # noqa: BLE001 - recorded as the row's outcome, then raised
        failure = e
    scenario(
        scenario=f"fuzz: {name}",
        load=f"{ran} hypothesis examples ({examples} asked)",
        fault=what,
        expected=f"only {documented}",
        observed="held" if failure is None else f"FAILED: {type(failure).__name__}: {str(failure)[:200]}",
        ok=failure is None,
    )
    if failure is not None:
        raise failure


# -- JSON values ---------------------------------------------------------------------

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=20),
)
json_values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
json_objects = st.dictionaries(st.text(max_size=8), json_values, max_size=5)


# -- the ReAct parser ----------------------------------------------------------------

FRAGMENTS = [
    "Thought:",
    "Action:",
    "Args:",
    "Final Answer:",
    "thought :",
    "**Action**:",
    "- Final answer:",
    "ACTION:",
    "Args :",
    "```",
    "```json\n",
    "\n",
    " ",
    "\t",
    "{",
    "}",
    "[",
    "]",
    '"',
    "'",
    ":",
    "tell-joke",
    '{"topic": "cats"}',
    '{"a": {"b": [1, 2, "}"]}}',
    "Thought: I should",
    " Action: x",
    " Final Answer: done",
    "> ",
    "# ",
    "1" * 40,
    "\\",
    "\u202e",
    "\x00",
]
replies = st.lists(
    st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=12), json_values.map(json.dumps)), max_size=25
).map("".join)
plain = st.text(alphabet="abcdefghijklmnopqrstuvwxyz ABCXYZ0123456789.,!?-'", max_size=40)
tool_names = st.text(alphabet="abcdefghijklmnopqrstuvwxyz-_0123456789", min_size=1, max_size=20)


def _parse(text: str) -> Action | Final | ReactParseError:
    try:
        result = parse_react(text)
    except ReactParseError as e:
        return e
    assert isinstance(result, (Action, Final))
    if isinstance(result, Action):
        assert result.name and isinstance(result.arguments, dict)
    else:
        assert result.answer
    return result


def _streamed_like_whole(case: tuple[str, list[int]]) -> None:
    """Any reply, cut anywhere: the stream decides as the whole does, and its chunks join to it."""
    text, cuts = case
    whole = _parse(text)
    parser = StreamParser()
    events: list[Thought | Answer] = []
    at = 0
    for cut in sorted({min(c, len(text)) for c in cuts}) + [len(text)]:
        events += parser.feed(text[at:cut])
        at = cut
    tail, result = parser.finish()
    events += tail
    assert type(result) is type(whole)
    if not isinstance(whole, ReactParseError):
        assert result == whole
        assert "".join(e.content for e in events if isinstance(e, Thought)) == whole.thought
        if isinstance(whole, Final):
            assert "".join(e.content for e in events if isinstance(e, Answer)) == whole.answer


def _action_round_trip(case: tuple[str, str, dict[str, Any], bool]) -> None:
    thought, name, args, fenced = case
    text = f"Thought: {thought}\nAction: {name}\nArgs: {json.dumps(args)}"
    if fenced:
        text = f"```\n{text}\n```"
    assert parse_react(text) == Action(thought.strip(), name, args)


def _final_round_trip(case: tuple[str, str]) -> None:
    thought, answer = case
    assert parse_react(f"Thought: {thought}\nFinal Answer: {answer}") == Final(
        thought.strip(), answer.strip()
    )


def test_fuzz_react_parser(scenario) -> None:
    fuzz(
        scenario,
        "ReAct parser, any reply cut anywhere",
        "random ReAct-like text (markers, fences, JSON, control characters) streamed in random chunks",
        "ReactParseError; stream and whole agree",
        300,
        st.tuples(replies, st.lists(st.integers(0, 400), max_size=8)),
        _streamed_like_whole,
    )
    fuzz(
        scenario,
        "ReAct parser, rendered actions",
        "an action rendered as ReAct text (fenced or not)",
        "the same action parsed back",
        150,
        st.tuples(plain, tool_names, json_objects, st.booleans()),
        _action_round_trip,
    )
    fuzz(
        scenario,
        "ReAct parser, rendered final answers",
        "a final answer rendered as ReAct text",
        "the same answer parsed back",
        100,
        st.tuples(plain, plain.filter(str.strip)),
        _final_round_trip,
    )


# -- structured decisions ------------------------------------------------------------

decision_objects = st.fixed_dictionaries(
    {},
    optional={
        "action": st.one_of(st.just(FINAL_ACTION), tool_names, json_values),
        "args": st.one_of(json_objects, json_values),
        "answer": json_values,
        "thought": json_values,
    },
)
decision_texts = st.one_of(
    replies,
    decision_objects.map(json.dumps),
    json_values.map(json.dumps),
    decision_objects.map(lambda d: "```json\n" + json.dumps(d) + "\n```"),
    decision_objects.map(json.dumps).map(lambda t: t[: len(t) // 2]),
)


def _decision(text: str) -> None:
    try:
        result = parse_decision(text)
    except ReactParseError:
        return
    assert result is None or isinstance(result, (Action, Final))
    if isinstance(result, Action):
        assert result.name and result.name != FINAL_ACTION and isinstance(result.arguments, dict)


def _decision_round_trip(case: tuple[str, dict[str, Any]]) -> None:
    name, args = case
    assert parse_decision(json.dumps({"action": name, "args": args})) == Action("", name, args)


def test_fuzz_structured_decisions(scenario) -> None:
    fuzz(
        scenario,
        "structured decisions, any reply",
        "random text and JSON objects with random action, args, answer and thought",
        "ReactParseError, or None for text that is not a JSON decision",
        300,
        decision_texts,
        _decision,
    )
    fuzz(
        scenario,
        "structured decisions, rendered calls",
        "a tool call as a JSON decision",
        "the same call parsed back",
        100,
        # A tool's name, never the final answer's action (a tool of that name is left out of decisions).
        st.tuples(tool_names.filter(lambda n: n != FINAL_ACTION), json_objects),
        _decision_round_trip,
    )


# -- descriptor models and the catalog ----------------------------------------------

FRAMEWORK = [
    CONFIG_REQUEST,
    CONFIG_RESPONSE,
    FLOW_REQUEST,
    FLOW_RESPONSE,
    ANNOUNCE,
    PROBE,
    "persistent://tg/config/config",
    "q2/tg/config/config",
    "non-persistent://tg/request/agent:default",
    "non-persistent://tg/response/prompt:default",
]
FLOWS = {
    "agent-manager": json.dumps({"default": {"request": "non-persistent://tg/request/agent:default"}}),
    "prompt": json.dumps({"default": {"response": "non-persistent://tg/response/prompt:default"}}),
}
queues = st.one_of(
    st.sampled_from(
        [
            "non-persistent://tg/request/joke",
            "non-persistent://tg/response/joke",
            "q0/tg/request/weather",
            "persistent://other/ns/t",
            "",
            "joke",
            "q9/a/b/c",
            "persistent://",
            "non-persistent://tg/request/ spaced",
        ]
    ),
    st.sampled_from(FRAMEWORK),
    json_values,
)
names = st.one_of(st.sampled_from(["tell-joke", "weather", " tell-joke ", "", "kb"]), json_values)
services = st.sampled_from(["joke-service", "weather-service", "missing"])
arguments = st.lists(
    st.fixed_dictionaries(
        {"name": st.one_of(st.sampled_from(["topic", "city", ""]), json_values)},
        optional={
            "type": st.one_of(st.sampled_from(["string", "integer", "array", "blob"]), json_values),
            "description": json_values,
            "required": json_values,
            "enum": json_values,
            "items": json_values,
        },
    ),
    max_size=3,
)
tool_objects = st.fixed_dictionaries(
    {"type": st.one_of(st.sampled_from(sorted(TOOL_TYPES)), json_values)},
    optional={
        "name": names,
        "description": st.one_of(st.just("does things"), json_values),
        "service": st.one_of(services, json_values),
        "arguments": st.one_of(arguments, json_values),
        "style": json_values,
        "mcp-tool": st.one_of(st.just("weather"), json_values),
        "template": json_values,
        "group": json_values,
        "state": json_values,
        "applicable-states": json_values,
        "timeout": json_values,
        "collection": json_values,
        "limit": json_values,
        "validate-arguments": json_values,
    },
)
service_objects = st.fixed_dictionaries(
    {"request-queue": queues, "response-queue": queues},
    optional={
        "id": json_values,
        "config-params": st.one_of(
            st.lists(
                st.one_of(
                    st.just("style"),
                    st.fixed_dictionaries({"name": names, "required": json_values}),
                    json_values,
                ),
                max_size=3,
            ),
            json_values,
        ),
        "idempotent": json_values,
        "timeout": json_values,
    },
)
mcp_objects = st.fixed_dictionaries(
    {"url": st.one_of(st.just("http://127.0.0.1:1/mcp"), json_values)},
    optional={"remote-name": json_values, "auth-token": json_values, "transport": json_values},
)


def _item(objects: st.SearchStrategy) -> st.SearchStrategy:
    """A config value: mostly a descriptor's JSON, sometimes anything at all."""
    return st.one_of(
        objects.map(json.dumps), objects.map(json.dumps), json_values.map(json.dumps), st.text(max_size=30)
    )


# Descriptors that are usable as they are, so that clashes between usable tools are common.
usable_tools = st.fixed_dictionaries(
    {
        "type": st.sampled_from(["knowledge-query", "text-completion", "tool-service"]),
        "name": st.sampled_from(["tell-joke", "weather", " tell-joke "]),
        "description": st.just("does things"),
        "service": st.just("joke-service"),
    }
)
usable_services = st.fixed_dictionaries(
    {
        "request-queue": st.sampled_from(["non-persistent://tg/request/joke", *FRAMEWORK[:3]]),
        "response-queue": st.just("non-persistent://tg/response/joke"),
    }
)
configs = st.fixed_dictionaries(
    {
        "tool": st.dictionaries(
            st.sampled_from(["a", "aaa-shadow", "m", "tell-joke", "z"]),
            st.one_of(usable_tools.map(json.dumps), _item(tool_objects)),
            max_size=5,
        ),
        "tool-service": st.dictionaries(
            services, st.one_of(usable_services.map(json.dumps), _item(service_objects)), max_size=3
        ),
        "mcp": st.dictionaries(st.just("weather"), _item(mcp_objects), max_size=1),
        "active-flow": st.just(FLOWS),
    }
)


def _name_of(raw: str) -> str | None:
    try:
        data = json.loads(raw)
    except ValueError:
        return None
    name = data.get("name") if isinstance(data, dict) else None
    return name.strip() if isinstance(name, str) else None


def _catalog(config: dict[str, dict[str, str]]) -> None:
    catalog = build_catalog(config)  # never raises
    reserved = {q for q in FRAMEWORK if "://" in q} | {"persistent://tg/config/config"}
    for sid, svc in catalog.services.items():
        assert not set(svc.queues) & reserved, (sid, svc.queues)
    reported = {(e.kind, e.key) for e in catalog.errors}
    for key in catalog.broken:
        assert ("tool", key) in reported
    usable = {t.key: name for name, t in catalog.tools.items()}
    for key, name in usable.items():
        # Never a silent winner: another key with this name is left out for a fault of its
        # own (reported), never for the clash, which would leave both out.
        for other, raw in config["tool"].items():
            if other != key and _name_of(raw) == name:
                assert other in catalog.broken and ("tool", other) in reported, (key, other, name)
                clash = [e for e in catalog.broken[other].errors if "duplicate tool name" in e.reason]
                assert not clash, (key, other, clash)
        tool = catalog.tools[name]
        if tool.descriptor.type == "tool-service":
            assert tool.descriptor.service in catalog.services
    assert {k for k, _ in reported} <= {"tool", "tool-service", "mcp"}


def _check_item(case: tuple[dict[str, dict[str, str]], str, str, str]) -> None:
    config, kind, key, value = case
    result = check_item(config, kind, key, value)
    assert all(e.key == key and e.kind == kind for e in result.errors)


def _models(case: tuple[str, Any]) -> None:
    kind, data = case
    model = {"tool-service": ToolServiceDescriptor, "mcp": McpServer}.get(kind) or TOOL_TYPES[kind]
    try:
        model.model_validate(data)
    except pydantic.ValidationError:
        pass


def test_fuzz_descriptor_models_and_catalog(scenario) -> None:
    model_kinds = st.sampled_from(["tool-service", "mcp", *sorted(TOOL_TYPES)])
    fuzz(
        scenario,
        "descriptor models",
        "random near-descriptors and any JSON value for every model",
        "pydantic ValidationError",
        300,
        st.tuples(model_kinds, st.one_of(tool_objects, service_objects, mcp_objects, json_values)),
        _models,
    )
    fuzz(
        scenario,
        "catalog build",
        "random configs of tools, services and MCP servers (duplicate names, "
        "framework topics, broken references, garbage values)",
        "reported errors; no exception, no silent "
        "winner of a duplicate name, no service on a framework topic",
        200,
        configs,
        _catalog,
    )
    fuzz(
        scenario,
        "catalog put check",
        "one random item put against a random config",
        "errors against that item only; no exception",
        100,
        st.tuples(
            configs,
            st.sampled_from(["tool", "tool-service", "mcp", "prompt"]),
            st.sampled_from(["a", "joke-service", "weather"]),
            st.one_of(_item(tool_objects), _item(service_objects)),
        ),
        _check_item,
    )


# -- the wire codec ------------------------------------------------------------------

RECORDS = sorted(
    (
        c
        for c in (getattr(schema, n) for n in schema.__all__)
        if isinstance(c, type) and dataclasses.is_dataclass(c)
    ),
    key=lambda c: c.__name__,
)
texts = st.text(max_size=16)
utf8_texts = st.text(alphabet=st.characters(exclude_categories=["Cs"]), max_size=16)


def _values(tp: Any, depth: int) -> st.SearchStrategy:
    """Values of annotation ``tp`` that the codec must carry unchanged."""
    origin = typing.get_origin(tp)
    if origin is typing.Union or origin is types.UnionType:
        (inner,) = [a for a in typing.get_args(tp) if a is not type(None)]
        return st.none() if depth > 2 else st.one_of(st.none(), _values(inner, depth))
    if origin is list:
        (elem,) = typing.get_args(tp) or (Any,)
        return st.lists(_values(elem, depth + 1), max_size=0 if depth > 2 else 3)
    if origin is dict:
        _, value = typing.get_args(tp) or (str, Any)
        return st.dictionaries(texts, _values(value, depth + 1), max_size=0 if depth > 2 else 3)
    if dataclasses.is_dataclass(tp):
        return _records(tp, depth + 1)
    return {
        str: texts,
        int: st.integers(),
        bool: st.booleans(),
        bytes: utf8_texts.map(str.encode),
        float: st.floats(allow_nan=False, allow_infinity=False),
        Any: json_values,
    }[tp]


def _records(cls: type, depth: int = 0) -> st.SearchStrategy:
    hints = typing.get_type_hints(cls)
    return st.builds(
        cls, **{f.name: _values(hints[f.name], depth) for f in dataclasses.fields(cls) if f.init}
    )


def _field_garbage(cls: type) -> st.SearchStrategy:
    """A JSON object with the record's own field names, each holding any value."""
    names = [f.name for f in dataclasses.fields(cls)]
    return st.dictionaries(st.one_of(st.sampled_from(names), texts), json_values, max_size=len(names) + 1)


payloads = st.one_of(
    st.binary(max_size=40), texts.map(str.encode), json_values.map(lambda v: json.dumps(v).encode())
)


def _decode_any(case: tuple[type, bytes | dict[str, Any]]) -> None:
    cls, payload = case
    try:
        record = decode(cls, payload) if isinstance(payload, bytes) else from_dict(cls, payload)
    except SchemaError:
        return
    assert isinstance(record, cls)
    assert decode(cls, encode(record)) == record  # what was accepted goes on the wire unchanged


def _round_trip(record: Any) -> None:
    assert decode(type(record), encode(record)) == record


@pytest.mark.timeout(300)
def test_fuzz_wire_codec(scenario) -> None:
    classes = st.sampled_from(RECORDS)
    assert len(RECORDS) > 40
    fuzz(
        scenario,
        "wire codec, any payload",
        f"random bytes, JSON and field-named objects for each of {len(RECORDS)} record classes",
        "SchemaError; an accepted record re-encodes unchanged",
        400,
        st.one_of(
            st.tuples(classes, payloads), classes.flatmap(lambda c: st.tuples(st.just(c), _field_garbage(c)))
        ),
        _decode_any,
    )
    fuzz(
        scenario,
        "wire codec, round trip",
        f"random records of each of {len(RECORDS)} record classes",
        "the same record after encode and decode",
        300,
        classes.flatmap(_records),
        _round_trip,
    )


# -- the <tool-data> neutraliser -----------------------------------------------------

# What a tool's provider may write to forge the end of its data block: pieces of the tags, brackets
# and gaps, in any order (so one tag's removal may join others into one), disguised by characters
# that show as nothing, combining marks, fullwidth and accented letters.
TAG_PIECES = [
    "<",
    "</",
    "/",
    ">",
    "[",
    "]",
    "(",
    "{",
    "tool",
    "data",
    "to",
    "ol",
    "da",
    "ta",
    "t",
    "o",
    "l",
    "-",
    "_",
    " ",
    "\n",
    "</tool-data>",
    "<tool-data>",
    "TOOL",
    "Data",
    "x",
    "SYSTEM OVERRIDE",
]
UNSEEN = [
    "\u2062",
    "\u180e",
    "\u034f",
    "\u200b",
    "\u00ad",
    "\u202e",
    "\u2060",
    "\ufeff",
    "\x00",
    "\u0301",
    "\u20dd",
    "\ufe0f",
    "\U000e0041",
]
LOOKALIKE = [
    "\uff1c",
    "\uff0f",
    "\uff1e",
    "\uff54",
    "\uff4f",
    "\u00f4",
    "\u1e0d",
    "\u00e2",
    "\u043e",
    "\u0430",
    "\u2014",
    "\u3008",
]
TAG_FORMS = ["</tool-data>", "<tool-data>", "</tool data>", "[/tool_data]", "< / TOOL-DATA >", "{tool-data}"]

nested_tags = st.recursive(
    st.sampled_from(TAG_FORMS),
    lambda inner: st.tuples(st.sampled_from(TAG_FORMS), st.integers(0, 12), inner).map(
        lambda case: case[0][: case[1]] + case[2] + case[0][case[1] :]
    ),
    max_leaves=6,
)
pieced_tags = st.lists(st.sampled_from(TAG_PIECES + UNSEEN + LOOKALIKE), max_size=40).map("".join)


def _disguised(case: tuple[str, list[tuple[int, str]]]) -> str:
    text, insertions = case
    for at, char in sorted(insertions, reverse=True):
        text = text[:at] + char + text[at:]
    return text


forged_texts = st.tuples(
    st.one_of(nested_tags, pieced_tags),
    st.lists(st.tuples(st.integers(0, 80), st.sampled_from(UNSEEN)), max_size=6),
).map(_disguised)
# How a reader sees text, written independently of the neutraliser: compatibility forms decomposed,
# every character that shows as nothing dropped (marks, format characters, controls), lookalikes
# read as the letter, any case; then a tag is a bracket, a slash or not, and the two words.
_READS_AS = str.maketrans({"\u043e": "o", "\u0430": "a", "\u2014": "-", "\u3008": "<"})
_READ_TAG = re.compile(r"[<\[({][\s_\-]*/?[\s_\-]*tool[\s_\-]*data", re.IGNORECASE)


def _reads_as_tag(text: str) -> bool:
    seen = "".join(
        c
        for c in unicodedata.normalize("NFKD", text)
        if unicodedata.category(c) not in ("Cf", "Mn", "Me", "Cn")
        and (c.isspace() or unicodedata.category(c) != "Cc")
    )
    return _READ_TAG.search(seen.translate(_READS_AS)) is not None


def _no_tag_left(text: str) -> None:
    out = neutralise(text)
    assert not _reads_as_tag(out), (text, out)
    assert neutralise(out) == out


def test_fuzz_data_block_neutraliser(scenario) -> None:
    fuzz(
        scenario,
        "<tool-data> neutraliser, disguised and nested tags",
        "tags nested in tags, tag pieces in any order, with invisible characters, combining marks, "
        "fullwidth, accented and lookalike letters anywhere",
        "text in which nothing reads as a tag, left as it is by a second pass",
        400,
        forged_texts,
        _no_tag_left,
    )
