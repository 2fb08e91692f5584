"""The tool catalog's descriptors: every error names descriptor, field and reason."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from trustgraph.catalog import (
    CatalogTool,
    ConfigParam,
    DescriptorError,
    ToolArgument,
    ToolServiceDescriptor,
    build_catalog,
)
from trustgraph.topics import TopicError, to_pulsar

EXAMPLES = Path(__file__).resolve().parents[2] / "config-examples"

REQ = "non-persistent://tg/request/joke"
RESP = "non-persistent://tg/response/joke"

# Passed as a field value to leave the field out of the descriptor.
_DROP = object()


def svc(**overrides: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "id": "joke-service",
        "request-queue": REQ,
        "response-queue": RESP,
        "config-params": [{"name": "style", "required": False}],
    }
    data.update(overrides)
    return {k: v for k, v in data.items() if v is not _DROP}


def tool(**overrides: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "type": "tool-service",
        "name": "tell-joke",
        "description": "Tell a joke on a given topic",
        "service": "joke-service",
        "style": "pun",
        "arguments": [
            {"name": "topic", "type": "string", "description": "The topic for the joke"}
        ],
    }
    data.update(overrides)
    return {k: v for k, v in data.items() if v is not _DROP}


def j(data: Any) -> str:
    return json.dumps(data)


def resolve_tool_services(services: dict[str, Any], tools: dict[str, Any]
                          ) -> tuple[dict[str, CatalogTool], list[DescriptorError]]:
    """The catalog of these sections: its usable tools by key, and every problem."""
    catalog = build_catalog({"tool-service": services, "tool": tools})
    return {t.key: t for t in catalog.tools.values()}, list(catalog.errors)


def parse_tool_service(key: str, raw: Any) -> ToolServiceDescriptor | DescriptorError:
    """One service descriptor, or its first problem."""
    catalog = build_catalog({"tool-service": {key: raw}})
    return catalog.services[key] if key in catalog.services else catalog.errors[0]


def parse_tool(key: str, raw: Any, services: dict[str, ToolServiceDescriptor]) -> CatalogTool | DescriptorError:
    """One tool against these (valid) services, or its first problem."""
    resolved, errors = resolve_tool_services(
        {k: s.model_dump(by_alias=True) for k, s in services.items()}, {key: raw})
    return resolved[key] if key in resolved else errors[0]


def is_valid_queue(queue: str) -> bool:
    try:
        to_pulsar(queue)
    except TopicError:
        return False
    return True


def only_error(errors: list[DescriptorError]) -> DescriptorError:
    assert len(errors) == 1, [str(e) for e in errors]
    return errors[0]


def assert_error(
    err: DescriptorError, kind: str, key: str, field: str, reason_part: str
) -> None:
    assert isinstance(err, DescriptorError), err
    assert err.kind == kind
    assert err.key == key
    assert err.field == field
    assert reason_part in err.reason, err.reason
    text = str(err)
    assert text.startswith(f"{kind}/{key}: field '{field}': ")
    assert reason_part in text


# --------------------------------------------------------------------------
# Happy paths
# --------------------------------------------------------------------------


def test_one_service_two_tools_with_different_styles() -> None:
    resolved, errors = resolve_tool_services(
        {"joke-service": j(svc())},
        {
            "tell-joke": j(tool()),
            "tell-dad-joke": j(tool(name="tell-dad-joke", style="dad-joke")),
        },
    )
    assert errors == []
    assert set(resolved) == {"tell-joke", "tell-dad-joke"}
    pun, dad = resolved["tell-joke"], resolved["tell-dad-joke"]
    assert isinstance(pun, CatalogTool)
    assert pun.config == {"style": "pun"}
    assert dad.config == {"style": "dad-joke"}
    assert dad.name == "tell-dad-joke"
    for r in (pun, dad):
        assert r.service.id == "joke-service"
        assert r.service.request_queue == REQ
        assert r.service.response_queue == RESP
        assert list(r.arguments) == [
            ToolArgument(name="topic", type="string", description="The topic for the joke")
        ]
        assert r.descriptor.group is None and r.state is None and r.descriptor.applicable_states is None


def test_bare_string_config_params_are_optional() -> None:
    desc = parse_tool_service("rag", j(svc(id="rag", **{"config-params": ["collection", "limit"]})))
    assert isinstance(desc, ToolServiceDescriptor)
    assert list(desc.config_params) == [ConfigParam(name="collection"), ConfigParam(name="limit")]
    assert all(not p.required for p in desc.config_params)

    resolved = parse_tool("customers", j(tool(service="rag", collection="customers")), {"rag": desc})
    assert isinstance(resolved, CatalogTool)
    assert resolved.config == {"collection": "customers"}


def test_mixed_object_and_bare_config_params() -> None:
    desc = parse_tool_service(
        "s", j(svc(**{"config-params": ["a", {"name": "b", "required": True}]}))
    )
    assert isinstance(desc, ToolServiceDescriptor)
    assert [(p.name, p.required) for p in desc.config_params] == [("a", False), ("b", True)]


def test_extra_tool_field_not_declared_by_service_is_not_config() -> None:
    resolved, errors = resolve_tool_services(
        {"joke-service": j(svc())},
        {"tell-joke": j(tool(colour="blue", mood={"x": 1}))},
    )
    assert errors == []
    assert resolved["tell-joke"].config == {"style": "pun"}


def test_optional_param_absent_gives_empty_config() -> None:
    resolved, errors = resolve_tool_services(
        {"joke-service": j(svc())}, {"t": j(tool(style=_DROP))}
    )
    assert errors == []
    assert resolved["t"].config == {}


def test_non_string_config_values_pass_through() -> None:
    desc = parse_tool_service("s", j(svc(**{"config-params": ["limit", "filters"]})))
    assert isinstance(desc, ToolServiceDescriptor)
    r = parse_tool("t", j(tool(service="s", limit=5, filters={"lang": "en"})), {"s": desc})
    assert isinstance(r, CatalogTool)
    assert r.config == {"limit": 5, "filters": {"lang": "en"}}


def test_generic_form_queue_accepted() -> None:
    desc = parse_tool_service(
        "s", j(svc(**{"request-queue": "q0/tg/request/joke", "response-queue": "q2/acme/ns/out"}))
    )
    assert isinstance(desc, ToolServiceDescriptor)
    assert desc.request_queue == "q0/tg/request/joke"
    assert desc.response_queue == "q2/acme/ns/out"


def test_2_11_queue_names_accepted_and_called_on_2_11s_topics() -> None:
    # A descriptor written for an upstream 2.11 deployment names its queues in 2.11's form.
    catalog = build_catalog({
        "tool-service": {"joke-service": j(svc(**{"request-queue": "request:tg:joke",
                                                  "response-queue": "response:tg:joke"}))},
        "tool": {"tell-joke": j(tool())}})
    assert catalog.errors == ()
    desc = catalog.services["joke-service"]
    assert (desc.request_queue, desc.response_queue) == ("request:tg:joke", "response:tg:joke")
    # The client is keyed by the Pulsar topics, the very ones a 2.1-style descriptor names.
    assert desc.queues == (REQ, RESP)
    assert "tell-joke" in catalog.tools


def test_a_2_11_queue_of_an_unknown_class_names_the_field() -> None:
    err = parse_tool_service("s", j(svc(**{"request-queue": "rpc:tg:joke"})))
    assert_error(err, "tool-service", "s", "request-queue", "unknown queue class 'rpc'")


def test_2_11_names_of_the_framework_topics_are_refused() -> None:
    for queue, what in (("request:tg:config", "config-svc's requests"),
                        ("notify:tg:config", "the framework's notify namespace, tg/notify"),
                        ("notify:tg:tool-service-announce", "the tool-service announcements (2.11 wire)")):
        catalog = build_catalog({"tool-service": {"s": j(svc(**{"request-queue": queue}))}})
        err = next(e for e in catalog.errors if e.kind == "tool-service")
        assert_error(err, "tool-service", "s", "request-queue", f"is a topic of the framework itself ({what})")


@pytest.mark.parametrize(
    "queue",
    [
        "persistent://tg/flow/agent:default",
        "non-persistent://acme/tools/x",
        "q1/tg/request/joke",
        "request:tg:joke",
        "flow:tg:joke:default",
    ],
)
def test_valid_queues(queue: str) -> None:
    assert is_valid_queue(queue)


@pytest.mark.parametrize(
    "queue",
    [
        "",
        "joke",
        "tg/request/joke",
        "http://tg/request/joke",
        "persistent://tg/request",
        "persistent://tg//joke",
        "persistent://tg/request/a/b",
        "q3/tg/request/joke",
        "q0/tg/request",
        "non-persistent://tg/request/jo ke",
        "rpc:tg:joke",
        "request:tg",
        "request:tg:a/b",
    ],
)
def test_invalid_queues(queue: str) -> None:
    assert not is_valid_queue(queue)


def test_missing_id_uses_key_and_mismatch_is_allowed() -> None:
    no_id = parse_tool_service("joke-service", j(svc(id=_DROP)))
    assert isinstance(no_id, ToolServiceDescriptor)
    assert no_id.id == "joke-service"

    resolved, errors = resolve_tool_services(
        {"joke-service": j(svc(id="jokes-v2"))}, {"t": j(tool())}
    )
    assert errors == []
    # Tools find services by config key; the id is reported as written.
    assert resolved["t"].service.id == "jokes-v2"


def test_service_extra_fields_ignored() -> None:
    desc = parse_tool_service("s", j(svc(owner="team-x", version=3)))
    assert isinstance(desc, ToolServiceDescriptor)
    assert not hasattr(desc, "owner")


def test_group_state_applicable_states_kept() -> None:
    resolved, errors = resolve_tool_services(
        {"joke-service": j(svc())},
        {"t": j(tool(group=["fun"], state="joked", **{"applicable-states": ["*"]}))},
    )
    assert errors == []
    r = resolved["t"]
    assert (r.descriptor.group, r.state, r.descriptor.applicable_states) == (["fun"], "joked", ["*"])


def test_every_tool_type_is_resolved_beside_tool_services() -> None:
    # One catalog for every type: the other types are checked too (the old
    # tool-service resolver skipped them and left them to a second checker).
    resolved, errors = resolve_tool_services(
        {"joke-service": j(svc())},
        {
            "kq": j({"type": "knowledge-query", "name": "kq", "description": "d"}),
            "mcp": j({"type": "mcp-tool", "name": "m", "mcp-tool": "x"}),
            "garbage": "{not json",
            "t": j(tool()),
        },
    )
    assert set(resolved) == {"kq", "t"}
    assert {(e.key, e.field) for e in errors} == {("garbage", "(json)"), ("mcp", "mcp-tool")}


# One descriptor of each tool type, as small as it may be (with what it refers to).
EVERY_TYPE = {
    "knowledge-query": {"type": "knowledge-query", "name": "kq", "description": "Graph"},
    "text-completion": {"type": "text-completion", "name": "tc", "description": "Ask the LLM"},
    "mcp-tool": {"type": "mcp-tool", "name": "mt", "description": "Remote", "mcp-tool": "remote"},
    "prompt": {"type": "prompt", "name": "pr", "description": "Template", "template": "t"},
    "structured-query": {"type": "structured-query", "name": "sq", "description": "Rows"},
    "row-embeddings-query": {"type": "row-embeddings-query", "name": "re", "description": "Similar rows"},
    "tool-service": tool(),
}


def test_every_type_in_the_table_has_a_descriptor_here() -> None:
    from trustgraph.base.descriptors.models import TOOL_TYPES

    assert set(EVERY_TYPE) == set(TOOL_TYPES)


@pytest.mark.parametrize("kind", sorted(EVERY_TYPE))
def test_examples_on_every_tool_type_reach_the_prompt_and_the_catalog_json(kind: str) -> None:
    examples = ["  Which one fits?  ", "x" * 200, *(f"q{n}" for n in range(8))]   # at the limits
    config = {"tool-service": {"joke-service": j(svc())}, "mcp": {"remote": j({"url": "http://127.0.0.1:1/mcp"})},
              "tool": {"k": j({**EVERY_TYPE[kind], "examples": examples})}}
    catalog = build_catalog(config)
    assert catalog.errors == ()
    (entry,) = catalog.tools.values()
    assert entry.examples == ("Which one fits?", "x" * 200, *(f"q{n}" for n in range(8)))
    assert entry.describe()["examples"] == list(entry.examples)
    assert entry.to_json()["examples"] == list(entry.examples)


def test_example_calls_are_kept_apart_from_the_questions_and_round_trip() -> None:
    """An example call's question is one of the tool's questions (the prompt and mcp-server list those);
    its arguments, checked against the tool's (``"3"`` read as the integer, as a call would), stay with it."""
    examples = ["Got one about owls?", {"arguments": {"topic": "cats"}},
                {"question": "  A dad joke on dogs  ", "arguments": {"topic": "dogs"}}]
    catalog = build_catalog({"tool-service": {"joke-service": j(svc())}, "tool": {"t": j(tool(examples=examples))}})
    assert catalog.errors == ()
    entry = catalog.tools["tell-joke"]
    assert entry.examples == ("Got one about owls?", "A dad joke on dogs")
    assert [(c.arguments, c.question) for c in entry.example_calls] == [({"topic": "cats"}, None),
                                                                        ({"topic": "dogs"}, "A dad joke on dogs")]
    assert entry.describe()["examples"] == ["Got one about owls?", "A dad joke on dogs"]
    listed = entry.to_json()["examples"]
    assert listed == ["Got one about owls?", {"arguments": {"topic": "cats"}},
                      {"arguments": {"topic": "dogs"}, "question": "A dad joke on dogs"}]
    again = build_catalog({"tool-service": {"joke-service": j(svc())}, "tool": {"t": j(tool(examples=listed))}})
    assert again.tools["tell-joke"].descriptor.examples == entry.descriptor.examples


@pytest.mark.parametrize("value", [_DROP, None, []])
def test_no_examples_leave_upstreams_shape_of_the_prompts_tools(value: Any) -> None:
    catalog = build_catalog({"tool-service": {"joke-service": j(svc())}, "tool": {"t": j(tool(examples=value))}})
    entry = catalog.tools["tell-joke"]
    assert entry.examples == ()
    assert set(entry.describe()) == {"name", "description", "arguments"}
    assert entry.to_json()["examples"] == []


def test_argument_defaults() -> None:
    r = parse_tool(
        "t",
        j(tool(arguments=[{"name": "topic"}, {"name": "n", "type": None, "description": None}])),
        {"joke-service": ToolServiceDescriptor.model_validate(svc())},
    )
    assert isinstance(r, CatalogTool)
    assert list(r.arguments) == [ToolArgument(name="topic"), ToolArgument(name="n")]
    assert r.arguments[0].type == "string" and r.arguments[0].description == ""


def test_arguments_optional() -> None:
    services = {"joke-service": ToolServiceDescriptor.model_validate(svc())}
    for value in (_DROP, None, []):
        r = parse_tool("t", j(tool(arguments=value)), services)
        assert isinstance(r, CatalogTool), r
        assert list(r.arguments) == []


def test_accepts_already_decoded_dict() -> None:
    desc = parse_tool_service("joke-service", svc())
    assert isinstance(desc, ToolServiceDescriptor)


def test_config_examples_resolve_cleanly() -> None:
    service_raw = (EXAMPLES / "joke-service.json").read_text()
    tools_raw = {
        "tell-joke": (EXAMPLES / "tell-joke.json").read_text(),
        "tell-dad-joke": (EXAMPLES / "tell-dad-joke.json").read_text(),
    }
    assert json.loads(service_raw) == {
        "id": "joke-service",
        "request-queue": "non-persistent://tg/request/joke",
        "response-queue": "non-persistent://tg/response/joke",
        "config-params": [{"name": "style", "required": False}],
        "announces": True,
    }
    resolved, errors = resolve_tool_services({"joke-service": service_raw}, tools_raw)
    assert errors == []
    assert build_catalog({"tool": tools_raw, "tool-service": {"joke-service": service_raw}}).warnings == ()
    assert resolved["tell-joke"].name == "tell-joke"
    assert resolved["tell-joke"].config == {"style": "pun"}
    assert resolved["tell-dad-joke"].name == "tell-dad-joke"
    assert resolved["tell-dad-joke"].config == {"style": "dad-joke"}
    assert resolved["tell-dad-joke"].description != resolved["tell-joke"].description
    for r in resolved.values():
        assert r.service.request_queue == "non-persistent://tg/request/joke"
        assert r.service.response_queue == "non-persistent://tg/response/joke"
        assert [a.name for a in r.arguments] == ["topic"]


# --------------------------------------------------------------------------
# Service descriptor errors
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "field", "reason"),
    [
        ("{not json", "(json)", "not valid JSON"),
        ("", "(json)", "not valid JSON"),
        ('["a"]', "(json)", "must be a JSON object, got a list"),
        ('"text"', "(json)", "must be a JSON object, got a string"),
        (j(svc(**{"request-queue": _DROP})), "request-queue", "required field is missing"),
        (j(svc(**{"response-queue": _DROP})), "response-queue", "required field is missing"),
        (j(svc(**{"request-queue": ""})), "request-queue", "is not a valid topic"),
        (j(svc(**{"request-queue": "tg/request/joke"})), "request-queue", "is not a valid topic"),
        (
            j(svc(**{"response-queue": "persistent://tg/resp"})),
            "response-queue",
            "'persistent://tg/resp' is not a valid topic",
        ),
        (j(svc(**{"request-queue": 42})), "request-queue", "must be a string, got a number"),
        (j(svc(id="")), "id", "must not be empty"),
        (j(svc(id=7)), "id", "must be a string"),
        (j(svc(**{"config-params": "style"})), "config-params", "must be a list, got a string"),
        (j(svc(**{"config-params": [{"required": True}]})), "config-params[0].name", "required field is missing"),
        (j(svc(**{"config-params": [{"name": ""}]})), "config-params[0].name", "must not be empty"),
        (j(svc(**{"config-params": [3]})), "config-params[0]", "must be an object, got a number"),
        (
            j(svc(**{"config-params": [{"name": "x", "required": "sometimes"}]})),
            "config-params[0].required",
            "must be true or false",
        ),
        (j(svc(**{"config-params": ["style", {"name": "style"}]})), "config-params", "duplicate config param 'style'"),
    ],
)
def test_service_errors(raw: str, field: str, reason: str) -> None:
    err = parse_tool_service("jokes", raw)
    assert_error(err, "tool-service", "jokes", field, reason)  # type: ignore[arg-type]

    resolved, errors = resolve_tool_services({"jokes": raw}, {})
    assert resolved == {}
    assert_error(errors[0], "tool-service", "jokes", field, reason)


def test_snake_case_queue_gets_a_hint() -> None:
    raw = j(svc(**{"request-queue": _DROP, "request_queue": REQ}))
    err = parse_tool_service("jokes", raw)
    assert_error(err, "tool-service", "jokes", "request-queue", "spelled 'request-queue'")  # type: ignore[arg-type]


def test_all_service_problems_reported() -> None:
    raw = j(svc(**{"request-queue": _DROP, "response-queue": "nope"}))
    _, errors = resolve_tool_services({"jokes": raw}, {})
    assert {e.field for e in errors} == {"request-queue", "response-queue"}


def test_pydantic_noise_not_in_reason() -> None:
    err = parse_tool_service("jokes", j(svc(**{"request-queue": "bad"})))
    assert isinstance(err, DescriptorError)
    assert "pydantic" not in str(err)
    assert "Value error" not in str(err)
    assert "errors.pydantic.dev" not in str(err)


# --------------------------------------------------------------------------
# Tool descriptor errors
# --------------------------------------------------------------------------

GOOD_SERVICES = {"joke-service": j(svc())}


@pytest.mark.parametrize(
    ("tool_data", "field", "reason"),
    [
        (tool(name=_DROP), "name", "required field is missing"),
        (tool(name=""), "name", "must not be empty"),
        (tool(name="   "), "name", "must not be empty"),
        (tool(description=_DROP), "description", "required field is missing"),
        (tool(description=""), "description", "must not be empty"),
        (tool(service=_DROP), "service", "required field is missing"),
        (tool(service=""), "service", "must not be empty"),
        (tool(service=["joke-service"]), "service", "must be a string, got a list"),
        (tool(service="jokes"), "service", "unknown tool service 'jokes'"),
        (tool(arguments="topic"), "arguments", "must be a list, got a string"),
        (tool(arguments=["topic"]), "arguments[0]", "must be an object, got a string"),
        (tool(arguments=[{"type": "string"}]), "arguments[0].name", "required field is missing"),
        (tool(arguments=[{"name": ""}]), "arguments[0].name", "must not be empty"),
        (tool(arguments=[{"name": "x", "description": 5}]), "arguments[0].description", "must be a string"),
        (tool(arguments=[{"name": "x"}, {"name": "x"}]), "arguments", "duplicate argument 'x'"),
        (tool(group="fun"), "group", "must be a list, got a string"),
        (tool(group=["fun", 3]), "group[1]", "must be a string, got a number"),
        (tool(state=["a"]), "state", "must be a string, got a list"),
        (tool(**{"applicable-states": "*"}), "applicable-states", "must be a list, got a string"),
        (tool(examples="Tell me a joke"), "examples",
         "must be a list of example questions or calls, got a string"),
        (tool(examples=["Tell me a joke", 3]), "examples[1]",
         'must be a question (a string) or an example call ({"arguments": {...}}), got a number'),
        (tool(examples=[{"question": "Owls?"}]), "examples[0]",
         "an example call needs 'arguments', an object of argument values"),
        (tool(examples=[{"arguments": ["owls"]}]), "examples[0]",
         "an example call needs 'arguments', an object of argument values, got a list"),
        (tool(examples=[{"argument": {"topic": "owls"}}]), "examples[0]",
         "unknown field(s) 'argument' in an example call, which takes 'arguments' and, if you like, "
         "the 'question' they answer"),
        (tool(examples=[{"arguments": {}, "question": " "}]), "examples[0]", "its 'question' must not be empty"),
        (tool(examples=[{"arguments": {"topic": 3, "mood": "x"}}]), "examples[0].arguments",
         "the example call does not fit the tool's arguments: unknown argument(s) 'mood'"),
        (tool(examples=["Owls?", {"arguments": {}}]), "examples[1].arguments",
         "the example call does not fit the tool's arguments: missing argument(s) 'topic'"),
        (tool(examples=["Tell me a joke", "  "]), "examples[1]", "must not be empty"),
        (tool(examples=["x" * 201]), "examples[0]", "is 201 characters long, over the limit of 200"),
        (tool(examples=[f"joke {n}?" for n in range(11)]), "examples",
         "has 11 examples, over the limit of 10; keep the 10 that best show what the tool is for"),
    ],
)
def test_tool_errors(tool_data: dict[str, Any], field: str, reason: str) -> None:
    resolved, errors = resolve_tool_services(GOOD_SERVICES, {"tell-joke": j(tool_data)})
    assert resolved == {}
    assert_error(only_error(errors), "tool", "tell-joke", field, reason)

    services = {"joke-service": ToolServiceDescriptor.model_validate(svc())}
    err = parse_tool("tell-joke", j(tool_data), services)
    assert_error(err, "tool", "tell-joke", field, reason)  # type: ignore[arg-type]


def test_misspelt_type_is_named_with_the_known_ones() -> None:
    err = parse_tool("kq", j(tool(type="tool-servce")), {})
    assert_error(err, "tool", "kq", "type", "unknown tool type 'tool-servce' (known: knowledge-query, ")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("raw", "reason"),
    [("{broken", "not valid JSON"), ("[1, 2]", "must be a JSON object")],
)
def test_parse_tool_unreadable(raw: str, reason: str) -> None:
    err = parse_tool("t", raw, {})
    assert_error(err, "tool", "t", "(json)", reason)  # type: ignore[arg-type]


def test_unknown_service_message_matches_spec_example() -> None:
    _, errors = resolve_tool_services(GOOD_SERVICES, {"tell-joke": j(tool(service="jokes"))})
    assert str(only_error(errors)) == "tool/tell-joke: field 'service': unknown tool service 'jokes'"


def test_missing_required_config_param() -> None:
    services = {"rag": j(svc(id="rag", **{"config-params": [{"name": "collection", "required": True}, "limit"]}))}
    for value in (_DROP, None):
        resolved, errors = resolve_tool_services(
            services, {"customers": j(tool(service="rag", collection=value, limit=3))}
        )
        assert resolved == {}
        assert_error(
            only_error(errors), "tool", "customers", "collection", "required config param 'collection'"
        )
        assert "'rag'" in errors[0].reason


def test_tool_referencing_invalid_service() -> None:
    services = {
        "joke-service": j(svc(**{"request-queue": _DROP})),
        "other": j(svc(id="other")),
    }
    resolved, errors = resolve_tool_services(
        services, {"tell-joke": j(tool()), "fine": j(tool(service="other"))}
    )
    assert set(resolved) == {"fine"}
    assert len(errors) == 2
    svc_err = next(e for e in errors if e.kind == "tool-service")
    assert_error(svc_err, "tool-service", "joke-service", "request-queue", "required field is missing")
    tool_err = next(e for e in errors if e.kind == "tool")
    assert_error(tool_err, "tool", "tell-joke", "service", "service 'joke-service' is invalid")
    assert "request-queue" in tool_err.reason


def test_invalid_json_service_named_in_tool_error() -> None:
    _, errors = resolve_tool_services({"joke-service": "{oops"}, {"t": j(tool())})
    tool_err = next(e for e in errors if e.kind == "tool")
    assert_error(tool_err, "tool", "t", "service", "service 'joke-service' is invalid")
    assert "not valid JSON" in tool_err.reason


def test_all_tool_problems_reported_at_once() -> None:
    _, errors = resolve_tool_services(
        GOOD_SERVICES, {"t": j(tool(name="", service="nope", arguments="x"))}
    )
    assert {e.field for e in errors} == {"name", "service", "arguments"}
    assert all(e.kind == "tool" and e.key == "t" for e in errors)


def test_one_bad_descriptor_never_hides_good_ones() -> None:
    services = {
        "joke-service": j(svc()),
        "broken": "not json at all",
        "rag": j(svc(id="rag", **{"config-params": [{"name": "collection", "required": True}]})),
    }
    tools = {
        "tell-joke": j(tool()),
        "dad": j(tool(name="dad", style="dad-joke")),
        "bad-service": j(tool(name="x", service="broken")),
        "unknown": j(tool(name="y", service="missing")),
        "no-collection": j(tool(name="z", service="rag")),
        "customers": j(tool(name="customers", service="rag", collection="customers")),
        "no-name": j(tool(name=_DROP)),
        "unreadable": "{",
    }
    resolved, errors = resolve_tool_services(services, tools)
    assert set(resolved) == {"tell-joke", "dad", "customers"}
    assert resolved["customers"].config == {"collection": "customers"}
    got = {(e.kind, e.key, e.field) for e in errors}
    assert got == {
        ("tool-service", "broken", "(json)"),
        ("tool", "bad-service", "service"),
        ("tool", "unknown", "service"),
        ("tool", "no-collection", "collection"),
        ("tool", "no-name", "name"),
        ("tool", "unreadable", "(json)"),
    }


def test_descriptor_error_str() -> None:
    err = DescriptorError("tool", "tell-joke", "service", "unknown tool service 'jokes'")
    assert str(err) == "tool/tell-joke: field 'service': unknown tool service 'jokes'"


# --------------------------------------------------------------------------
# MCP entries
# --------------------------------------------------------------------------


def mcp_catalog(entry: Any, tool_ref: str = "weather"):
    tool = {"type": "mcp-tool", "name": "w", "description": "d", "mcp-tool": tool_ref}
    return build_catalog({"mcp": {"weather": j(entry)}, "tool": {"w": j(tool)}})


def test_mcp_entry_as_upstream_writes_it():
    c = mcp_catalog({"url": "http://mcp:9000/mcp", "remote-name": "get_weather", "auth-token": "s3cret"})
    assert c.errors == ()
    server = c.tools["w"].mcp
    assert (server.url, server.remote_name, server.auth_token, server.transport) == (
        "http://mcp:9000/mcp", "get_weather", "s3cret", "streamable-http")
    assert "s3cret" not in repr(server)  # a token never reaches a log line
    assert mcp_catalog({"url": "https://x/sse", "transport": "sse"}).tools["w"].mcp.transport == "sse"


@pytest.mark.parametrize(("entry", "field", "reason"), [
    ({}, "url", "required field is missing"),
    ({"url": "mcp:9000"}, "url", "'mcp:9000' is not an http:// or https:// URL"),
    ({"url": "http://x", "transport": "carrier-pigeon"}, "transport", "must be 'streamable-http' or 'sse'"),
])
def test_mcp_entry_errors_and_the_tools_that_use_it(entry: Any, field: str, reason: str) -> None:
    c = mcp_catalog(entry)
    mcp_err = next(e for e in c.errors if e.kind == "mcp")
    assert_error(mcp_err, "mcp", "weather", field, reason)
    tool_err = next(e for e in c.errors if e.kind == "tool")
    assert_error(tool_err, "tool", "w", "mcp-tool", "MCP service 'weather' is invalid")
    assert c.tools == {}


def test_unknown_mcp_server_is_a_missing_reference() -> None:
    err = only_error(list(mcp_catalog({"url": "http://x"}, tool_ref="elsewhere").errors))
    assert_error(err, "tool", "w", "mcp-tool", "unknown MCP service 'elsewhere' (no config item mcp/elsewhere)")
    assert err.missing_reference


# --------------------------------------------------------------------------
# Upstream 2.1.4 descriptors load unchanged
# --------------------------------------------------------------------------


def test_descriptors_as_upstreams_tg_set_tool_writes_them_load_unchanged() -> None:
    # The fields upstream 2.1.4's tg-set-tool writes, with "number" arguments and
    # group/state filters, one tool per upstream type the agent runs.
    common = {"group": ["research"], "state": "searched", "applicable-states": ["undefined", "searched"]}
    tools = {
        "kb": {"name": "kb", "description": "Query the graph", "type": "knowledge-query",
               "collection": "space", **common},
        "ask": {"name": "ask", "description": "Ask the LLM", "type": "text-completion"},
        "wx": {"name": "weather", "description": "Weather", "type": "mcp-tool", "mcp-tool": "weather",
               "arguments": [{"name": "city", "type": "string", "description": "City"},
                             {"name": "days", "type": "number", "description": "Days ahead"}]},
        "sum": {"name": "summarise", "description": "Summarise", "type": "prompt", "template": "summary",
                "arguments": [{"name": "text", "type": "string", "description": "Text"}]},
        "sq": {"name": "rows", "description": "Structured data", "type": "structured-query",
               "collection": "sales"},
        "joke": tool(),
    }
    catalog = build_catalog({"tool": {k: j(v) for k, v in tools.items()},
                             "tool-service": {"joke-service": j(svc())},
                             "mcp": {"weather": j({"url": "http://mcp:9000/mcp"})}})
    assert catalog.errors == () and catalog.warnings == ()
    assert sorted(catalog.tools) == ["ask", "kb", "rows", "summarise", "tell-joke", "weather"]
    kb = catalog.tools["kb"]
    assert (kb.descriptor.collection, kb.groups, kb.state, kb.applicable_states) == (
        "space", ("research",), "searched", ("undefined", "searched"))
    assert catalog.tools["weather"].schema["properties"]["days"] == {"type": "number", "description": "Days ahead"}
    assert catalog.tools["rows"].arguments[0].name == "question"


# --------------------------------------------------------------------------
# A tool service may not use the framework's own topics
# --------------------------------------------------------------------------


@pytest.mark.parametrize(("queue", "what"), [
    ("persistent://tg/config/config", "the config pushes"),
    ("q2/tg/config/config", "the config pushes"),
    ("non-persistent://tg/request/config", "config-svc's requests"),
    ("non-persistent://tg/config/tool-service-announce", "the tool-service announcements"),
    ("non-persistent://tg/request/agent:default", "agent-manager's 'request' in flow default"),
    ("persistent://tg/config/anything-new", "the framework's config namespace, tg/config"),
    ("q0/tg/config/x", "the framework's config namespace, tg/config"),
])
def test_framework_topics_are_refused(queue: str, what: str) -> None:
    flows = {"agent-manager": j({"default": {"request": "non-persistent://tg/request/agent:default"}})}
    catalog = build_catalog({"tool-service": {"s": j(svc(**{"request-queue": queue}))},
                             "tool": {"t": j(tool(service="s"))}, "active-flow": flows})
    err = next(e for e in catalog.errors if e.kind == "tool-service")
    assert_error(err, "tool-service", "s", "request-queue", f"is a topic of the framework itself ({what})")
    assert catalog.tools == {} and "s" not in catalog.services


def test_topics_beside_the_framework_namespaces_are_a_tool_services_own() -> None:
    for queue in ("persistent://tg/configs/x", "non-persistent://other/config/x", "non-persistent://tg/request/joke"):
        catalog = build_catalog({"tool-service": {"s": j(svc(**{"request-queue": queue}))}})
        assert catalog.errors == () and "s" in catalog.services, queue


def test_an_announced_service_on_a_framework_topic_is_refused_too() -> None:
    announced = {"evil": type("A", (), {"descriptor": j(svc(id="evil", **{"response-queue":
                                                                          "persistent://tg/config/config"})),
                                        "tools": j({"t": {"name": "t", "description": "d"}})})()}
    catalog = build_catalog({}, announced)
    assert catalog.tools == {} and "evil" not in catalog.services
    assert [e.reason.endswith("(announced by the service)") for e in catalog.errors] == [True]


def test_the_feed_follows_every_type_the_catalog_reads() -> None:
    from trustgraph.base.tool_services import catalog_feed
    from trustgraph.catalog import CATALOG_TYPES

    assert catalog_feed.CATALOG_TYPES == CATALOG_TYPES


# --------------------------------------------------------------------------
# keys nothing reads: the tool loads (upstream's keys, a newer version's), with a warning each


def test_a_key_nothing_reads_is_a_warning_naming_the_close_known_one():
    tools = {
        "tell-joke": tool(arguments=_DROP, argument=[{"name": "topic", "type": "string"}], _comment="mine"),
        "style-typo": tool(name="other", stlye="pun"),
        "arg-typo": tool(name="third", arguments=[{"name": "topic", "descripton": "The topic"}]),
        "kb": {"type": "knowledge-query", "name": "kb", "description": "Graph", "arguments": []},
        # The documented spelling of a key read under two ("free-text", also "free_text") is no unknown key.
        "notes": tool(name="notes", arguments=[{"name": "summary", "free-text": True},
                                               {"name": "title", "free_text": False}]),
    }
    catalog = build_catalog({"tool": {k: j(v) for k, v in tools.items()},
                             "tool-service": {"joke-service": j(svc(idempotant=True))}})
    assert catalog.errors == ()
    assert sorted(catalog.tools) == ["kb", "notes", "other", "tell-joke", "third"]   # all of them still load
    assert [a.free_text for a in catalog.tools["notes"].arguments] == [True, False]
    assert catalog.tools["tell-joke"].arguments == ()                     # which is why it is said
    assert [str(w) for w in catalog.warnings] == [
        "tool-service/joke-service: field 'idempotant': unknown key, not read: did you mean 'idempotent'? it "
        "is not a key of a tool-service descriptor",
        "tool/arg-typo: field 'arguments[0].descripton': unknown key, not read: did you mean 'description'? "
        "it is not a key of a tool argument",
        "tool/kb: field 'arguments': unknown key, not read: it is not a key of a 'knowledge-query' tool",
        "tool/style-typo: field 'stlye': unknown key, not read: did you mean 'style'? it is not a key of a "
        "'tool-service' tool, nor a config param of service 'joke-service' (style)",
        "tool/tell-joke: field 'argument': unknown key, not read: did you mean 'arguments'? it is not a key "
        "of a 'tool-service' tool, nor a config param of service 'joke-service' (style)",
    ]



def test_a_misspelled_key_of_a_tool_service_descriptor_is_named_as_a_tool_s_is():
    # Its required keys too: "reqest-queue" was "required field is missing" and nothing more, while
    # a tool's misspelled key got a did-you-mean; and a config param's keys were never checked,
    # where a tool argument's are.
    catalog = build_catalog({"tool-service": {
        "typo": j({"id": "typo", "reqest-queue": "non-persistent://tg/request/t",
                   "response-queue": "non-persistent://tg/response/t"}),
        "param-typo": j(svc(id="param-typo", **{"config-params": ["style", {"name": "tone", "requierd": True}]})),
        "param-name": j(svc(id="param-name", **{"config-params": [{"nme": "style"}]})),
    }})
    assert [str(e) for e in catalog.errors] == [
        "tool-service/param-name: field 'config-params[0].name': required field is missing (found 'nme': "
        "did you mean 'name'?)",
        "tool-service/typo: field 'request-queue': required field is missing (found 'reqest-queue': did you "
        "mean 'request-queue'?)",
    ]
    assert [str(w) for w in catalog.warnings] == [
        "tool-service/param-typo: field 'config-params[1].requierd': unknown key, not read: did you mean "
        "'required'? it is not a key of a config param",
    ]
    # The same words for a tool's required key, and none for a key the model reads for another field.
    broken = build_catalog({"tool-service": {"joke-service": j(svc())},
                            "tool": {"t": j(tool(description=_DROP, descripton="Jokes"))}})
    assert [str(e) for e in broken.errors] == [
        "tool/t: field 'description': required field is missing (found 'descripton': did you mean 'description'?)"]
    other = build_catalog({"tool-service": {"s": j({"id": "s", "response-queue": "non-persistent://tg/response/s"})}})
    assert [str(e) for e in other.errors] == ["tool-service/s: field 'request-queue': required field is missing"]
