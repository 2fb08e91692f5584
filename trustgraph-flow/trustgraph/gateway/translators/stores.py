"""Flow kinds served by upstream processors this fork does not ship (as upstream 2.1.4's gateway routes them).

document-rag, the graph/document/row embeddings queries, triples, rows
(GraphQL), nlp-query and structured-diag: the gateway routes them to
whatever serves the flow's interface, translating as upstream's gateway
does, so an upstream processor behind our gateway answers upstream clients
unchanged.  Every one of these gives a single response except document-rag,
which streams to ``end_of_stream``.
"""

from __future__ import annotations

from typing import Any

from trustgraph.base.safety import limits
from trustgraph.schema import (
    DocumentEmbeddingsRequest,
    DocumentEmbeddingsResponse,
    DocumentRagQuery,
    DocumentRagResponse,
    GraphEmbeddingsRequest,
    GraphEmbeddingsResponse,
    QuestionToStructuredQueryRequest,
    QuestionToStructuredQueryResponse,
    RowEmbeddingsRequest,
    RowEmbeddingsResponse,
    RowsQueryRequest,
    RowsQueryResponse,
    StructuredDataDiagnosisRequest,
    StructuredDataDiagnosisResponse,
    TriplesQueryRequest,
    TriplesQueryResponse,
)

from .base import (
    DEFAULT_COLLECTION,
    DEFAULT_USER,
    JsonObject,
    Translator,
    build,
    first,
    given,
    is_end_of_stream,
    required,
    translator,
)
from .terms import term_from_json, term_to_json, triples_to_json


def _json_or_text(text: str) -> Any:
    try:
        return limits.loads(text)
    except (TypeError, ValueError):
        return text


def _document_rag_request(body: JsonObject) -> DocumentRagQuery:
    return build(DocumentRagQuery, {
        "query": required(body, "query"), "user": given(body, "user", DEFAULT_USER),
        "collection": given(body, "collection", DEFAULT_COLLECTION),
        "doc_limit": given(body, "doc-limit", 20), "streaming": given(body, "streaming", False)})


def _document_rag_response(r: DocumentRagResponse) -> JsonObject:
    out: JsonObject = {}
    if r.response is not None:
        out["response"] = r.response
    out["end_of_stream"] = bool(r.end_of_stream)
    return out


def _vectors_request(cls: type) -> Any:
    def encode(body: JsonObject) -> Any:
        return build(cls, {"vectors": required(body, "vectors"), "limit": given(body, "limit", 10),
                           "user": given(body, "user", DEFAULT_USER),
                           "collection": given(body, "collection", DEFAULT_COLLECTION)})
    return encode


def _graph_embeddings_response(r: GraphEmbeddingsResponse) -> JsonObject:
    return {} if r.entities is None else {"entities": [term_to_json(t) for t in r.entities]}


def _document_embeddings_response(r: DocumentEmbeddingsResponse) -> JsonObject:
    return {} if r.chunk_ids is None else {"chunk_ids": list(r.chunk_ids)}


def _row_embeddings_request(body: JsonObject) -> RowEmbeddingsRequest:
    return build(RowEmbeddingsRequest, {
        "vectors": required(body, "vectors"), "limit": given(body, "limit", 10),
        "user": given(body, "user", DEFAULT_USER), "collection": given(body, "collection", DEFAULT_COLLECTION),
        "schema_name": given(body, "schema_name", ""), "index_name": body.get("index_name")})


def _row_embeddings_response(r: RowEmbeddingsResponse) -> JsonObject:
    if r.matches is None:
        return {}
    return {"matches": [{"index_name": m.index_name, "index_value": m.index_value, "text": m.text,
                         "score": m.score} for m in r.matches]}


def _triples_request(body: JsonObject) -> TriplesQueryRequest:
    record = build(TriplesQueryRequest, {"limit": given(body, "limit", 10000),
                                         "user": given(body, "user", DEFAULT_USER),
                                         "collection": given(body, "collection", DEFAULT_COLLECTION),
                                         "g": body.get("g")})
    for position in ("s", "p", "o"):
        if position in body:
            setattr(record, position, term_from_json(body[position]))
    return record


def _triples_response(r: TriplesQueryResponse) -> JsonObject:
    return {"response": triples_to_json(r.triples)}


def _rows_request(body: JsonObject) -> RowsQueryRequest:
    return build(RowsQueryRequest, {
        "user": given(body, "user", DEFAULT_USER), "collection": given(body, "collection", DEFAULT_COLLECTION),
        "query": given(body, "query", ""), "variables": given(body, "variables", {}),
        "operation_name": body.get("operation_name")})


def _rows_response(r: RowsQueryResponse) -> JsonObject:
    out: JsonObject = {"data": _json_or_text(r.data) if r.data else None}
    if r.errors:
        out["errors"] = [{"message": e.message, **({"path": list(e.path)} if e.path else {}),
                          **({"extensions": dict(e.extensions)} if e.extensions else {})} for e in r.errors]
    if r.extensions:
        out["extensions"] = dict(r.extensions)
    return out


def _nlp_query_request(body: JsonObject) -> QuestionToStructuredQueryRequest:
    return build(QuestionToStructuredQueryRequest, {"question": given(body, "question", ""),
                                                    "max_results": given(body, "max_results", 100)})


def _nlp_query_response(r: QuestionToStructuredQueryResponse) -> JsonObject:
    return {"graphql_query": r.graphql_query, "variables": dict(r.variables or {}),
            "detected_schemas": list(r.detected_schemas or []), "confidence": r.confidence}


def _structured_diag_request(body: JsonObject) -> StructuredDataDiagnosisRequest:
    return build(StructuredDataDiagnosisRequest, {
        "operation": required(body, "operation"), "sample": required(body, "sample"),
        "type": given(body, "type", ""), "schema_name": given(body, "schema-name", ""),
        "options": given(body, "options", {})})


def _structured_diag_response(r: StructuredDataDiagnosisResponse) -> JsonObject:
    out: JsonObject = {"operation": r.operation}
    if r.detected_type:
        out["detected-type"] = r.detected_type
    if r.confidence is not None:
        out["confidence"] = r.confidence
    if r.descriptor:
        out["descriptor"] = _json_or_text(r.descriptor)
    if r.metadata:
        out["metadata"] = r.metadata
    if r.operation == "schema-selection" or r.schema_matches:
        out["schema-matches"] = r.schema_matches
    return out


STORE_KINDS: dict[str, Translator] = {
    "document-rag": translator("document-rag", DocumentRagQuery, DocumentRagResponse, _document_rag_request,
                               _document_rag_response, is_end_of_stream),
    "graph-embeddings": translator("graph-embeddings", GraphEmbeddingsRequest, GraphEmbeddingsResponse,
                                   _vectors_request(GraphEmbeddingsRequest), _graph_embeddings_response, first),
    "document-embeddings": translator("document-embeddings", DocumentEmbeddingsRequest,
                                      DocumentEmbeddingsResponse, _vectors_request(DocumentEmbeddingsRequest),
                                      _document_embeddings_response, first),
    "row-embeddings": translator("row-embeddings", RowEmbeddingsRequest, RowEmbeddingsResponse,
                                 _row_embeddings_request, _row_embeddings_response, first),
    "triples": translator("triples", TriplesQueryRequest, TriplesQueryResponse, _triples_request,
                          _triples_response, first),
    "rows": translator("rows", RowsQueryRequest, RowsQueryResponse, _rows_request, _rows_response, first),
    "nlp-query": translator("nlp-query", QuestionToStructuredQueryRequest, QuestionToStructuredQueryResponse,
                            _nlp_query_request, _nlp_query_response, first),
    "structured-diag": translator("structured-diag", StructuredDataDiagnosisRequest,
                                  StructuredDataDiagnosisResponse, _structured_diag_request,
                                  _structured_diag_response, first),
}
