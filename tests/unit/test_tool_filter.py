"""Group/state tool filtering as upstream 2.1.4's agent does it, and the registry built from config."""

from __future__ import annotations

import json

import pytest
from trustgraph.agent.react.registry import Tool, build_registry, filter_tools
from trustgraph.base.tool_services.tool_service_client import ToolServiceClients
from trustgraph.catalog import TOOL_TYPES, ToolArgument, build_catalog
from trustgraph.catalog.implementations import BUILDERS, ToolServiceImpl


def catalog_tool(key: str, descriptor: dict):
    catalog = build_catalog({"tool": {key: json.dumps(descriptor)}})
    assert catalog.errors == (), catalog.errors
    return next(iter(catalog.tools.values()))


def tool(name: str, groups=("default",), states=("*",), state=None) -> Tool:
    entry = catalog_tool(name, {"type": "text-completion", "name": name, "group": list(groups),
                                "applicable-states": list(states), "state": state})
    return Tool.of(entry, impl=None)


TOOLS = [
    tool("plain"),
    tool("admin", groups=["admin"]),
    tool("both", groups=["default", "admin"]),
    tool("after-search", states=["searched"]),
    tool("start-only", states=["undefined"]),
]


def names(group, state) -> list[str]:
    return [t.name for t in filter_tools(TOOLS, group, state)]


def test_null_group_means_default():
    assert names(None, None) == ["plain", "both", "start-only"]


def test_empty_group_list_gives_no_tools():
    assert names([], None) == []
    assert names([], "searched") == []


def test_groups_intersect():
    assert names(["admin"], None) == ["admin", "both"]
    assert names(["admin", "default"], None) == ["plain", "admin", "both", "start-only"]


def test_star_group_means_every_group():
    assert names(["*"], "undefined") == ["plain", "admin", "both", "start-only"]


def test_state_defaults_to_undefined_and_filters():
    assert names(None, "") == names(None, "undefined") == ["plain", "both", "start-only"]
    assert names(None, "searched") == ["plain", "both", "after-search"]
    assert names(["*"], "other") == ["plain", "admin", "both"]


def test_tool_groups_are_not_wildcards():
    # "*" is only special when *requested*; a tool in group "*" is just in a group named "*".
    starred = [tool("starred", groups=["*"])]
    assert filter_tools(starred, None, None) == []
    assert [t.name for t in filter_tools(starred, ["*"], None)] == ["starred"]


# -- the registry ------------------------------------------------------------------------

SERVICE = {"id": "joke", "request-queue": "non-persistent://tg/request/j",
           "response-queue": "non-persistent://tg/response/j", "config-params": ["style"]}


def joke_tool(name: str, **extra) -> str:
    return json.dumps({"type": "tool-service", "name": name, "description": "jokes", "service": "joke",
                       "arguments": [{"name": "topic", "type": "string", "description": "t"}], **extra})


def build(tools: dict[str, object], **more):
    config = {"tool": {k: v if isinstance(v, str) else json.dumps(v) for k, v in tools.items()},
              "tool-service": {"joke": json.dumps(SERVICE)}, **more}
    return build_registry(config, ToolServiceClients(pubsub=None))


def errors(reg) -> dict[str, tuple[str, str]]:
    return {e.key: (e.field, e.reason) for e in reg.errors}


def test_every_builtin_type_builds():
    reg = build({
        "kq": {"type": "knowledge-query", "name": "kq", "description": "d", "collection": "c"},
        "tc": {"type": "text-completion", "name": "tc", "description": "d"},
        "mcp": {"type": "mcp-tool", "name": "m", "description": "d", "mcp-tool": "weather",
                "arguments": [{"name": "city", "type": "string", "description": "c"}]},
        "pr": {"type": "prompt", "name": "p", "description": "d", "template": "tpl"},
        "sq": {"type": "structured-query", "name": "sq", "description": "d"},
        "joke": joke_tool("tell-joke", style="pun", timeout=5, group=["fun"], state="told",
                          **{"applicable-states": ["undefined"]}),
    }, mcp={"weather": '{"url": "http://127.0.0.1:9/mcp"}'}, agent={"additional-context": "raw \"text\""})
    assert reg.errors == ()
    assert sorted(reg.tools) == ["kq", "m", "p", "sq", "tc", "tell-joke"]
    assert reg.tools["kq"].arguments == (ToolArgument(name="question", type="string",
                                                          description="The question to ask"),)
    assert reg.tools["kq"].impl.collection == "c"
    assert reg.tools["sq"].impl.collection == "default"
    joke = reg.tools["tell-joke"]
    assert isinstance(joke.impl, ToolServiceImpl) and joke.impl.config == {"style": "pun"}
    assert (joke.timeout, joke.groups, joke.state, joke.applicable_states) == (5.0, ("fun",), "told",
                                                                               ("undefined",))
    assert reg.context == 'raw "text"'
    assert reg.queue_pairs == {("non-persistent://tg/request/j", "non-persistent://tg/response/j")}


@pytest.mark.parametrize("descriptor, field, reason", [
    ("{not json", "(json)", "not valid JSON"),
    ({"type": "magic", "name": "x"}, "type", "unknown tool type 'magic'"),
    ({"type": "text-completion", "description": "d"}, "name", "required"),
    ({"type": "text-completion", "name": "x", "group": "admin"}, "group", "list of strings"),
    ({"type": "text-completion", "name": "x", "applicable-states": [1]}, "applicable-states[0]", "string"),
    ({"type": "text-completion", "name": "x", "state": 3}, "state", "must be a string"),
    ({"type": "text-completion", "name": "x", "timeout": -1}, "timeout", "positive"),
    ({"type": "mcp-tool", "name": "x", "mcp-tool": "nowhere"}, "mcp-tool", "unknown MCP service"),
    ({"type": "prompt", "name": "x"}, "template", "required"),
    ({"type": "prompt", "name": "x", "template": "t", "arguments": [{"type": "string"}]},
     "arguments[0].name", "required"),
    ({"type": "tool-service", "name": "x", "description": "d", "service": "nope"}, "service", "unknown"),
])
def test_a_bad_descriptor_is_reported_and_the_others_load(descriptor, field, reason):
    reg = build({"bad": descriptor, "good": joke_tool("tell-joke")})
    assert list(reg.tools) == ["tell-joke"]
    got_field, got_reason = errors(reg)["bad"]
    assert got_field == field and reason in got_reason, (got_field, got_reason)


def test_duplicate_names_leave_both_out_reported_against_both_keys():
    # Whichever key sorts first must not silently win (else a new tool/aaa-shadow
    # named like an existing tool would replace it).
    reg = build({"a": joke_tool("same"), "b": joke_tool("same"), "c": joke_tool("other")})
    assert list(reg.tools) == ["other"]
    for key, other in (("a", "b"), ("b", "a")):
        field, reason = errors(reg)[key]
        assert field == "name" and f"duplicate tool name 'same' (tool/{other} has it too)" in reason


def test_check_arguments():
    t = catalog_tool("k", {"type": "prompt", "name": "tell-joke", "template": "x",
                           "arguments": [{"name": "topic", "type": "string", "description": "The topic"}]})
    assert t.argument_problem({"topic": "x"}) is None
    bad = t.argument_problem({"subject": "x"})
    assert "unknown argument(s) 'subject'" in bad and "missing argument(s) 'topic'" in bad
    assert '{"topic": "..."}' in bad
    # A tool that declares nothing accepts what it is given.
    free = catalog_tool("free", {"type": "prompt", "name": "free", "template": "x"})
    assert free.argument_problem({"anything": 1}) is None


def test_every_type_the_catalog_hands_out_has_an_implementation():
    # Every tool type upstream 2.1.4's agent runs (row-embeddings-query too) can be called.
    assert set(BUILDERS) == set(TOOL_TYPES)


def test_descriptor_errors_without_an_agent():
    config = {"tool": {"x": json.dumps({"type": "magic", "name": "x"}), "ok": joke_tool("ok")},
              "tool-service": {"joke": json.dumps(SERVICE)}}
    assert [str(e) for e in build_catalog(config).errors] == [
        "tool/x: field 'type': unknown tool type 'magic' (known: knowledge-query, mcp-tool, prompt, "
        "row-embeddings-query, structured-query, text-completion, tool-service)"]


async def test_row_embeddings_query_embeds_then_searches_and_formats_as_upstream():
    from trustgraph.catalog.implementations import BUILDERS as TOOLS
    from trustgraph.catalog.implementations import CallContext
    from trustgraph.schema import (
        EmbeddingsResponse,
        RowEmbeddingsRequest,
        RowEmbeddingsResponse,
        RowIndexMatch,
    )

    class Client:
        def __init__(self, answer):
            self.answer, self.sent, self.started = answer, [], False
            self.request_schema = self.response_schema = None

        async def request(self, record, timeout):
            self.sent.append(record)
            return self.answer

    embed = Client(EmbeddingsResponse(vectors=[[0.1, 0.2]]))
    rows = Client(RowEmbeddingsResponse(matches=[RowIndexMatch(index_name="name", index_value=["Ada", "L"],
                                                               score=0.91234)]))
    clients = {"embeddings-request": embed, "row-embeddings-query-request": rows}
    tool = catalog_tool("r", {"type": "row-embeddings-query", "name": "people", "description": "d",
                              "schema-name": "person", "index-name": "name", "limit": 3})
    impl = TOOLS["row-embeddings-query"](tool, None)
    ctx = CallContext(user="ann", flow=clients.__getitem__, timeout=5.0)
    assert await impl.invoke(ctx, {"query": "ada"}) == "Matching records:\n- name: Ada, L (score: 0.912)"
    assert embed.sent[0].text == "ada"
    assert rows.sent[0] == RowEmbeddingsRequest(vectors=[[0.1, 0.2]], limit=3, user="ann", collection="default",
                                                schema_name="person", index_name="name")
    # The flow's client for these calls carries the row-embeddings records, in the agent too.
    from trustgraph.agent.react.service import CLIENTS
    from trustgraph.catalog.implementations import FLOW_CLIENTS
    assert CLIENTS["row-embeddings-query"] == FLOW_CLIENTS["row-embeddings-query"] == (
        RowEmbeddingsRequest, RowEmbeddingsResponse)
    rows.answer = RowEmbeddingsResponse(matches=[])
    assert await impl.invoke(ctx, {"query": "x"}) == "No matching records found"


def test_the_agents_old_import_paths_still_give_the_tools():
    from trustgraph.agent.react import tools, types
    from trustgraph.catalog import implementations
    assert tools.BUILDERS is implementations.BUILDERS and tools.CallContext is implementations.CallContext
    assert types.CallContext is implementations.CallContext
    # The *Impl names at this path are upstream 2.1.4's shapes (tests/unit/test_compat_agent.py); ours
    # keep theirs in the catalog.
    assert tools.ToolServiceImpl is not implementations.ToolServiceImpl
