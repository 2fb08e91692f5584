"""Graph RAG and document RAG: a question in, the answer (streamed or whole) out.

The limits are read as upstream reads them (``int(...)``, so ``"5"`` is 5),
with kebab-case keys.
"""

from __future__ import annotations

from typing import Any

from trustgraph.schema import (
    DocumentRagQuery,
    GraphRagQuery,
    from_dict,
)

from .base import (
    DEFAULT_COLLECTION,
    DEFAULT_USER,
    JsonObject,
    MessageTranslator,
    ResponseOnly,
    error_json,
    given,
    required,
    whole_number,
)

__all__ = ["DocumentRagRequestTranslator", "DocumentRagResponseTranslator", "GraphRagRequestTranslator",
           "GraphRagResponseTranslator"]


class _RagResponse(ResponseOnly):
    """``response`` when not null (an empty last chunk too), ``end_of_stream``, which ends the call."""

    def from_pulsar(self, obj: Any) -> JsonObject:
        out: JsonObject = {}
        if obj.response is not None:
            out["response"] = obj.response
        out["end_of_stream"] = bool(obj.end_of_stream)
        if obj.error is not None and obj.error.message:
            out["error"] = error_json(obj.error)
        return out

    def from_response_with_completion(self, obj: Any) -> tuple[JsonObject, bool]:
        return self.from_pulsar(obj), bool(obj.end_of_stream)


class GraphRagRequestTranslator(MessageTranslator):
    """``query``, ``user``, ``collection``, ``entity-limit`` 50, ``triple-limit`` 30,
    ``max-subgraph-size`` 1000, ``max-path-length`` 2, ``streaming``."""

    def to_pulsar(self, data: JsonObject) -> GraphRagQuery:
        return from_dict(GraphRagQuery, {
            "query": given(data, "query", ""),
            "user": given(data, "user", DEFAULT_USER),
            "collection": given(data, "collection", DEFAULT_COLLECTION),
            "entity_limit": whole_number(data, "entity-limit", 50),
            "triple_limit": whole_number(data, "triple-limit", 30),
            "max_subgraph_size": whole_number(data, "max-subgraph-size", 1000),
            "max_path_length": whole_number(data, "max-path-length", 2),
            "streaming": given(data, "streaming", False),
        })

    def from_pulsar(self, obj: GraphRagQuery) -> JsonObject:
        return {"query": obj.query, "user": obj.user, "collection": obj.collection,
                "entity-limit": obj.entity_limit, "triple-limit": obj.triple_limit,
                "max-subgraph-size": obj.max_subgraph_size, "max-path-length": obj.max_path_length,
                "streaming": obj.streaming}


class GraphRagResponseTranslator(_RagResponse):
    pass


class DocumentRagRequestTranslator(MessageTranslator):
    """``query`` (required), ``user``, ``collection``, ``doc-limit`` 20, ``streaming``."""

    def to_pulsar(self, data: JsonObject) -> DocumentRagQuery:
        return from_dict(DocumentRagQuery, {
            "query": required(data, "query"),
            "user": given(data, "user", DEFAULT_USER),
            "collection": given(data, "collection", DEFAULT_COLLECTION),
            "doc_limit": whole_number(data, "doc-limit", 20),
            "streaming": given(data, "streaming", False),
        })

    def from_pulsar(self, obj: DocumentRagQuery) -> JsonObject:
        return {"query": obj.query, "user": obj.user, "collection": obj.collection,
                "doc-limit": obj.doc_limit, "streaming": obj.streaming}


class DocumentRagResponseTranslator(_RagResponse):
    pass
