"""Vector queries: graph embeddings (entities), document embeddings (chunk ids) and row embeddings
(index matches) nearest to the given vectors."""

from __future__ import annotations

from typing import Any

from trustgraph.schema import (
    DocumentEmbeddingsRequest,
    DocumentEmbeddingsResponse,
    GraphEmbeddingsRequest,
    GraphEmbeddingsResponse,
    RowEmbeddingsRequest,
    RowEmbeddingsResponse,
)

from .base import (
    DEFAULT_COLLECTION,
    DEFAULT_USER,
    JsonObject,
    MessageTranslator,
    ResponseOnly,
    build,
    error_json,
    given,
    required,
    whole_number,
)
from .primitives import term_to_json

__all__ = ["DocumentEmbeddingsRequestTranslator", "DocumentEmbeddingsResponseTranslator",
           "GraphEmbeddingsRequestTranslator", "GraphEmbeddingsResponseTranslator",
           "RowEmbeddingsRequestTranslator", "RowEmbeddingsResponseTranslator"]


class _VectorsRequest(MessageTranslator):
    """``vectors`` (required), ``limit`` 10, ``user``, ``collection``."""

    record: type

    def to_pulsar(self, data: JsonObject) -> Any:
        return build(self.record, {"vectors": required(data, "vectors"), "limit": whole_number(data, "limit", 10),
                                   "user": given(data, "user", DEFAULT_USER),
                                   "collection": given(data, "collection", DEFAULT_COLLECTION)})

    def from_pulsar(self, obj: Any) -> JsonObject:
        return {"vectors": obj.vectors, "limit": obj.limit, "user": obj.user, "collection": obj.collection}


class GraphEmbeddingsRequestTranslator(_VectorsRequest):
    record = GraphEmbeddingsRequest


class DocumentEmbeddingsRequestTranslator(_VectorsRequest):
    record = DocumentEmbeddingsRequest


class GraphEmbeddingsResponseTranslator(ResponseOnly):
    """``entities`` (terms) when not null."""

    def from_pulsar(self, obj: GraphEmbeddingsResponse) -> JsonObject:
        return {} if obj.entities is None else {"entities": [term_to_json(t) for t in obj.entities]}


class DocumentEmbeddingsResponseTranslator(ResponseOnly):
    """``chunk_ids`` when not null."""

    def from_pulsar(self, obj: DocumentEmbeddingsResponse) -> JsonObject:
        return {} if obj.chunk_ids is None else {"chunk_ids": list(obj.chunk_ids)}


class RowEmbeddingsRequestTranslator(MessageTranslator):
    """The vector query's fields, ``schema_name`` and ``index_name`` (null: every index)."""

    def to_pulsar(self, data: JsonObject) -> RowEmbeddingsRequest:
        return build(RowEmbeddingsRequest, {
            "vectors": required(data, "vectors"), "limit": whole_number(data, "limit", 10),
            "user": given(data, "user", DEFAULT_USER), "collection": given(data, "collection", DEFAULT_COLLECTION),
            "schema_name": given(data, "schema_name", ""), "index_name": data.get("index_name")})

    def from_pulsar(self, obj: RowEmbeddingsRequest) -> JsonObject:
        out: JsonObject = {"vectors": obj.vectors, "limit": obj.limit, "user": obj.user,
                           "collection": obj.collection, "schema_name": obj.schema_name}
        if obj.index_name:
            out["index_name"] = obj.index_name
        return out


class RowEmbeddingsResponseTranslator(ResponseOnly):
    """``matches`` (index name and values, the text, the score) when not null."""

    def from_pulsar(self, obj: RowEmbeddingsResponse) -> JsonObject:
        out: JsonObject = {}
        if obj.error is not None:
            out["error"] = error_json(obj.error)
        if obj.matches is not None:
            out["matches"] = [{"index_name": m.index_name, "index_value": m.index_value, "text": m.text,
                               "score": m.score} for m in obj.matches]
        return out
