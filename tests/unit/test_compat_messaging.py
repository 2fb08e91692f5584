"""trustgraph.messaging: upstream 2.1.4's translators at its path, the ones our gateway uses too.

Each request kind goes JSON -> record -> the wire codec -> JSON, and each
response kind record -> the wire codec -> JSON, against the JSON upstream's
translators define (field names, what is left out, which message ends a
call).  Stricter reading of requests and our few defaults are checked where
they differ.
"""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from trustgraph.messaging import TranslatorRegistry
from trustgraph.messaging.translators import BadRequest
from trustgraph.schema import (
    BLANK,
    IRI,
    LITERAL,
    TRIPLE,
    AgentResponse,
    AgentStep,
    ChunkEmbeddings,
    CollectionManagementResponse,
    CollectionMetadata,
    ConfigResponse,
    ConfigValue,
    DocumentEmbeddings,
    DocumentEmbeddingsResponse,
    DocumentMetadata,
    DocumentRagResponse,
    EmbeddingsResponse,
    EntityEmbeddings,
    Error,
    Field,
    FlowResponse,
    GraphEmbeddings,
    GraphEmbeddingsResponse,
    GraphQLError,
    GraphRagResponse,
    KnowledgeResponse,
    LibrarianResponse,
    Metadata,
    ProcessingMetadata,
    PromptResponse,
    QuestionToStructuredQueryResponse,
    RowEmbeddingsResponse,
    RowIndexMatch,
    RowSchema,
    RowsQueryResponse,
    SchemaError,
    StructuredDataDiagnosisResponse,
    StructuredQueryResponse,
    Term,
    TextCompletionResponse,
    ToolResponse,
    Triple,
    Triples,
    TriplesQueryResponse,
    decode,
    encode,
    to_dict,
)

#: Upstream 2.1.4's registry: its gateway's dispatchers ask for these names.
UPSTREAM_SERVICES = {
    "agent", "embeddings", "text-completion", "document-rag", "graph-rag", "triples-query", "knowledge",
    "librarian", "config", "flow", "prompt", "tool", "document-embeddings-query", "graph-embeddings-query",
    "row-embeddings-query", "rows-query", "nlp-query", "structured-query", "structured-diag",
    "collection-management"}


def on_the_wire(record: Any) -> Any:
    """The record as a receiver gets it: encoded and decoded by the one codec."""
    return decode(type(record), encode(record))


def request(service: str, body: dict[str, Any]) -> Any:
    return on_the_wire(TranslatorRegistry.get_request_translator(service).to_pulsar(body))


def back(service: str, record: Any) -> dict[str, Any]:
    return TranslatorRegistry.get_request_translator(service).from_pulsar(record)


def reply(service: str, record: Any) -> tuple[dict[str, Any], bool]:
    return TranslatorRegistry.get_response_translator(service).from_response_with_completion(on_the_wire(record))


IRI_TERM = {"t": "i", "i": "http://ex/a"}
LIT_TERM = {"t": "l", "v": "x", "dt": "http://www.w3.org/2001/XMLSchema#string"}
TRIPLE_JSON = {"s": IRI_TERM, "p": {"t": "i", "i": "http://ex/p"}, "o": LIT_TERM}


# -- the registry -----------------------------------------------------------------------------------


def test_every_upstream_service_has_both_translators_and_the_senders_one() -> None:
    services = set(TranslatorRegistry.list_services())
    assert UPSTREAM_SERVICES | {"document", "text-document"} == services
    assert TranslatorRegistry.list_services() == sorted(services)
    for name in UPSTREAM_SERVICES:
        assert TranslatorRegistry.has_service(name)
        assert TranslatorRegistry.get_request_translator(name) is not TranslatorRegistry.get_response_translator(name)
    assert TranslatorRegistry.has_service("document") and not TranslatorRegistry.has_service("nope")
    with pytest.raises(KeyError, match="No response translator registered for service: document"):
        TranslatorRegistry.get_response_translator("document")
    with pytest.raises(KeyError, match="No request translator registered for service: nope"):
        TranslatorRegistry.get_request_translator("nope")


def test_a_service_registered_later_is_found(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(TranslatorRegistry, "_request_translators", dict(TranslatorRegistry._request_translators))
    monkeypatch.setattr(TranslatorRegistry, "_response_translators", dict(TranslatorRegistry._response_translators))
    agent = TranslatorRegistry.get_request_translator("agent")
    TranslatorRegistry.register_service("mine", agent, TranslatorRegistry.get_response_translator("agent"))
    assert TranslatorRegistry.get_request_translator("mine") is agent and "mine" in TranslatorRegistry.list_services()


def test_upstreams_import_paths() -> None:
    # The four upstream processors' imports (api-gateway, rev-gateway, kg-extract-rows).
    from trustgraph.messaging import AgentRequestTranslator, TranslatorRegistry  # noqa: F401
    from trustgraph.messaging.translators import field_translator, row_schema_translator
    from trustgraph.messaging.translators.base import MessageTranslator, SendTranslator, Translator
    from trustgraph.messaging.translators.document_loading import DocumentEmbeddingsTranslator
    from trustgraph.messaging.translators.primitives import TermTranslator, TripleTranslator, ValueTranslator
    assert ValueTranslator is TermTranslator and issubclass(MessageTranslator, Translator)
    assert issubclass(DocumentEmbeddingsTranslator, SendTranslator) and TripleTranslator
    assert row_schema_translator.from_pulsar(RowSchema(name="n")) == {"name": "n", "description": "", "fields": []}
    assert field_translator.to_pulsar({"name": "f"}).type == "string"


# -- requests: JSON -> record -> JSON ----------------------------------------------------------------


def test_agent_request() -> None:
    step = {"thought": "t", "action": "kb", "arguments": {"question": "q"}, "observation": "o", "user": ""}
    record = request("agent", {"question": "Who?", "history": [step], "group": ["g"], "streaming": True})
    assert record.history == [AgentStep(**step)] and record.user == "trustgraph" and record.state is None
    assert back("agent", record) == {"question": "Who?", "state": None, "group": ["g"], "history": [step],
                                     "user": "trustgraph", "streaming": True}
    json.dumps(back("agent", record))  # upstream's gave AgentStep objects here; ours is JSON


def test_text_completion_prompt_and_embeddings_requests() -> None:
    record = request("text-completion", {"system": "s", "prompt": "p", "streaming": True})
    assert (record.system, record.prompt, record.streaming) == ("s", "p", True)
    assert back("text-completion", record) == {"system": "s", "prompt": "p"}
    record = request("prompt", {"id": "extract", "variables": {"text": "hi", "n": [1]}, "streaming": True})
    assert record.terms == {"text": '"hi"', "n": "[1]"} and record.streaming is True
    assert back("prompt", record) == {"id": "extract", "terms": {"text": '"hi"', "n": "[1]"}}
    assert request("prompt", {"id": "x", "terms": {"a": '"b"'}}).terms == {"a": '"b"'}
    assert back("prompt", request("prompt", {})) == {}
    assert back("embeddings", request("embeddings", {"text": "t"})) == {"text": "t"}


def test_mcp_tool_request_encodes_the_parameters() -> None:
    record = request("tool", {"name": "weather", "parameters": {"city": "Oslo"}})
    assert (record.name, json.loads(record.parameters)) == ("weather", {"city": "Oslo"})
    assert back("tool", record) == {"name": "weather", "parameters": {"city": "Oslo"}}
    assert request("tool", {"name": "t"}).parameters == "{}"     # ours: no parameters is a call without any


def test_config_and_flow_requests() -> None:
    body = {"operation": "put", "values": [{"type": "tool", "key": "k", "value": "{}"}]}
    record = request("config", body)
    assert back("config", record) == {"operation": "put", "type": "", "keys": [], **body}
    flow = {"operation": "start-flow", "blueprint-name": "bp", "flow-id": "f", "description": "d",
            "parameters": {"model": "m"}}
    record = request("flow", flow)
    assert (record.blueprint_name, record.flow_id, record.parameters) == ("bp", "f", {"model": "m"})
    assert back("flow", record) == {**flow, "blueprint-definition": ""}
    assert request("flow", {"operation": "start-flow"}).description is None   # "No description", as upstream
    definition = request("flow", {"operation": "put-blueprint", "blueprint-definition": {"a": 1}})
    assert json.loads(definition.blueprint_definition) == {"a": 1}


def test_rag_requests_read_limits_as_upstream_does() -> None:
    record = request("graph-rag", {"query": "q", "entity-limit": "5", "streaming": True})
    assert (record.entity_limit, record.triple_limit, record.max_subgraph_size, record.max_path_length) == (
        5, 30, 1000, 2)
    assert back("graph-rag", record) == {
        "query": "q", "user": "trustgraph", "collection": "default", "entity-limit": 5, "triple-limit": 30,
        "max-subgraph-size": 1000, "max-path-length": 2, "streaming": True}
    record = request("document-rag", {"query": "q", "doc-limit": 3, "collection": "c"})
    assert back("document-rag", record) == {"query": "q", "user": "trustgraph", "collection": "c",
                                            "doc-limit": 3, "streaming": False}


def test_triples_and_vector_query_requests() -> None:
    record = request("triples-query", {"s": IRI_TERM, "o": LIT_TERM, "g": "*", "limit": 7})
    assert record.s == Term(type=IRI, iri="http://ex/a") and record.p is None and record.g == "*"
    assert back("triples-query", record) == {"limit": 7, "user": "trustgraph", "collection": "default",
                                             "s": IRI_TERM, "o": LIT_TERM, "g": "*"}
    assert "g" not in back("triples-query", request("triples-query", {}))       # null: the default graph
    for service in ("graph-embeddings-query", "document-embeddings-query"):
        record = request(service, {"vectors": [[0.5, 1.0]], "user": "u"})
        assert back(service, record) == {"vectors": [[0.5, 1.0]], "limit": 10, "user": "u", "collection": "default"}
    record = request("row-embeddings-query", {"vectors": [[1.0]], "schema_name": "people", "index_name": "name"})
    assert back("row-embeddings-query", record) == {"vectors": [[1.0]], "limit": 10, "user": "trustgraph",
                                                    "collection": "default", "schema_name": "people",
                                                    "index_name": "name"}


def test_rows_nlp_structured_and_diagnosis_requests() -> None:
    record = request("rows-query", {"query": "{ q }", "variables": {"n": 1}, "operation_name": "Op"})
    assert back("rows-query", record) == {"user": "trustgraph", "collection": "default", "query": "{ q }",
                                          "variables": {"n": 1}, "operation_name": "Op"}
    assert back("nlp-query", request("nlp-query", {"question": "how many?"})) == {
        "question": "how many?", "max_results": 100}
    assert back("structured-query", request("structured-query", {"question": "q"})) == {
        "question": "q", "user": "trustgraph", "collection": "default"}
    body = {"operation": "generate-descriptor", "sample": "a,b", "type": "csv", "schema-name": "s",
            "options": {"delimiter": ","}}
    assert back("structured-diag", request("structured-diag", body)) == body
    assert back("structured-diag", request("structured-diag", {"operation": "detect-type", "sample": "x"})) == {
        "operation": "detect-type", "sample": "x"}


def test_librarian_knowledge_and_collection_requests() -> None:
    content = base64.b64encode(b"%PDF-1.4").decode()
    body = {"operation": "add-document", "document-id": "d1", "user": "u", "content": content,
            "document-metadata": {"id": "d1", "title": "T", "tags": ["a"], "metadata": [TRIPLE_JSON]},
            "criteria": [{"key": "k", "value": "v", "operator": "eq"}]}
    record = request("librarian", body)
    assert record.document_metadata.metadata[0].s.iri == "http://ex/a" and record.content == content.encode()
    assert back("librarian", record) == {
        "operation": "add-document", "document-id": "d1", "user": "u", "content": content,
        "criteria": [{"key": "k", "value": "v", "operator": "eq"}],
        "document-metadata": {"id": "d1", "title": "T", "tags": ["a"], "metadata": [TRIPLE_JSON],
                              "document-type": "source"}}
    meta = {"id": "c1", "metadata": [], "user": "u", "collection": "c"}
    body = {"operation": "put-kg-core", "user": "u", "id": "c1", "triples": {"metadata": meta, "triples": [TRIPLE_JSON]},
            "graph-embeddings": {"metadata": meta, "entities": [{"entity": IRI_TERM, "vectors": [[0.5]]}]}}
    record = request("knowledge", body)
    assert record.graph_embeddings.entities[0] == EntityEmbeddings(entity=Term(type=IRI, iri="http://ex/a"),
                                                                   vectors=[[0.5]])
    expected = {**body, "graph-embeddings": {"metadata": meta, "entities": [{"vectors": [[0.5]], "entity": IRI_TERM}]}}
    assert back("knowledge", record) == expected
    body = {"operation": "update-collection", "user": "u", "collection": "c", "name": "N", "tags": ["x"]}
    assert back("collection-management", request("collection-management", body)) == {
        **body, "timestamp": "", "description": "", "tag_filter": [], "limit": 0}


# -- responses: record -> wire -> JSON, and the last message -----------------------------------------


def test_agent_responses_follow_upstreams_final_rule() -> None:
    thought = AgentResponse(thought="t", answer=None, observation=None, end_of_message=True)
    assert reply("agent", thought) == ({"thought": "t", "end_of_message": True, "end_of_dialog": False}, False)
    answer = AgentResponse(answer="4", thought=None, observation=None, end_of_message=True, end_of_dialog=True)
    assert reply("agent", answer) == ({"answer": "4", "end_of_message": True, "end_of_dialog": True}, True)
    assert reply("agent", AgentResponse(thought="t"))[1] is True      # a missing answer decodes as "": final
    chunk = AgentResponse(chunk_type="thought", content="I", thought="I")
    # A streamed message shows chunk_type and content only (upstream's gateway JSON).
    assert reply("agent", chunk) == ({"chunk_type": "thought", "content": "I", "end_of_message": False,
                                      "end_of_dialog": False}, False)
    end = AgentResponse(chunk_type="answer", end_of_message=True, end_of_dialog=True, outcome="no-tool")
    assert reply("agent", end) == ({"chunk_type": "answer", "end_of_message": True, "end_of_dialog": True,
                                    "outcome": "no-tool"}, True)
    failed = TranslatorRegistry.get_response_translator("agent").from_pulsar(
        AgentResponse(chunk_type="error", content="x", error=Error("agent-error", "x"), end_of_dialog=True))
    assert failed["error"] == {"type": "agent-error", "message": "x"}


def test_streaming_responses_end_at_end_of_stream_and_keep_an_empty_last_chunk() -> None:
    assert reply("text-completion", TextCompletionResponse(response="", end_of_stream=True)) == (
        {"response": "", "end_of_stream": True}, True)
    assert reply("text-completion", TextCompletionResponse(response="a", in_token=3, out_token=1, model="m")) == (
        {"response": "a", "in_token": 3, "out_token": 1, "model": "m", "end_of_stream": False}, False)
    for service, record in (("graph-rag", GraphRagResponse), ("document-rag", DocumentRagResponse)):
        assert reply(service, record(response="", end_of_stream=True)) == (
            {"response": "", "end_of_stream": True}, True)
        assert reply(service, record(response="part", end_of_stream=False))[1] is False
        assert "response" not in reply(service, record(response=None, end_of_stream=True))[0]
    assert reply("prompt", PromptResponse(text="", object=None, end_of_stream=True)) == (
        {"text": "", "end_of_stream": True}, True)
    assert reply("prompt", PromptResponse(text=None, object='{"a": 1}', end_of_stream=False)) == (
        {"object": '{"a": 1}', "end_of_stream": False}, False)


def test_single_responses() -> None:
    assert reply("config", ConfigResponse(version=2, values=[ConfigValue("t", "k", "v")], directory=None,
                                          config=None)) == (
        {"version": 2, "values": [{"type": "t", "key": "k", "value": "v"}]}, True)
    got, _ = reply("flow", FlowResponse(blueprint_names=None, flow_ids=["f"], blueprint_definition=None, flow=None,
                                        description=None, parameters=None))
    assert got == {"flow-ids": ["f"]}
    assert reply("tool", ToolResponse(text=None, object='{"rows": [1]}')) == ({"object": {"rows": [1]}}, True)
    assert reply("tool", ToolResponse(text="hi", object=None))[0] == {"text": "hi"}
    assert reply("embeddings", EmbeddingsResponse(vectors=[[0.5]]))[0] == {"vectors": [[0.5]]}
    assert reply("graph-embeddings-query", GraphEmbeddingsResponse(entities=[Term(type=IRI, iri="http://ex/a")]))[0] == {
        "entities": [IRI_TERM]}
    assert reply("graph-embeddings-query", GraphEmbeddingsResponse(entities=None))[0] == {}
    assert reply("document-embeddings-query", DocumentEmbeddingsResponse(chunk_ids=["c1"]))[0] == {"chunk_ids": ["c1"]}
    match = RowIndexMatch(index_name="name", index_value=["Ada"], text="Ada", score=0.9)
    assert reply("row-embeddings-query", RowEmbeddingsResponse(matches=[match]))[0] == {
        "matches": [{"index_name": "name", "index_value": ["Ada"], "text": "Ada", "score": 0.9}]}
    triple = Triple(s=Term(type=IRI, iri="http://ex/a"), p=Term(type=IRI, iri="http://ex/p"),
                    o=Term(type=LITERAL, value="x", datatype=LIT_TERM["dt"]))
    assert reply("triples-query", TriplesQueryResponse(triples=[triple]))[0] == {"response": [TRIPLE_JSON]}


def test_query_responses_decode_their_json_text() -> None:
    rows = RowsQueryResponse(data='{"people": []}', errors=[GraphQLError(message="m", path=["a"])],
                             extensions={"cost": "1"})
    assert reply("rows-query", rows)[0] == {"data": {"people": []}, "errors": [{"message": "m", "path": ["a"]}],
                                            "extensions": {"cost": "1"}}
    assert reply("rows-query", RowsQueryResponse(data=""))[0] == {"data": None}
    assert reply("structured-query", StructuredQueryResponse(data='{"a": 1}', errors=["e"]))[0] == {
        "data": {"a": 1}, "errors": ["e"]}
    assert reply("structured-query", StructuredQueryResponse(data="not json"))[0] == {"data": "not json", "errors": []}
    nlp = QuestionToStructuredQueryResponse(graphql_query="{ q }", variables={"n": "1"}, detected_schemas=["s"],
                                            confidence=0.5)
    assert reply("nlp-query", nlp)[0] == {"graphql_query": "{ q }", "variables": {"n": "1"},
                                          "detected_schemas": ["s"], "confidence": 0.5}
    selection = StructuredDataDiagnosisResponse(operation="schema-selection", schema_matches=[])
    assert reply("structured-diag", selection)[0] == {"operation": "schema-selection", "confidence": 0.0,
                                                      "schema-matches": []}
    diag = StructuredDataDiagnosisResponse(operation="diagnose", detected_type="csv", confidence=0.9,
                                           descriptor='{"f": 1}', metadata={"n": "5"}, schema_matches=["s"])
    assert reply("structured-diag", diag)[0] == {"operation": "diagnose", "detected-type": "csv", "confidence": 0.9,
                                                 "descriptor": {"f": 1}, "metadata": {"n": "5"},
                                                 "schema-matches": ["s"]}
    assert "schema-matches" not in reply("structured-diag", StructuredDataDiagnosisResponse(operation="detect-type"))[0]


def test_library_knowledge_and_collection_responses() -> None:
    doc = DocumentMetadata(id="d1", time=5, title="T", user="u", tags=[], metadata=[])
    got, final = reply("librarian", LibrarianResponse(document_metadatas=[doc], processing_metadatas=None,
                                                      upload_id="up", chunks_received=2))
    assert final and got == {"document-metadatas": [{"id": "d1", "time": 5, "title": "T", "user": "u", "tags": [],
                                                     "metadata": [], "document-type": "source"}],
                             "upload-id": "up", "chunks-received": 2}
    processing = ProcessingMetadata(id="p", document_id="d1", flow="default", tags=None)
    assert reply("librarian", LibrarianResponse(processing_metadatas=[processing], document_metadatas=None))[0] == {
        "processing-metadatas": [{"id": "p", "document-id": "d1", "flow": "default"}]}
    meta = Metadata(id="c1", user="u", collection="c")
    assert reply("knowledge", KnowledgeResponse(ids=["a", "b"])) == ({"ids": ["a", "b"]}, True)
    triples = KnowledgeResponse(ids=None, triples=Triples(metadata=meta, triples=[]))
    assert reply("knowledge", triples) == (
        {"triples": {"metadata": {"id": "c1", "metadata": [], "user": "u", "collection": "c"}, "triples": []}}, False)
    embeddings = KnowledgeResponse(ids=None, graph_embeddings=GraphEmbeddings(
        metadata=meta, entities=[EntityEmbeddings(entity=Term(type=BLANK, id="b0"), vectors=[[1.0]])]))
    assert reply("knowledge", embeddings)[0]["graph-embeddings"]["entities"] == [
        {"vectors": [[1.0]], "entity": {"t": "b", "d": "b0"}}]
    assert reply("knowledge", KnowledgeResponse(ids=None, eos=True)) == ({"eos": True}, True)
    assert reply("knowledge", KnowledgeResponse(ids=None)) == ({}, True)
    listed = CollectionManagementResponse(timestamp="now", collections=[CollectionMetadata(user="u", collection="c",
                                                                                           name="N", tags=["x"])])
    got, _ = reply("collection-management", listed)
    assert got == {"timestamp": "now", "collections": [{"user": "u", "collection": "c", "name": "N",
                                                        "description": "", "tags": ["x"]}]}
    # Upstream's one response translator used both ways (the collection service builds replies with it).
    rebuilt = TranslatorRegistry.get_response_translator("collection-management").to_pulsar(got)
    assert rebuilt == listed


def test_response_translators_do_not_make_responses() -> None:
    with pytest.raises(NotImplementedError):
        TranslatorRegistry.get_response_translator("agent").to_pulsar({})
    with pytest.raises(NotImplementedError):
        TranslatorRegistry.get_response_translator("document-embeddings-query").to_pulsar({"chunk_ids": []})


# -- terms, documents, embeddings ------------------------------------------------------------------


def test_terms_of_every_kind_round_trip() -> None:
    from trustgraph.messaging.translators import SubgraphTranslator, TermTranslator
    terms = TermTranslator()
    quoted = {"t": "t", "tr": TRIPLE_JSON}
    for data in (IRI_TERM, LIT_TERM, {"t": "l", "v": "hei", "ln": "no"}, {"t": "b", "d": "b1"}, quoted):
        record = on_the_wire(Triple(s=terms.to_pulsar(data))).s
        assert terms.from_pulsar(record) == data
    assert terms.to_pulsar(quoted).triple.o == Term(type=LITERAL, value="x", datatype=LIT_TERM["dt"])
    assert terms.to_pulsar({"t": TRIPLE}).triple is None
    graph = {**TRIPLE_JSON, "g": "http://ex/g"}
    assert SubgraphTranslator().from_pulsar(SubgraphTranslator().to_pulsar([graph, TRIPLE_JSON])) == [graph, TRIPLE_JSON]
    with pytest.raises(BadRequest, match="a term must be a JSON object"):
        terms.to_pulsar(["i"])


def test_row_schema_fields() -> None:
    from trustgraph.messaging.translators import row_schema_translator
    schema = RowSchema(name="people", description="d", fields=[
        Field(name="id", type="string", primary=True, indexed=True),
        Field(name="kind", type="string", enum_values=["a", "b"])])
    data = row_schema_translator.from_pulsar(on_the_wire(schema))
    assert data["fields"][0] == {"name": "id", "type": "string", "size": 0, "primary": True, "description": "",
                                 "required": False, "indexed": True}
    assert data["fields"][1]["enum_values"] == ["a", "b"]
    assert row_schema_translator.to_pulsar(data) == schema


def test_documents_sent_for_loading() -> None:
    text = TranslatorRegistry.get_request_translator("text-document")
    record = text.to_pulsar({"text": base64.b64encode("blåbær".encode("latin-1")).decode(), "charset": "latin-1",
                             "id": "doc", "metadata": [TRIPLE_JSON]})
    assert record.text == "blåbær".encode() and record.metadata.user == "trustgraph"
    assert text.from_pulsar(on_the_wire(record)) == {"text": "blåbær", "metadata": {
        "id": "doc", "user": "trustgraph", "collection": "default", "metadata": [TRIPLE_JSON]}}
    document = TranslatorRegistry.get_request_translator("document")
    pdf = base64.b64encode(b"%PDF").decode()
    record = document.to_pulsar({"data": pdf, "user": "u", "collection": "c"})
    assert record.data == pdf.encode() and (record.metadata.user, record.metadata.collection) == ("u", "c")
    assert document.from_pulsar(on_the_wire(record)) == {"data": pdf, "metadata": {"user": "u", "collection": "c"}}
    for bad, needle in (({"data": "***"}, "'data' is not valid base64"), ({}, "'data' is required")):
        with pytest.raises(BadRequest, match=needle):
            document.to_pulsar(bad)
    with pytest.raises(BadRequest, match="not utf-8 text"):
        text.to_pulsar({"text": base64.b64encode(b"\xff\xfe").decode()})


def test_chunks_and_document_embeddings() -> None:
    from trustgraph.messaging.translators import ChunkTranslator, DocumentEmbeddingsTranslator
    chunk = ChunkTranslator().to_pulsar({"chunk": "some text", "id": "c1"})
    assert chunk.chunk == b"some text" and ChunkTranslator().from_pulsar(on_the_wire(chunk)) == {
        "chunk": "some text", "metadata": {"id": "c1", "user": "trustgraph", "collection": "default"}}
    translator = DocumentEmbeddingsTranslator()
    record = translator.to_pulsar({"metadata": {"id": "d"}, "chunks": [{"chunk_id": "c1", "vectors": [[0.5]]}]})
    assert record == DocumentEmbeddings(metadata=Metadata(id="d", user="trustgraph", collection="default"),
                                        chunks=[ChunkEmbeddings(chunk_id="c1", vectors=[[0.5]])])
    assert translator.from_pulsar(on_the_wire(record)) == {
        "chunks": [{"chunk_id": "c1", "vectors": [[0.5]]}],
        "metadata": {"id": "d", "user": "trustgraph", "collection": "default"}}


# -- what ours refuses -------------------------------------------------------------------------------


@pytest.mark.parametrize("service,body,error,needle", [
    ("agent", {}, BadRequest, "'question' is required"),
    ("agent", {"question": "  "}, BadRequest, "the agent request's question is empty"),
    ("agent", {"question": 5}, SchemaError, "AgentRequest.question: expected str"),
    ("text-completion", {"system": "s"}, BadRequest, "'prompt' is required"),
    ("graph-rag", {"query": "q", "entity-limit": "many"}, BadRequest, "'entity-limit' must be a whole number"),
    ("document-rag", {}, BadRequest, "'query' is required"),
    ("graph-embeddings-query", {}, BadRequest, "'vectors' is required"),
    ("structured-diag", {"operation": "x"}, BadRequest, "'sample' is required"),
    ("prompt", {"variables": [1]}, BadRequest, "'variables' must be a JSON object"),
    ("flow", {"parameters": "x"}, BadRequest, "'parameters' must be a JSON object"),
    ("config", {"operation": "put", "values": "x"}, SchemaError, "ConfigRequest.values: expected list"),
    ("librarian", {"content": "***"}, BadRequest, "'content' is not valid base64"),
    ("knowledge", {"triples": [1]}, BadRequest, "a triples message must be a JSON object"),
])
def test_bad_requests_are_refused_with_the_field_named(service: str, body: dict, error: type, needle: str) -> None:
    with pytest.raises(error) as e:
        TranslatorRegistry.get_request_translator(service).to_pulsar(body)
    assert needle in str(e.value) and isinstance(e.value, ValueError)


def test_null_fields_take_the_defaults() -> None:
    record = request("agent", {"question": "q", "user": None, "history": None, "streaming": None})
    assert to_dict(record) == {"question": "q", "state": None, "group": None, "history": [], "user": "trustgraph",
                               "streaming": False}
    assert request("graph-rag", {"query": "q", "collection": None, "entity-limit": None}).collection == "default"
