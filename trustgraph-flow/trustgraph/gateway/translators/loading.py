"""One-way kinds: the ``text-load`` / ``document-load`` senders and the import/export sockets.

A sender takes one REST (or websocket) body, publishes one record on the
flow's interface topic and answers ``{}``.  The import sockets
(``/api/v1/flow/{flow}/import/{kind}``) publish one record per frame, the
export sockets send one frame per record; their interface in the flow is
``{kind}-store``, except entity-contexts' ``entity-contexts-load``
(upstream's names).  Documents, texts, triples, graph and document
embeddings are read by :mod:`trustgraph.messaging`'s translators; entity
contexts, rows and the export frames are the gateway's own (upstream's
gateway writes them itself too).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from trustgraph.messaging.translators import (
    DocumentEmbeddingsTranslator,
    DocumentTranslator,
    GraphEmbeddingsTranslator,
    TextDocumentTranslator,
    TriplesTranslator,
)
from trustgraph.messaging.translators.base import as_object, build
from trustgraph.messaging.translators.metadata import metadata_from_json, metadata_to_json
from trustgraph.messaging.translators.primitives import term_from_json, term_to_json
from trustgraph.schema import (
    Document,
    DocumentEmbeddings,
    EntityContext,
    EntityContexts,
    ExtractedObject,
    GraphEmbeddings,
    SchemaError,
    TextDocument,
    Triples,
)

from .base import BadRequest, JsonObject


@dataclass(frozen=True)
class OneWay:
    """How a one-way kind's JSON becomes a record (``encode``) and back (``decode``)."""

    kind: str
    schema: type
    encode: Callable[[JsonObject], Any]
    decode: Callable[[Any], JsonObject] | None = None

    def request(self, body: Any) -> Any:
        """The record for a body, or :class:`BadRequest`."""
        try:
            return self.encode(as_object(body, "the request"))
        except SchemaError as e:
            raise BadRequest(f"Bad request: {e}") from None


def interface_name(kind: str) -> str:
    """The flow interface an import/export kind uses."""
    return "entity-contexts-load" if kind == "entity-contexts" else f"{kind}-store"


SENDERS: dict[str, OneWay] = {
    "text-load": OneWay("text-load", TextDocument, TextDocumentTranslator().to_pulsar),
    "document-load": OneWay("document-load", Document, DocumentTranslator().to_pulsar),
}


def _entity_contexts(data: JsonObject) -> EntityContexts:
    return EntityContexts(metadata=metadata_from_json(data.get("metadata")), entities=[
        EntityContext(entity=term_from_json(e.get("entity")), context=str(e.get("context", "")))
        for e in data.get("entities") or []])


def _entity_contexts_json(m: EntityContexts) -> JsonObject:
    return {"metadata": metadata_to_json(m.metadata),
            "entities": [{"context": e.context, "entity": term_to_json(e.entity)} for e in m.entities or []]}


def _document_embeddings_json(m: DocumentEmbeddings) -> JsonObject:
    """An export frame: the whole metadata header (upstream's gateway writes every key here)."""
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


_TRIPLES = TriplesTranslator()
_GRAPH_EMBEDDINGS = GraphEmbeddingsTranslator()
_DOCUMENT_EMBEDDINGS = DocumentEmbeddingsTranslator()

IMPORTS: dict[str, OneWay] = {
    "triples": OneWay("triples", Triples, _TRIPLES.to_pulsar),
    "graph-embeddings": OneWay("graph-embeddings", GraphEmbeddings, _GRAPH_EMBEDDINGS.to_pulsar),
    "document-embeddings": OneWay("document-embeddings", DocumentEmbeddings, _DOCUMENT_EMBEDDINGS.to_pulsar),
    "entity-contexts": OneWay("entity-contexts", EntityContexts, _entity_contexts),
    "rows": OneWay("rows", ExtractedObject, _rows),
}

EXPORTS: dict[str, OneWay] = {
    "triples": OneWay("triples", Triples, _TRIPLES.to_pulsar, _TRIPLES.from_pulsar),
    "graph-embeddings": OneWay("graph-embeddings", GraphEmbeddings, _GRAPH_EMBEDDINGS.to_pulsar,
                               _GRAPH_EMBEDDINGS.from_pulsar),
    "document-embeddings": OneWay("document-embeddings", DocumentEmbeddings, _DOCUMENT_EMBEDDINGS.to_pulsar,
                                  _document_embeddings_json),
    "entity-contexts": OneWay("entity-contexts", EntityContexts, _entity_contexts, _entity_contexts_json),
}
