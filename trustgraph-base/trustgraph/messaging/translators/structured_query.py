"""Structured query: a question over structured data in, the data (and any errors) out."""

from __future__ import annotations

from trustgraph.base.formats.text import json_or_text
from trustgraph.schema import StructuredQueryRequest, StructuredQueryResponse, from_dict

from .base import (
    DEFAULT_COLLECTION,
    DEFAULT_USER,
    JsonObject,
    MessageTranslator,
    ResponseOnly,
    error_json,
    given,
)

__all__ = ["StructuredQueryRequestTranslator", "StructuredQueryResponseTranslator"]


class StructuredQueryRequestTranslator(MessageTranslator):
    """``question``, ``user``, ``collection``."""

    def to_pulsar(self, data: JsonObject) -> StructuredQueryRequest:
        return from_dict(StructuredQueryRequest, {"question": given(data, "question", ""),
                                                  "user": given(data, "user", DEFAULT_USER),
                                                  "collection": given(data, "collection", DEFAULT_COLLECTION)})

    def from_pulsar(self, obj: StructuredQueryRequest) -> JsonObject:
        return {"question": obj.question, "user": obj.user, "collection": obj.collection}


class StructuredQueryResponseTranslator(ResponseOnly):
    """``data`` (decoded; null when empty) and ``errors`` (a list, maybe empty)."""

    def from_pulsar(self, obj: StructuredQueryResponse) -> JsonObject:
        out: JsonObject = {"data": json_or_text(obj.data) if obj.data else None, "errors": list(obj.errors or [])}
        if obj.error is not None:
            out["error"] = error_json(obj.error)
        return out
