"""One-way kinds: the ``text-load`` / ``document-load`` senders and the import/export sockets.

A sender takes one REST (or websocket) body, publishes one record on the
flow's interface topic and answers ``{}``.  The import sockets
(``/api/v1/flow/{flow}/import/{kind}``) publish one record per frame, the
export sockets send one frame per record; their interface in the flow is
``{kind}-store``, except entity-contexts' ``entity-contexts-load``
(upstream's names).
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from trustgraph.schema import (
    ChunkEmbeddings,
    Document,
    DocumentEmbeddings,
    EntityContext,
    EntityContexts,
    ExtractedObject,
    GraphEmbeddings,
    TextDocument,
    Triples,
)

from .base import DEFAULT_COLLECTION, DEFAULT_USER, BadRequest, JsonObject, as_object, build, required
from .library import (
    graph_embeddings_message,
    graph_embeddings_message_json,
    triples_message,
    triples_message_json,
)
from .terms import metadata_from_json, metadata_to_json, term_from_json, term_to_json


@dataclass(frozen=True)
class OneWay:
    """How a one-way kind's JSON becomes a record (``encode``) and back (``decode``)."""

    kind: str
    schema: type
    encode: Callable[[JsonObject], Any]
    decode: Callable[[Any], JsonObject] | None = None

    def request(self, body: Any) -> Any:
        """The record for a body, or :class:`BadRequest`."""
        from trustgraph.schema import SchemaError

        try:
            return self.encode(as_object(body, "the request"))
        except SchemaError as e:
            raise BadRequest(f"Bad request: {e}") from None


def interface_name(kind: str) -> str:
    """The flow interface an import/export kind uses."""
    return "entity-contexts-load" if kind == "entity-contexts" else f"{kind}-store"


def _b64decode(text: Any, what: str) -> bytes:
    if not isinstance(text, str):
        raise BadRequest(f"Bad request: '{what}' must be base64 text")
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise BadRequest(f"Bad request: '{what}' is not valid base64") from None


def _load_metadata(body: JsonObject) -> Any:
    return metadata_from_json({"id": body.get("id"), "metadata": body.get("metadata"),
                               "user": body.get("user") or DEFAULT_USER,
                               "collection": body.get("collection") or DEFAULT_COLLECTION})


def _text_load(body: JsonObject) -> TextDocument:
    raw = _b64decode(required(body, "text"), "text")
    charset = body.get("charset") or "utf-8"
    try:
        text = raw.decode(charset)
    except (LookupError, UnicodeDecodeError) as e:
        raise BadRequest(f"Bad request: 'text' is not {charset} text ({e})") from None
    return TextDocument(metadata=_load_metadata(body), text=text.encode("utf-8"))


def _document_load(body: JsonObject) -> Document:
    # The document travels as base64 text (checked here), as upstream's gateway sends it.
    data = base64.b64encode(_b64decode(required(body, "data"), "data"))
    return Document(metadata=_load_metadata(body), data=data)


SENDERS: dict[str, OneWay] = {
    "text-load": OneWay("text-load", TextDocument, _text_load),
    "document-load": OneWay("document-load", Document, _document_load),
}


def _entity_contexts(data: JsonObject) -> EntityContexts:
    return EntityContexts(metadata=metadata_from_json(data.get("metadata")), entities=[
        EntityContext(entity=term_from_json(e.get("entity")), context=str(e.get("context", "")))
        for e in data.get("entities") or []])


def _entity_contexts_json(m: EntityContexts) -> JsonObject:
    return {"metadata": metadata_to_json(m.metadata),
            "entities": [{"context": e.context, "entity": term_to_json(e.entity)} for e in m.entities or []]}


def _document_embeddings(data: JsonObject) -> DocumentEmbeddings:
    meta = as_object(data.get("metadata"), "metadata")
    return DocumentEmbeddings(
        metadata=metadata_from_json(meta, user=DEFAULT_USER, collection=DEFAULT_COLLECTION),
        chunks=[build(ChunkEmbeddings, {"chunk_id": c.get("chunk_id"), "vectors": c.get("vectors")})
                for c in data.get("chunks") or []])


def _document_embeddings_json(m: DocumentEmbeddings) -> JsonObject:
    return {"metadata": metadata_to_json(m.metadata),
            "chunks": [{"vectors": c.vectors, "chunk_id": c.chunk_id} for c in m.chunks or []]}


def _rows(data: JsonObject) -> ExtractedObject:
    values = data.get("values")
    meta = as_object(data.get("metadata"), "metadata")
    record = build(ExtractedObject, {"schema_name": data.get("schema_name"),
                                     "values": values if isinstance(values, list) else [values],
                                     "confidence": data.get("confidence", 1.0),
                                     "source_span": data.get("source_span", "")})
    record.metadata = metadata_from_json(meta)
    return record


IMPORTS: dict[str, OneWay] = {
    "triples": OneWay("triples", Triples, triples_message),
    "graph-embeddings": OneWay("graph-embeddings", GraphEmbeddings, graph_embeddings_message),
    "document-embeddings": OneWay("document-embeddings", DocumentEmbeddings, _document_embeddings),
    "entity-contexts": OneWay("entity-contexts", EntityContexts, _entity_contexts),
    "rows": OneWay("rows", ExtractedObject, _rows),
}

EXPORTS: dict[str, OneWay] = {
    "triples": OneWay("triples", Triples, triples_message, triples_message_json),
    "graph-embeddings": OneWay("graph-embeddings", GraphEmbeddings, graph_embeddings_message,
                               graph_embeddings_message_json),
    "document-embeddings": OneWay("document-embeddings", DocumentEmbeddings, _document_embeddings,
                                  _document_embeddings_json),
    "entity-contexts": OneWay("entity-contexts", EntityContexts, _entity_contexts, _entity_contexts_json),
}
