"""Global kinds of upstream services this fork does not ship: librarian, knowledge, collections.

Reached on fixed topics (``POST /api/v1/{kind}``), translated as upstream's
gateway does: kebab-case on the JSON side, base64 text for document content
(checked here, as upstream re-encodes it), knowledge cores streamed as
``triples`` / ``graph-embeddings`` messages until one with ``eos``.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

from trustgraph.schema import (
    CollectionManagementRequest,
    CollectionManagementResponse,
    Criteria,
    DocumentMetadata,
    EntityEmbeddings,
    GraphEmbeddings,
    KnowledgeRequest,
    KnowledgeResponse,
    LibrarianRequest,
    LibrarianResponse,
    ProcessingMetadata,
    Triples,
)

from .base import BadRequest, JsonObject, Translator, as_object, build, first, translator
from .terms import (
    metadata_from_json,
    metadata_to_json,
    term_from_json,
    term_to_json,
    triples_from_json,
    triples_to_json,
)

# -- librarian ------------------------------------------------------------------------------

_DOC_FIELDS = (("id", "id"), ("time", "time"), ("kind", "kind"), ("title", "title"),
               ("comments", "comments"), ("user", "user"), ("tags", "tags"),
               ("parent-id", "parent_id"), ("document-type", "document_type"))
_PROC_FIELDS = (("id", "id"), ("document-id", "document_id"), ("time", "time"), ("flow", "flow"),
                ("user", "user"), ("collection", "collection"), ("tags", "tags"))


def _document_metadata(data: Any) -> DocumentMetadata:
    data = as_object(data, "'document-metadata'")
    record = build(DocumentMetadata, {dst: data.get(src) for src, dst in _DOC_FIELDS})
    record.metadata = triples_from_json(data.get("metadata"))
    return record


def _document_metadata_json(m: DocumentMetadata) -> JsonObject:
    out: JsonObject = {src: getattr(m, dst) for src, dst in _DOC_FIELDS
                       if getattr(m, dst) or (dst == "tags" and m.tags is not None)}
    if m.metadata is not None:
        out["metadata"] = triples_to_json(m.metadata)
    return out


def _processing_metadata_json(m: ProcessingMetadata) -> JsonObject:
    return {src: getattr(m, dst) for src, dst in _PROC_FIELDS
            if getattr(m, dst) or (dst == "tags" and m.tags is not None)}


def _base64(text: Any) -> bytes:
    """Document content: base64 text, checked and kept as that text (what the librarian stores)."""
    if not isinstance(text, str):
        raise BadRequest("Bad request: 'content' must be base64 text")
    try:
        return base64.b64encode(base64.b64decode(text, validate=True))
    except (binascii.Error, ValueError):
        raise BadRequest("Bad request: 'content' is not valid base64") from None


def _librarian_request(body: JsonObject) -> LibrarianRequest:
    record = build(LibrarianRequest, {
        "operation": body.get("operation"), "document_id": body.get("document-id"),
        "processing_id": body.get("processing-id"), "user": body.get("user"),
        "collection": body.get("collection"), "total_size": body.get("total-size"),
        "chunk_size": body.get("chunk-size"), "upload_id": body.get("upload-id"),
        "chunk_index": body.get("chunk-index"), "include_children": body.get("include-children")})
    if "document-metadata" in body:
        record.document_metadata = _document_metadata(body["document-metadata"])
    if "processing-metadata" in body:
        data = as_object(body["processing-metadata"], "'processing-metadata'")
        record.processing_metadata = build(ProcessingMetadata, {dst: data.get(src) for src, dst in _PROC_FIELDS})
    if "criteria" in body:
        record.criteria = [build(Criteria, c) for c in body["criteria"] or []]
    if "content" in body:
        record.content = _base64(body["content"])
    return record


def _librarian_response(r: LibrarianResponse) -> JsonObject:
    out: JsonObject = {}
    if r.document_metadata:
        out["document-metadata"] = _document_metadata_json(r.document_metadata)
    if r.content:
        out["content"] = r.content.decode("utf-8") if isinstance(r.content, bytes) else r.content
    if r.document_metadatas is not None:
        out["document-metadatas"] = [_document_metadata_json(m) for m in r.document_metadatas]
    if r.processing_metadatas is not None:
        out["processing-metadatas"] = [_processing_metadata_json(m) for m in r.processing_metadatas]
    for src, dst in (("upload-id", "upload_id"), ("chunk-size", "chunk_size"), ("total-chunks", "total_chunks"),
                     ("chunk-index", "chunk_index"), ("chunks-received", "chunks_received"),
                     ("bytes-received", "bytes_received"), ("total-bytes", "total_bytes"),
                     ("document-id", "document_id"), ("object-id", "object_id"),
                     ("upload-state", "upload_state"), ("received-chunks", "received_chunks"),
                     ("missing-chunks", "missing_chunks")):
        if getattr(r, dst):
            out[src] = getattr(r, dst)
    if r.upload_sessions:
        out["upload-sessions"] = [
            {"upload-id": s.upload_id, "document-id": s.document_id,
             "document-metadata-json": s.document_metadata_json, "total-size": s.total_size,
             "chunk-size": s.chunk_size, "total-chunks": s.total_chunks,
             "chunks-received": s.chunks_received, "created-at": s.created_at} for s in r.upload_sessions]
    return out


# -- knowledge ------------------------------------------------------------------------------


def triples_message(data: Any) -> Triples:
    """``{"metadata", "triples"}`` as a Triples record (also the triples import socket's frame)."""
    data = as_object(data, "a triples message")
    return Triples(metadata=metadata_from_json(data.get("metadata")), triples=triples_from_json(data.get("triples")))


def triples_message_json(t: Triples) -> JsonObject:
    return {"metadata": metadata_to_json(t.metadata), "triples": triples_to_json(t.triples)}


def graph_embeddings_message(data: Any) -> GraphEmbeddings:
    """``{"metadata", "entities": [{"entity", "vectors"}]}`` as a GraphEmbeddings record."""
    data = as_object(data, "a graph-embeddings message")
    return GraphEmbeddings(metadata=metadata_from_json(data.get("metadata")), entities=[
        EntityEmbeddings(entity=term_from_json(e.get("entity")), vectors=e.get("vectors") or [])
        for e in data.get("entities") or []])


def graph_embeddings_message_json(g: GraphEmbeddings) -> JsonObject:
    return {"metadata": metadata_to_json(g.metadata),
            "entities": [{"vectors": e.vectors, "entity": term_to_json(e.entity)} for e in g.entities or []]}


def _knowledge_request(body: JsonObject) -> KnowledgeRequest:
    record = build(KnowledgeRequest, {k: body.get(k) for k in ("operation", "user", "id", "flow", "collection")})
    if "triples" in body:
        record.triples = triples_message(body["triples"])
    if "graph-embeddings" in body:
        record.graph_embeddings = graph_embeddings_message(body["graph-embeddings"])
    return record


def _knowledge_response(r: KnowledgeResponse) -> JsonObject:
    if r.ids is not None:
        return {"ids": r.ids}
    if r.triples:
        return {"triples": triples_message_json(r.triples)}
    if r.graph_embeddings:
        return {"graph-embeddings": graph_embeddings_message_json(r.graph_embeddings)}
    return {"eos": True} if r.eos else {}


def _knowledge_final(r: KnowledgeResponse) -> bool:
    return r.ids is not None or bool(r.eos) or (not r.triples and not r.graph_embeddings)


# -- collection management --------------------------------------------------------------------


def _collection_request(body: JsonObject) -> CollectionManagementRequest:
    return build(CollectionManagementRequest, {k: body.get(k) for k in (
        "operation", "user", "collection", "timestamp", "name", "description", "tags", "tag_filter", "limit")})


def _collection_response(r: CollectionManagementResponse) -> JsonObject:
    out: JsonObject = {}
    if r.timestamp is not None:
        out["timestamp"] = r.timestamp
    if r.collections is not None:
        out["collections"] = [{"user": c.user, "collection": c.collection, "name": c.name,
                               "description": c.description, "tags": list(c.tags or [])}
                              for c in r.collections]
    return out


LIBRARY_KINDS: dict[str, Translator] = {
    "librarian": translator("librarian", LibrarianRequest, LibrarianResponse, _librarian_request,
                            _librarian_response, first),
    "knowledge": translator("knowledge", KnowledgeRequest, KnowledgeResponse, _knowledge_request,
                            _knowledge_response, _knowledge_final),
    "collection-management": translator("collection-management", CollectionManagementRequest,
                                        CollectionManagementResponse, _collection_request,
                                        _collection_response, first),
}
