"""Question to structured query: a question in, a GraphQL query for it out."""

from __future__ import annotations

from trustgraph.schema import QuestionToStructuredQueryRequest, QuestionToStructuredQueryResponse

from .base import JsonObject, MessageTranslator, ResponseOnly, build, error_json, given

__all__ = ["QuestionToStructuredQueryRequestTranslator", "QuestionToStructuredQueryResponseTranslator"]


class QuestionToStructuredQueryRequestTranslator(MessageTranslator):
    """``question``, ``max_results`` 100."""

    def to_pulsar(self, data: JsonObject) -> QuestionToStructuredQueryRequest:
        return build(QuestionToStructuredQueryRequest, {"question": given(data, "question", ""),
                                                        "max_results": given(data, "max_results", 100)})

    def from_pulsar(self, obj: QuestionToStructuredQueryRequest) -> JsonObject:
        return {"question": obj.question, "max_results": obj.max_results}


class QuestionToStructuredQueryResponseTranslator(ResponseOnly):
    """``graphql_query``, ``variables``, ``detected_schemas``, ``confidence``."""

    def from_pulsar(self, obj: QuestionToStructuredQueryResponse) -> JsonObject:
        out: JsonObject = {"graphql_query": obj.graphql_query, "variables": dict(obj.variables or {}),
                           "detected_schemas": list(obj.detected_schemas or []), "confidence": obj.confidence}
        if obj.error is not None:
            out["error"] = error_json(obj.error)
        return out
