"""Collection management: list, update and delete a user's collections."""

from __future__ import annotations

from trustgraph.schema import (
    CollectionManagementRequest,
    CollectionManagementResponse,
    CollectionMetadata,
    Error,
)

from .base import JsonObject, MessageTranslator, as_object, build, error_json, list_of

__all__ = ["CollectionManagementRequestTranslator", "CollectionManagementResponseTranslator"]

_REQUEST = ("operation", "user", "collection", "timestamp", "name", "description", "tags", "tag_filter", "limit")


class CollectionManagementRequestTranslator(MessageTranslator):
    """The request's fields under their own names; absent ones take the record's defaults."""

    def to_pulsar(self, data: JsonObject) -> CollectionManagementRequest:
        return build(CollectionManagementRequest, {k: data.get(k) for k in _REQUEST})

    def from_pulsar(self, obj: CollectionManagementRequest) -> JsonObject:
        out: JsonObject = {}
        for name in _REQUEST:
            value = getattr(obj, name)
            if value is not None:
                out[name] = list(value) if name in ("tags", "tag_filter") else value
        return out


def _collection_json(c: CollectionMetadata) -> JsonObject:
    return {"user": c.user, "collection": c.collection, "name": c.name, "description": c.description,
            "tags": list(c.tags or [])}


class CollectionManagementResponseTranslator(MessageTranslator):
    """``timestamp`` and ``collections`` when not null.  Both directions, as upstream: the
    collection service builds its responses from this JSON."""

    def to_pulsar(self, data: JsonObject) -> CollectionManagementResponse:
        error = as_object(data.get("error"), "'error'")
        collections = [build(CollectionMetadata, as_object(c, "a collection"))
                       for c in list_of(data.get("collections"), "'collections'")]
        return CollectionManagementResponse(
            error=build(Error, error) if error else None, timestamp=data.get("timestamp") or "",
            collections=collections)

    def from_pulsar(self, obj: CollectionManagementResponse) -> JsonObject:
        out: JsonObject = {}
        if obj.error is not None:
            out["error"] = error_json(obj.error)
        if obj.timestamp is not None:
            out["timestamp"] = obj.timestamp
        if obj.collections is not None:
            out["collections"] = [_collection_json(c) for c in obj.collections]
        return out
