"""The built-in tool types on 2.11's wire (``trustgraph.compat.v211.tool_records``) against upstream 2.11.1's records.

Each payload is what upstream 2.11.1 puts on the bus (``json.dumps`` of its
``dataclass_to_dict``: every field present, None as null, in its field order), written out
here from trustgraph-base 2.11.1's ``schema/`` and the services that fill it
(trustgraph-flow 2.11.1's graph-rag, embeddings, row-embeddings query, mcp-tool and
structured-query), so a renamed field or a changed reply sequence fails these.  The calls run
the real request-response client over the in-memory transport against a stand-in service that
answers with those payloads.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from trustgraph.base.messaging.request_response import RequestResponseClient
from trustgraph.base.testing import MemoryBroker, memory_pubsub
from trustgraph.base.testing.stand_ins import Responder
from trustgraph.base.wire import WIRE_21, WIRE_211, wire_for
from trustgraph.catalog import build_catalog
from trustgraph.catalog.implementations import (
    BUILDERS,
    FLOW_CLIENTS,
    CallContext,
    KnowledgeQueryImpl,
    RowEmbeddingsQueryImpl,
    ToolFailed,
)
from trustgraph.catalog.wires import ToolWire
from trustgraph.compat.v211 import schema as v211
from trustgraph.compat.v211.tool_records import KnowledgeQuery211Impl, RowEmbeddingsQuery211Impl
from trustgraph.schema import (
    EmbeddingsResponse,
    Error,
    PromptRequest,
    StructuredQueryResponse,
    ToolResponse,
    decode,
    encode,
)


def tool_wire(wire: str) -> ToolWire:
    """The built-in tool types' records and implementations on ``wire``, as the agent gets them (its
    wire's dialect's)."""
    from trustgraph.agent.react.dialects import DIALECT
    return wire_for(wire).component("agent-dialect", DIALECT).tools


# -- what 2.11.1 writes ------------------------------------------------------------------------

EXPLAIN = (
    '{"error": null, "response": "", "end_of_stream": false, "explain_id": "urn:trustgraph:question:q1", '
    '"explain_graph": "urn:graph:retrieval", "explain_triples": [{"s": {"type": "i", "iri": '
    '"urn:trustgraph:question:q1", "id": "", "value": "", "datatype": "", "language": "", "triple": null}, '
    '"p": {"type": "i", "iri": "http://www.w3.org/2000/01/rdf-schema#label", "id": "", "value": "", '
    '"datatype": "", "language": "", "triple": null}, "o": {"type": "l", "iri": "", "id": "", "value": '
    '"Who flew?", "datatype": "", "language": "", "triple": null}, "g": null}], "message_type": "explain", '
    '"end_of_session": false, "in_token": null, "out_token": null, "model": null, "sources": []}')
# The non-streaming answer: one chunk, end_of_stream and end_of_session, with usage and sources.
ANSWER = (
    '{"error": null, "response": "Scobee flew it.", "end_of_stream": true, "explain_id": null, '
    '"explain_graph": null, "explain_triples": [], "message_type": "chunk", "end_of_session": true, '
    '"in_token": 120, "out_token": 6, "model": "gpt", "sources": [{"uri": "urn:doc:1", "title": ""}]}')
RAG_ERROR = (
    '{"error": {"type": "graph-rag-error", "message": "no graph"}, "response": "", "end_of_stream": true, '
    '"explain_id": null, "explain_graph": null, "explain_triples": [], "message_type": "chunk", '
    '"end_of_session": true, "in_token": null, "out_token": null, "model": null, "sources": []}')
VECTORS = '{"error": null, "vectors": [[0.1, 0.2, 0.3]]}'
MATCHES = (
    '{"error": null, "matches": [{"index_name": "name", "index_value": ["Ada", "Lovelace"], "text": '
    '"Ada Lovelace", "score": 0.91234, "attributes": {"team": "engines", "tags": ["a", "b"]}}]}')
NO_MATCHES = '{"error": null, "matches": []}'
# mcp-tool (2.11.1's ToolService): plain text, or structured content as JSON text; the other null.
MCP_TEXT = '{"error": null, "text": "HELLO", "object": null}'
MCP_OBJECT = '{"error": null, "text": null, "object": "{\\"city\\": \\"Oslo\\", \\"temp\\": 4}"}'
STRUCTURED = '{"error": null, "data": "{\\"people\\": []}", "errors": []}'

# -- what 2.11.1's services read (their request records, every field) ---------------------------

RAG_QUERY = (
    '{"query": "Who flew?", "collection": "space", "entity_limit": 0, "triple_limit": 0, "max_subgraph_size": 0, '
    '"max_path_length": 0, "edge_score_limit": 0, "edge_limit": 0, "max_reranker_input": 0, "streaming": false, '
    '"parent_uri": "", "user_context": null, "grounding_seeds": [], "graph_seeds": [], "languages": [], '
    '"traversal_instructions": [], "graph": null}')
EMBED = '{"texts": ["ada"]}'
ROWS = ('{"vector": [0.1, 0.2, 0.3], "limit": 3, "collection": "default", "schema_name": "person", '
        '"index_name": "name", "attributes": {}}')


def test_2_11_replies_decode_as_2_11_writes_them():
    explain = decode(v211.GraphRagResponse, EXPLAIN)
    assert (explain.message_type, explain.response, explain.end_of_session) == ("explain", "", False)
    assert explain.explain_triples[0].o.value == "Who flew?"
    answer = decode(v211.GraphRagResponse, ANSWER)
    assert (answer.message_type, answer.response, answer.end_of_session, answer.in_token) == (
        "chunk", "Scobee flew it.", True, 120)
    assert answer.sources == [v211.Source(uri="urn:doc:1")]
    assert decode(v211.GraphRagResponse, RAG_ERROR).error == Error("graph-rag-error", "no graph")
    assert decode(EmbeddingsResponse, VECTORS).vectors == [[0.1, 0.2, 0.3]]
    match = decode(v211.RowEmbeddingsResponse, MATCHES).matches[0]
    assert (match.index_value, match.score, match.attributes) == (
        ["Ada", "Lovelace"], 0.91234, {"team": "engines", "tags": ["a", "b"]})
    # Unchanged in 2.11: 2.1's records read them.
    assert decode(ToolResponse, MCP_TEXT) == ToolResponse(text="HELLO", object=None)
    assert decode(ToolResponse, MCP_OBJECT).text is None
    assert decode(StructuredQueryResponse, STRUCTURED) == StructuredQueryResponse(data='{"people": []}')


def test_2_11_requests_encode_as_2_11_reads_them():
    assert encode(v211.GraphRagQuery(query="Who flew?", collection="space")).decode() == RAG_QUERY
    assert encode(v211.EmbeddingsRequest(texts=["ada"])).decode() == EMBED
    assert encode(v211.RowEmbeddingsRequest(vector=[0.1, 0.2, 0.3], limit=3, collection="default",
                                            schema_name="person", index_name="name")).decode() == ROWS


def test_2_1s_tools_are_unchanged_and_2_11_replaces_only_what_2_11_changed():
    assert tool_wire(WIRE_21).clients is FLOW_CLIENTS and tool_wire(WIRE_21).builders is BUILDERS
    wire = tool_wire(WIRE_211)
    changed = {k for k in wire.clients if wire.clients[k] != FLOW_CLIENTS[k]}
    assert changed == {"prompt", "graph-rag", "embeddings", "row-embeddings-query"}
    assert wire.clients["prompt"] == (PromptRequest, v211.PromptResponse)
    assert {k for k in wire.builders if wire.builders[k] is not BUILDERS[k]} == {
        "knowledge-query", "row-embeddings-query"}
    from trustgraph.catalog.wires import TOOLS
    from trustgraph.compat.v211.tool_records import TOOLS as TOOLS_211
    assert wire is TOOLS_211 and tool_wire(WIRE_21) is TOOLS


def tool(descriptor: dict[str, Any], wire: str = WIRE_211) -> Any:
    built = build_catalog({"tool": {"t": json.dumps(descriptor)}})
    assert built.errors == (), built.errors
    entry = built.tools[descriptor["name"]]
    return tool_wire(wire).builders[entry.type](entry, None)   # type: ignore[arg-type]


class Flow:
    """The flow's clients of a tool call: real request-response clients on the memory broker, each
    answered by a stand-in service with 2.11.1's payloads."""

    def __init__(self) -> None:
        self.broker = MemoryBroker()
        self.caller = memory_pubsub(self.broker, "agent")
        self.clients: dict[str, RequestResponseClient] = {}
        self.services: dict[str, Responder] = {}

    async def serve(self, prefix: str, replies: list[str]) -> Responder:
        request, response = tool_wire(WIRE_211).clients[prefix]
        # 2.11's queue names, as a 2.11 flow blueprint gives them.
        topics = f"request:tg:{prefix}:default:f", f"response:tg:{prefix}:default:f"
        answer = [decode(response, r) for r in replies]
        self.services[prefix] = await Responder(memory_pubsub(self.broker, prefix), *topics, request,
                                                lambda _: answer).start()
        self.clients[f"{prefix}-request"] = RequestResponseClient(
            self.caller, request_topic=topics[0], response_topic=topics[1], request_schema=request,
            response_schema=response, subscription=f"agent-{prefix}")
        return self.services[prefix]

    def ctx(self) -> CallContext:
        return CallContext(user="ann", flow=self.clients.__getitem__, timeout=10.0)

    async def close(self) -> None:
        for client in self.clients.values():
            await client.stop()
        await self.caller.close()


@pytest.fixture
async def flow():
    f = Flow()
    yield f
    await f.close()


KNOWLEDGE = {"type": "knowledge-query", "name": "kb", "description": "The crew", "collection": "space"}
ROW_TOOL = {"type": "row-embeddings-query", "name": "people", "description": "d", "schema-name": "person",
            "index-name": "name", "limit": 3}


async def test_knowledge_query_reads_the_answer_past_2_11s_explain_messages(flow):
    impl = tool(KNOWLEDGE)
    assert isinstance(impl, KnowledgeQuery211Impl)
    rag = await flow.serve("graph-rag", [EXPLAIN, EXPLAIN, ANSWER])
    assert await impl.invoke(flow.ctx(), {"question": "Who flew?"}) == "Scobee flew it."
    assert encode(rag.requests[0]).decode() == RAG_QUERY   # no user: 2.11's workspace is the tenancy


async def test_knowledge_query_joins_a_streamed_answer_and_fails_on_2_11s_error(flow):
    chunk = json.loads(ANSWER) | {"end_of_stream": False, "end_of_session": False}
    parts = [json.dumps(chunk | {"response": "Scobee "}), json.dumps(chunk | {"response": "flew it."}),
             json.dumps(chunk | {"response": "", "end_of_session": True})]
    await flow.serve("graph-rag", [EXPLAIN, *parts])
    assert await tool(KNOWLEDGE).invoke(flow.ctx(), {"question": "Who flew?"}) == "Scobee flew it."
    flow.services["graph-rag"].answer = lambda _: [decode(v211.GraphRagResponse, EXPLAIN),
                                                   decode(v211.GraphRagResponse, RAG_ERROR)]
    with pytest.raises(ToolFailed, match="no graph"):
        await tool(KNOWLEDGE).invoke(flow.ctx(), {"question": "Who flew?"})


async def test_2_1s_knowledge_query_would_read_2_11s_first_message_an_explain_one(flow):
    """Why 2.11 has its own: 2.1's takes the first reply, which from 2.11.1 is empty."""
    impl = tool(KNOWLEDGE, WIRE_21)
    assert isinstance(impl, KnowledgeQueryImpl)
    await flow.serve("graph-rag", [EXPLAIN, ANSWER])
    assert await impl.invoke(flow.ctx(), {"question": "Who flew?"}) == ""


async def test_row_embeddings_query_sends_2_11s_texts_and_vector(flow):
    impl = tool(ROW_TOOL)
    assert isinstance(impl, RowEmbeddingsQuery211Impl)
    embed = await flow.serve("embeddings", [VECTORS])
    rows = await flow.serve("row-embeddings-query", [MATCHES])
    got = await impl.invoke(flow.ctx(), {"query": "ada"})
    assert got == "Matching records:\n- name: Ada, Lovelace (score: 0.912)"
    assert encode(embed.requests[0]).decode() == EMBED
    assert encode(rows.requests[0]).decode() == ROWS
    rows.answer = lambda _: [decode(v211.RowEmbeddingsResponse, NO_MATCHES)]
    assert await impl.invoke(flow.ctx(), {"query": "ada"}) == "No matching records found"


def test_2_1s_row_query_is_what_2_11_reads_as_empty():
    """Why 2.11 has its own: 2.11's decoders drop 2.1's ``text`` and ``vectors`` (unknown keys)."""
    assert isinstance(tool(ROW_TOOL, WIRE_21), RowEmbeddingsQueryImpl)
    from trustgraph.schema import EmbeddingsRequest, RowEmbeddingsRequest
    assert decode(v211.EmbeddingsRequest, encode(EmbeddingsRequest(text="ada"))).texts == []
    assert decode(v211.RowEmbeddingsRequest, encode(RowEmbeddingsRequest(vectors=[[0.1]]))).vector == []
