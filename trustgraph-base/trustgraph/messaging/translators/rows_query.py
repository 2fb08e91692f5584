"""Rows query (GraphQL over structured data): a query and its variables in, GraphQL's answer out."""

from __future__ import annotations

from trustgraph.base.formats.text import json_or_text
from trustgraph.schema import RowsQueryRequest, RowsQueryResponse

from .base import (
    DEFAULT_COLLECTION,
    DEFAULT_USER,
    JsonObject,
    MessageTranslator,
    ResponseOnly,
    build,
    error_json,
    given,
)

__all__ = ["RowsQueryRequestTranslator", "RowsQueryResponseTranslator"]


class RowsQueryRequestTranslator(MessageTranslator):
    """``user``, ``collection``, ``query``, ``variables`` (passed on as given), ``operation_name``."""

    def to_pulsar(self, data: JsonObject) -> RowsQueryRequest:
        return build(RowsQueryRequest, {
            "user": given(data, "user", DEFAULT_USER), "collection": given(data, "collection", DEFAULT_COLLECTION),
            "query": given(data, "query", ""), "variables": given(data, "variables", {}),
            "operation_name": data.get("operation_name")})

    def from_pulsar(self, obj: RowsQueryRequest) -> JsonObject:
        out: JsonObject = {"user": obj.user, "collection": obj.collection, "query": obj.query,
                           "variables": dict(obj.variables or {})}
        if obj.operation_name:
            out["operation_name"] = obj.operation_name
        return out


class RowsQueryResponseTranslator(ResponseOnly):
    """``data`` (decoded; null when empty), ``errors`` and ``extensions`` when there are some."""

    def from_pulsar(self, obj: RowsQueryResponse) -> JsonObject:
        out: JsonObject = {"data": json_or_text(obj.data) if obj.data else None}
        if obj.errors:
            out["errors"] = [{"message": e.message, **({"path": list(e.path)} if e.path else {}),
                              **({"extensions": dict(e.extensions)} if e.extensions else {})} for e in obj.errors]
        if obj.extensions:
            out["extensions"] = dict(obj.extensions)
        if obj.error is not None:
            out["error"] = error_json(obj.error)
        return out
