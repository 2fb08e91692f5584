"""Gateway JSON <-> wire record translation (upstream 2.1.4's JSON), routing order and auth."""

from __future__ import annotations

import json
from typing import Any

import pytest
from aiohttp.test_utils import make_mocked_request
from trustgraph.base import PubSub
from trustgraph.gateway.auth import TokenAuth
from trustgraph.gateway.dispatch import Dispatcher, RoutingError
from trustgraph.gateway.tool_services import ToolServices
from trustgraph.gateway.translators import FLOW_KINDS, GLOBAL_KINDS, BadRequest
from trustgraph.schema import (
    AgentResponse,
    AgentStep,
    ConfigResponse,
    ConfigValue,
    EmbeddingsResponse,
    Error,
    FlowResponse,
    GraphRagResponse,
    PromptResponse,
    RowsQueryRequest,
    StructuredQueryResponse,
    TextCompletionResponse,
    ToolResponse,
    decode,
    to_dict,
)

T = {**GLOBAL_KINDS, **FLOW_KINDS}


def wire(kind: str, body: dict[str, Any]) -> dict[str, Any]:
    """The request as it would go on the bus."""
    return to_dict(T[kind].request(body))


# -- requests ---------------------------------------------------------------------------


def test_config_request_passes_fields_and_defaults_the_rest() -> None:
    assert wire("config", {"operation": "get", "keys": [{"type": "t", "key": "k"}]}) == {
        "operation": "get", "keys": [{"type": "t", "key": "k"}], "type": "", "values": []}


def test_flow_request_maps_kebab_case_and_keeps_a_missing_description_null() -> None:
    out = wire("flow", {"operation": "start-flow", "blueprint-name": "bp", "flow-id": "f1",
                        "parameters": {"model": "x", "temperature": 0.5}})
    assert out == {"operation": "start-flow", "blueprint_name": "bp", "blueprint_definition": "",
                   "description": None, "flow_id": "f1", "parameters": {"model": "x", "temperature": 0.5}}
    out = wire("flow", {"operation": "put-blueprint", "blueprint-definition": {"a": 1}, "description": "d"})
    assert json.loads(out["blueprint_definition"]) == {"a": 1} and out["description"] == "d"


def test_agent_request_defaults() -> None:
    assert wire("agent", {"question": "q"}) == {
        "question": "q", "state": None, "group": None, "history": [], "user": "trustgraph", "streaming": False}
    step = {"thought": "t", "action": "a", "arguments": {"x": "1"}, "observation": "o"}
    record = T["agent"].request({"question": "q", "history": [step], "user": "bob", "streaming": True})
    assert record.history == [AgentStep(thought="t", action="a", arguments={"x": "1"}, observation="o")]
    assert record.user == "bob" and record.streaming is True


@pytest.mark.parametrize("kind,body,needle", [
    ("agent", {}, "'question' is required"),
    ("agent", {"question": 5}, "AgentRequest.question: expected str"),
    ("agent", {"question": ""}, "the agent request's question is empty: ask a question"),
    ("agent", {"question": " \t\n ", "streaming": True}, "the agent request's question is empty: ask a question"),
    ("text-completion", {"system": "s"}, "'prompt' is required"),
    ("config", {"operation": "put", "values": "x"}, "ConfigRequest.values: expected list"),
    ("prompt", {"id": "p", "variables": [1]}, "'variables' must be a JSON object"),
    ("flow", {"operation": "start-flow", "parameters": "x"}, "'parameters' must be a JSON object"),
])
def test_bad_bodies_are_request_errors(kind: str, body: dict, needle: str) -> None:
    with pytest.raises(BadRequest) as e:
        T[kind].request(body)
    assert str(e.value).startswith("Bad request: ") and needle in str(e.value)


def test_a_body_must_be_an_object() -> None:
    with pytest.raises(BadRequest, match="must be a JSON object"):
        T["config"].request([1])


def test_prompt_variables_are_json_encoded_into_terms() -> None:
    out = wire("prompt", {"id": "agent-react", "variables": {"question": "hi", "tools": [{"n": 1}]}})
    assert out == {"id": "agent-react", "terms": {"question": '"hi"', "tools": '[{"n": 1}]'}, "streaming": False}
    assert wire("prompt", {"id": "x", "terms": {"a": '"b"'}})["terms"] == {"a": '"b"'}


def test_mcp_tool_parameters_are_json_encoded() -> None:
    assert wire("mcp-tool", {"name": "t", "parameters": {"a": 1}}) == {"name": "t", "parameters": '{"a": 1}'}
    assert wire("mcp-tool", {"name": "t"})["parameters"] == "{}"


def test_rows_variables_pass_on_as_given_as_upstream_passes_them() -> None:
    variables = {"n": 5, "b": True, "o": {"a": [1]}, "s": "x", "z": None}
    out = wire("rows", {"query": "{ q }", "variables": variables})
    assert out == {"user": "trustgraph", "collection": "default", "query": "{ q }", "variables": variables,
                   "operation_name": None}
    # And a record with such variables, as an upstream client puts it on the bus, decodes.
    assert decode(RowsQueryRequest, json.dumps(out).encode()).variables == variables


def test_graph_rag_and_structured_query_defaults() -> None:
    assert wire("graph-rag", {"query": "q", "entity-limit": 5}) == {
        "query": "q", "user": "trustgraph", "collection": "default", "entity_limit": 5, "triple_limit": 30,
        "max_subgraph_size": 1000, "max_path_length": 2, "streaming": False}
    assert wire("structured-query", {"question": "q"}) == {
        "question": "q", "user": "trustgraph", "collection": "default"}
    assert wire("embeddings", {"text": "t"}) == {"text": "t"}


# -- responses ---------------------------------------------------------------------------


def test_config_and_flow_responses_leave_out_nulls() -> None:
    assert T["config"].response(ConfigResponse(version=0, values=None, directory=None, config=None)) == (
        {"version": 0}, True)
    got, _ = T["config"].response(ConfigResponse(version=3, values=[ConfigValue("t", "k", None)], directory=[]))
    assert got == {"version": 3, "values": [{"type": "t", "key": "k", "value": None}], "directory": [],
                   "config": {}}
    got, final = T["flow"].response(FlowResponse(blueprint_names=None, flow_ids=["a"], blueprint_definition=None,
                                                 flow=None, description=None, parameters=None))
    assert (got, final) == ({"flow-ids": ["a"]}, True)


def test_agent_final_rule_without_chunk_type_is_answer_not_null() -> None:
    agent = T["agent"]
    thought = AgentResponse(thought="t", answer=None, observation=None, end_of_message=True)
    assert agent.response(thought) == ({"thought": "t", "end_of_message": True, "end_of_dialog": False}, False)
    # The interop trap: a decoder that fills a missing answer with "" ends the call here.
    assert agent.response(AgentResponse(thought="t"))[1] is True
    assert agent.response(AgentResponse(answer="42", thought=None, observation=None, end_of_dialog=True)) == (
        {"answer": "42", "end_of_message": False, "end_of_dialog": True}, True)


def test_agent_streaming_chunks_end_at_end_of_dialog() -> None:
    agent = T["agent"]
    chunk = AgentResponse(chunk_type="answer", content="4", answer=None, thought=None, observation=None)
    assert agent.response(chunk) == (
        {"chunk_type": "answer", "content": "4", "end_of_message": False, "end_of_dialog": False}, False)
    end = AgentResponse(chunk_type="answer", content="", end_of_message=True, end_of_dialog=True)
    assert agent.response(end) == (
        {"chunk_type": "answer", "end_of_message": True, "end_of_dialog": True}, True)


def test_errors_are_final_for_every_kind() -> None:
    err = Error(type="llm-error", message="boom")
    for kind, record in (("text-completion", TextCompletionResponse(error=err, end_of_stream=False)),
                         ("agent", AgentResponse(error=err, end_of_dialog=False, answer=None)),
                         ("prompt", PromptResponse(error=err))):
        assert T[kind].response(record) == ({"error": {"type": "llm-error", "message": "boom"}}, True)


def test_streaming_kinds_end_at_end_of_stream() -> None:
    tc = T["text-completion"]
    assert tc.response(TextCompletionResponse(response="", end_of_stream=False)) == (
        {"response": "", "end_of_stream": False}, False)
    assert tc.response(TextCompletionResponse(response="x", in_token=1, out_token=2, model="m",
                                              end_of_stream=True)) == (
        {"response": "x", "in_token": 1, "out_token": 2, "model": "m", "end_of_stream": True}, True)
    assert T["prompt"].response(PromptResponse(text=None, object='{"a": 1}', end_of_stream=True)) == (
        {"object": '{"a": 1}', "end_of_stream": True}, True)
    # An empty chunk keeps its "response" (upstream 2.1.4's translator: an empty last chunk is said).
    assert T["graph-rag"].response(GraphRagResponse(response="", end_of_stream=False)) == (
        {"response": "", "end_of_stream": False}, False)


def test_single_message_kinds() -> None:
    assert T["mcp-tool"].response(ToolResponse(text=None, object='{"rows": [1]}')) == (
        {"object": {"rows": [1]}}, True)
    assert T["mcp-tool"].response(ToolResponse(text="hello", object=None)) == ({"text": "hello"}, True)
    assert T["structured-query"].response(StructuredQueryResponse(data='{"a": 1}', errors=["e"])) == (
        {"data": {"a": 1}, "errors": ["e"]}, True)
    assert T["embeddings"].response(EmbeddingsResponse(vectors=[[0.5, 1]])) == ({"vectors": [[0.5, 1]]}, True)


# -- routing, tools, auth ---------------------------------------------------------------------


def flow_record(**interfaces: Any) -> str:
    return json.dumps({"description": "d", "blueprint-name": "bp", "interfaces": interfaces, "parameters": {}})


PAIR = {"request": "non-persistent://tg/request/x", "response": "non-persistent://tg/response/x"}


async def test_routing_errors_follow_upstream_order() -> None:
    d = Dispatcher(PubSub("pulsar://unused:6650"), timeout=1.0, config_topics=("a", "b"),
                   flow_topics=("c", "d"))
    d.update_flows({"f": flow_record(agent=PAIR, triples=PAIR, store="persistent://tg/flow/s"),
                    "broken": "{not json"})
    # Upstream's order: the flow, then the kind among its interfaces, then a kind the gateway
    # translates; a request/response kind whose interface is a bare topic is not supported.
    d.update_flows({"f": flow_record(agent=PAIR, triples=PAIR, store="persistent://tg/flow/s",
                                     rows="persistent://tg/flow/r"),
                    "broken": "{not json"})
    cases = [("agent", "nope", "Invalid flow"), ("agent", "broken", "Invalid flow"),
             ("prompt", "f", "This kind not supported by flow"),
             ("store", "f", "Invalid kind"), ("rows", "f", "This kind not supported by flow"),
             ("bogus", None, "Invalid kind")]
    for kind, flow, message in cases:
        with pytest.raises(RoutingError, match=f"^{message}$"):
            d.route(kind, flow)
    assert d.route("triples", "f")[0].kind == "triples"        # upstream's kinds are routed too
    assert d.route("librarian", None)[0].kind == "librarian"
    translator, client = d.route("agent", "f")
    assert translator.kind == "agent" and client.request_topic == PAIR["request"]
    assert d.route("agent", "f")[1] is client          # one client per (flow, kind)
    moved = {"request": "non-persistent://tg/request/y", "response": "non-persistent://tg/response/y"}
    d.update_flows({"f": flow_record(agent=moved)})    # restarted with other topics: a new client
    assert d.route("agent", "f")[1].request_topic == moved["request"]
    d.update_flows({})
    with pytest.raises(RoutingError, match="Invalid flow"):
        d.route("agent", "f")
    d.update_flows({"f": flow_record(agent=PAIR)})     # a flow that comes back gets a fresh client
    assert d.route("agent", "f")[1] is not client
    await d.stop()


async def test_tool_lookup_errors_name_the_descriptor_problem() -> None:
    tools = ToolServices(PubSub("pulsar://unused:6650"), timeout=1.0)
    broken = {"type": "tool-service", "name": "joke", "description": "d", "service": "gone"}
    bad_service = {"id": "bad", "request-queue": "not a topic", "response-queue": "q0/tg/response/x"}
    tools.update({"tool": {"joke": json.dumps(broken)}, "tool-service": {"bad": json.dumps(bad_service)}})
    assert any(e.startswith("tool/joke: field 'service': unknown tool service 'gone'") for e in tools.errors)
    reply = await tools.call({"tool": "joke"})
    assert reply["error"]["type"] == "gateway-error"
    assert reply["error"]["message"].startswith("Unknown tool 'joke': tool/joke: field 'service'")
    reply = await tools.call({"service": "bad"})
    assert "Tool service 'bad' is misconfigured: tool-service/bad: field 'request-queue'" in (
        reply["error"]["message"])
    assert (await tools.call({"arguments": {}}))["error"]["message"].startswith("the request needs 'tool'")
    await tools.stop()


@pytest.mark.parametrize("token,path,headers,allowed", [
    ("", "/api/v1/config", {}, True),
    ("s", "/api/v1/config", {}, False),
    ("s", "/api/v1/config", {"Authorization": "Bearer s"}, True),
    ("s", "/api/v1/config", {"Authorization": "Bearer t"}, False),
    ("s", "/api/v1/config?token=s", {}, False),          # query tokens only on the socket
    ("s", "/api/v1/socket?token=s", {}, True),
    ("s", "/api/v1/socket?token=x", {}, False),
    ("s", "/api/v1/health", {}, True),
])
def test_token_auth(token: str, path: str, headers: dict, allowed: bool) -> None:
    assert TokenAuth(token).allows(make_mocked_request("GET", path, headers=headers)) is allowed


def test_agent_show_actions_is_a_message_property_not_a_record_field() -> None:
    agent = T["agent"]
    assert agent.request_properties({"question": "q", "show_actions": True}) == {"show-actions": "true"}
    assert agent.request_properties({"question": "q"}) == {}
    assert agent.request_properties({"question": "q", "show_actions": "yes"}) == {}
    assert "show_actions" not in wire("agent", {"question": "q", "show_actions": True})   # upstream's record
    assert T["prompt"].request_properties({"id": "x"}) == {}


def test_an_agent_approval_goes_in_as_a_property_and_comes_out_as_a_field() -> None:
    from trustgraph.schema.services.agent import AgentApproval

    agent = T["agent"]
    answer = {"token": "a1.x.y", "decision": "approve"}
    props = agent.request_properties({"question": "q", "approval": answer, "show_actions": True})
    assert props == {"show-actions": "true", "approval": json.dumps(answer)}
    # As given: the agent checks it, and says what is wrong with it in one line.
    assert agent.request_properties({"question": "q", "approval": "yes"}) == {"approval": '"yes"'}
    assert agent.request_properties({"question": "q", "approval": None}) == {}
    assert "approval" not in wire("agent", {"question": "q", "approval": answer})   # upstream's record
    paused = AgentResponse(answer="Approval needed", end_of_dialog=True, outcome="approval-required",
                           candidates=["rm"], approval=AgentApproval("rm", {"path": "/tmp/x"}, "a1.x.y", 12.5))
    out, final = agent.response(paused)
    assert final and out["approval"] == {"tool": "rm", "arguments": {"path": "/tmp/x"}, "token": "a1.x.y",
                                         "expires": 12.5}
    assert "approval" not in agent.response(AgentResponse(answer="a", end_of_dialog=True))[0]


@pytest.mark.parametrize("body, message", [
    ([1, 2], "the request must be a JSON object"),
    ({"tool": 5}, "'tool' must be a string (a tool name)"),
    ({"service": ["x"]}, "'service' must be a string (a tool-service id)"),
    ({"service": "s", "config": "x=1"}, "'config' must be a JSON object"),
    ({"tool": "t", "arguments": [1]}, "'arguments' must be a JSON object"),
    ({"tool": "t", "user": 7}, "'user' must be a string"),
])
async def test_a_tool_service_body_of_the_wrong_shape_names_the_field(body, message) -> None:
    """Refused before any lookup or call, with the field and what it must be."""
    tools = ToolServices(PubSub("pulsar://unused:6650"), timeout=1.0)
    assert await tools.call(body) == {"error": {"type": "gateway-error", "message": message}}
    await tools.stop()
