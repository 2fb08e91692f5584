"""Upstream 2.1.4's flow-side paths on our agent and prompt service (trustgraph.flow_compat.v214).

Code written against upstream's ``trustgraph.agent.react.types`` (``Tool``,
``Argument``, ``Action(observation=)``, ``Final.final``), its
``trustgraph.agent.react.tools`` (``KnowledgeQueryImpl(context, ...)``,
``invoke(**arguments)``), ``trustgraph.agent.tool_filter`` and
``trustgraph.template.prompt_manager.PromptManager``.  The tools call real
flow clients on the in-memory transport, answered by stand-ins.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest
from trustgraph.base import RequestResponseClient
from trustgraph.base.testing import MemoryBroker, Responder, memory_pubsub
from trustgraph.catalog.implementations import FLOW_CLIENTS
from trustgraph.schema import (
    EmbeddingsResponse,
    Error,
    GraphRagQuery,
    GraphRagResponse,
    PromptRequest,
    PromptResponse,
    RowEmbeddingsRequest,
    RowEmbeddingsResponse,
    RowIndexMatch,
    StructuredQueryRequest,
    StructuredQueryResponse,
    ToolRequest,
    ToolResponse,
)

# -- the types ---------------------------------------------------------------------------------------


def test_upstreams_agent_types_beside_ours() -> None:
    from trustgraph.agent.react import types
    from trustgraph.agent.react.types import Action, Argument, Final, Tool
    arg = Argument("topic", "string", "What the joke is about")
    tool = Tool(name="tell-joke", description="Tells a joke", arguments=[arg], implementation=object,
                config={"group": ["fun"]})
    assert tool.arguments[0].name == "topic" and tool.config["group"] == ["fun"]
    action = Action(thought="t", name="tell-joke", arguments={"topic": "cats"}, observation="Meow.")
    assert action.observation == "Meow." and Action("t", "n", {}).observation == ""
    final = Final(thought="done", final="42")
    assert (final.final, final.answer) == ("42", "42") and final == Final("done", "42")
    assert Final(thought="t", answer="a").final == "a"
    # Built on ours: our agent's code takes upstream's as its own.
    from trustgraph.agent.react import vocabulary
    assert isinstance(action, vocabulary.Action) and isinstance(final, vocabulary.Final)
    with pytest.raises(AttributeError):
        types.Nothing  # noqa: B018


# -- the tool filter ---------------------------------------------------------------------------------


def upstream_tool(name: str, **config: Any) -> Any:
    from trustgraph.agent.react.types import Tool
    return Tool(name=name, description="d", arguments=[], implementation=None, config=config)


TOOLS = {
    "plain": upstream_tool("plain"),
    "admin": upstream_tool("admin", group=["admin"]),
    "both": upstream_tool("both", group=["default", "admin"], **{"applicable-states": ["undefined", "done"]}),
    "later": upstream_tool("later", **{"applicable-states": ["done"]}, state="finished"),
    "loose": upstream_tool("loose", group="admin", **{"applicable-states": "done"}),
}


@pytest.mark.parametrize("groups,state,expected", [
    (None, None, ["plain", "both"]),
    (["admin"], None, ["admin", "both"]),
    (["*"], "", ["plain", "admin", "both"]),
    (["*"], "done", ["plain", "admin", "both", "later", "loose"]),
    ([], None, []),
    (["nobody"], "done", []),
])
def test_filter_tools_by_group_and_state(groups, state, expected) -> None:
    from trustgraph.agent.tool_filter import filter_tools_by_group_and_state
    assert list(filter_tools_by_group_and_state(TOOLS, groups, state)) == expected


def test_the_filter_takes_our_registrys_tools_too() -> None:
    from trustgraph.agent.react.registry import build_registry
    from trustgraph.agent.tool_filter import filter_tools_by_group_and_state
    from trustgraph.base.tool_services.tool_service_client import ToolServiceClients
    config = {"tool": {"q": json.dumps({"type": "text-completion", "name": "q", "description": "d",
                                         "group": ["research"]})}}
    tools = dict(build_registry(config, ToolServiceClients(None)).tools)
    assert list(filter_tools_by_group_and_state(tools, ["research"])) == ["q"]
    assert filter_tools_by_group_and_state(tools) == {}


def test_next_state_and_config_checks() -> None:
    from trustgraph.agent.tool_filter import get_next_state, validate_tool_config
    assert get_next_state(TOOLS["later"], "undefined") == "finished"
    assert get_next_state(TOOLS["plain"], "undefined") == "undefined"
    assert get_next_state(object(), "s") == "s"
    validate_tool_config({"group": ["a"], "state": "s", "applicable-states": ["*"]})
    for config, needle in (({"group": "a"}, "'group' field must be a list"), ({"group": [1]}, "group names"),
                           ({"state": 3}, "'state' field must be a string"),
                           ({"applicable-states": "x"}, "'applicable-states' field must be a list"),
                           ({"applicable-states": [None]}, "state names")):
        with pytest.raises(ValueError, match=needle):
            validate_tool_config(config)


# -- the tools, on flow clients ----------------------------------------------------------------------


class Flow:
    """A flow's clients on the in-memory transport, each answered by a stand-in; ``context`` is
    what upstream's agent hands its tools."""

    def __init__(self) -> None:
        self.pubsub = memory_pubsub(MemoryBroker(), "agent")
        self.clients: dict[str, RequestResponseClient] = {}
        self.services: dict[str, Responder] = {}

    async def serve(self, prefix: str, answer: Any) -> Responder:
        request_schema, response_schema = FLOW_CLIENTS[prefix]
        req, resp = f"non-persistent://tg/request/{prefix}", f"non-persistent://tg/response/{prefix}"
        self.services[prefix] = await Responder(self.pubsub, req, resp, request_schema, answer).start()
        self.clients[f"{prefix}-request"] = RequestResponseClient(
            self.pubsub, request_topic=req, response_topic=resp, request_schema=request_schema,
            response_schema=response_schema, subscription=f"agent-{uuid.uuid4()}", timeout=10.0)
        return self.services[prefix]

    def context(self, key: str) -> RequestResponseClient:
        return self.clients[key]

    async def close(self) -> None:
        for client in self.clients.values():
            await client.stop()
        await self.pubsub.close()


@pytest.fixture
async def flow() -> AsyncIterator[Flow]:
    f = Flow()
    yield f
    await f.close()


async def test_knowledge_query_and_text_completion(flow: Flow) -> None:
    from trustgraph.agent.react.tools import KnowledgeQueryImpl, TextCompletionImpl
    rag = await flow.serve("graph-rag", lambda r: [GraphRagResponse(response=f"About {r.query}",
                                                                    end_of_stream=True)])
    assert await KnowledgeQueryImpl(flow.context).invoke(question="cats") == "About cats"
    assert rag.requests[0] == GraphRagQuery(query="cats", user="trustgraph", collection="default")
    await KnowledgeQueryImpl(flow.context, collection="pets").invoke(question="dogs")
    assert rag.requests[1].collection == "pets"
    assert [a.name for a in KnowledgeQueryImpl.get_arguments()] == ["question"]
    prompt = await flow.serve("prompt", lambda r: [PromptResponse(text=f"{r.id}: {r.terms}", end_of_stream=True)])
    assert await TextCompletionImpl(flow.context).invoke(question="hi") == "question: {'question': '\"hi\"'}"
    assert prompt.requests[0] == PromptRequest(id="question", terms={"question": '"hi"'})


async def test_a_service_error_is_a_runtime_error_with_its_message(flow: Flow) -> None:
    from trustgraph.agent.react.tools import KnowledgeQueryImpl
    await flow.serve("graph-rag", lambda r: [GraphRagResponse(error=Error("rag-error", "no graph"),
                                                              end_of_stream=True)])
    with pytest.raises(RuntimeError, match="^no graph$"):
        await KnowledgeQueryImpl(flow.context).invoke(question="q")


async def test_mcp_and_prompt_tools_pass_the_arguments(flow: Flow) -> None:
    from trustgraph.agent.react.tools import McpToolImpl, PromptImpl
    from trustgraph.agent.react.types import Argument
    mcp = await flow.serve("mcp-tool", lambda r: [ToolResponse(text=None, object=r.parameters)])
    args = [Argument("city", "string", "Where")]
    tool = McpToolImpl(flow.context, "weather", args)
    assert tool.get_arguments() == args and McpToolImpl(flow.context, "x").get_arguments() == []
    assert json.loads(await tool.invoke(city="Oslo")) == {"city": "Oslo"}
    assert mcp.requests[0] == ToolRequest(name="weather", parameters='{"city": "Oslo"}')
    prompt = await flow.serve("prompt", lambda r: [PromptResponse(text="ok", end_of_stream=True)])
    assert await PromptImpl(flow.context, "summarise").invoke(text="long", n=3) == "ok"
    assert prompt.requests[0] == PromptRequest(id="summarise", terms={"text": '"long"', "n": "3"})


async def test_structured_and_row_embeddings_queries_ask_as_the_user(flow: Flow) -> None:
    from trustgraph.agent.react.tools import RowEmbeddingsQueryImpl, StructuredQueryImpl
    sq = await flow.serve("structured-query", lambda r: [StructuredQueryResponse(data='{"n": 2}')])
    assert json.loads(await StructuredQueryImpl(flow.context, collection="c", user="ann").invoke(question="n?")) == {
        "n": 2}
    assert sq.requests[0] == StructuredQueryRequest(question="n?", user="ann", collection="c")


    class UserAware:
        """Upstream's agent's context: the request's user on it and on each client it gives."""

        _user = "bob"

        def __call__(self, key: str) -> Any:
            client = flow.context(key)
            client._current_user = self._user
            return client

    await StructuredQueryImpl(UserAware(), user="ann").invoke(question="n?")
    assert (sq.requests[1].user, sq.requests[1].collection) == ("bob", "default")
    del flow.clients["structured-query-request"]._current_user
    await flow.serve("embeddings", lambda r: [EmbeddingsResponse(vectors=[[0.5, 0.25]])])
    match = RowIndexMatch(index_name="name", index_value=["Ada", "L"], text="Ada L", score=0.9123)
    rows = await flow.serve("row-embeddings-query", lambda r: [RowEmbeddingsResponse(matches=[match])])
    tool = RowEmbeddingsQueryImpl(flow.context, "person", index_name="name", limit=3)
    assert await tool.invoke(query="ada") == "Matching records:\n- name: Ada, L (score: 0.912)"
    assert rows.requests[0] == RowEmbeddingsRequest(vectors=[[0.5, 0.25]], limit=3, user="trustgraph",
                                                    collection="default", schema_name="person", index_name="name")
    assert [a.name for a in RowEmbeddingsQueryImpl.get_arguments()] == ["query"]


# -- the prompt manager ------------------------------------------------------------------------------


def prompt_config(**templates: dict[str, Any]) -> dict[str, str]:
    config = {"system": json.dumps("You help {{ name }}."), "template-index": json.dumps(list(templates))}
    config.update({f"template.{k}": json.dumps(v) for k, v in templates.items()})
    return config


SCHEMA = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}


def manager() -> Any:
    from trustgraph.template.prompt_manager import PromptManager
    pm = PromptManager()
    pm.load_config(prompt_config(
        greet={"prompt": "Hello {{ name }}, {{ items|length }} items"},
        count={"prompt": "Count {{ what }}", "response-type": "json", "schema": SCHEMA},
        rows={"prompt": "Rows", "response-type": "jsonl", "schema": SCHEMA}))
    return pm


def test_prompt_manager_loads_and_renders() -> None:
    from trustgraph.template import PromptManager
    assert PromptManager().config.system_template == "Be helpful." and PromptManager().prompts == {}
    pm = manager()
    assert sorted(pm.prompts) == ["count", "greet", "rows"]
    assert (pm.prompts["count"].response_type, pm.prompts["count"].schema) == ("json", SCHEMA)
    assert pm.render("greet", {"name": "Ann", "items": [1, 2]}) == "Hello Ann, 2 items"
    with pytest.raises(RuntimeError, match="ID invalid"):
        pm.render("nope", {})
    with pytest.raises(RuntimeError, match="Error in template: bad"):
        pm.load_config(prompt_config(bad={"prompt": "{% for %}"}))
    assert pm.render("greet", {"name": "B", "items": []}) == "Hello B, 0 items"   # the old config stays


def test_prompt_manager_parses_answers() -> None:
    pm = manager()
    assert pm.parse_json('Here:\n```json\n{"n": 1}\n```') == {"n": 1}
    assert pm.parse_json(' [1, 2] ') == [1, 2]
    with pytest.raises(ValueError):
        pm.parse_json("not json")
    assert pm.parse_jsonl('```jsonl\n{"n": 1}\nbroken\n\n{"n": 2}\n```') == [{"n": 1}, {"n": 2}]


async def test_prompt_manager_invokes_the_llm_and_reads_its_answer() -> None:
    pm = manager()
    asked: list[dict[str, str]] = []

    def llm(answer: str):
        async def call(**request: str) -> str:
            asked.append(request)
            return answer
        return call

    assert await pm.invoke("greet", {"name": "Ann", "items": []}, llm("Hi!")) == "Hi!"
    assert asked[0] == {"system": "You help Ann.", "prompt": "Hello Ann, 0 items"}
    assert await pm.invoke("count", {"what": "x"}, llm('```json\n{"n": 3}\n```')) == {"n": 3}
    with pytest.raises(RuntimeError, match="^JSON parse fail"):
        await pm.invoke("count", {"what": "x"}, llm("three"))
    with pytest.raises(RuntimeError, match="^Schema validation fail: 'n' is a required property"):
        await pm.invoke("count", {"what": "x"}, llm('{"m": 3}'))
    # JSON lines: the lines that parse and match the schema.
    assert await pm.invoke("rows", {}, llm('{"n": 1}\n{"m": 2}\noops\n{"n": 3}')) == [{"n": 1}, {"n": 3}]
    with pytest.raises(KeyError):
        await pm.invoke("nope", {}, llm(""))
