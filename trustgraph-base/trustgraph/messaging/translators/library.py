"""The librarian: documents, their processing, chunked uploads.

Kebab-case keys on the JSON side.  A document's ``content`` is base64 text,
kept as that text on the bus (what the librarian stores); ours checks that it
is base64 and refuses it otherwise, where upstream passes any text on.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

from trustgraph.schema import Criteria, LibrarianRequest, LibrarianResponse

from .base import (
    BadRequest,
    JsonObject,
    MessageTranslator,
    ResponseOnly,
    as_object,
    build,
    error_json,
    list_of,
)
from .metadata import DocumentMetadataTranslator, ProcessingMetadataTranslator

__all__ = ["LibraryRequestTranslator", "LibraryResponseTranslator"]

_DOCUMENTS = DocumentMetadataTranslator()
_PROCESSING = ProcessingMetadataTranslator()

# (JSON key, record field) of the request's plain fields.
_REQUEST = (("operation", "operation"), ("document-id", "document_id"), ("processing-id", "processing_id"),
            ("user", "user"), ("collection", "collection"), ("total-size", "total_size"),
            ("chunk-size", "chunk_size"), ("upload-id", "upload_id"), ("chunk-index", "chunk_index"),
            ("include-children", "include_children"))
# ... and of the response's, each given when set.
_RESPONSE = (("upload-id", "upload_id"), ("chunk-size", "chunk_size"), ("total-chunks", "total_chunks"),
             ("chunk-index", "chunk_index"), ("chunks-received", "chunks_received"),
             ("bytes-received", "bytes_received"), ("total-bytes", "total_bytes"), ("document-id", "document_id"),
             ("object-id", "object_id"), ("upload-state", "upload_state"), ("received-chunks", "received_chunks"),
             ("missing-chunks", "missing_chunks"))


def _base64(text: Any) -> bytes:
    """Document content: base64 text, checked and kept as that text."""
    if not isinstance(text, str):
        raise BadRequest("Bad request: 'content' must be base64 text")
    try:
        return base64.b64encode(base64.b64decode(text, validate=True))
    except (binascii.Error, ValueError):
        raise BadRequest("Bad request: 'content' is not valid base64") from None


def _text(value: bytes | str) -> str:
    return value.decode("utf-8") if isinstance(value, bytes) else value


class LibraryRequestTranslator(MessageTranslator):
    """The plain fields, ``document-metadata``, ``processing-metadata``, ``criteria``
    (``[{key, value, operator}]``) and ``content``."""

    def to_pulsar(self, data: JsonObject) -> LibrarianRequest:
        record = build(LibrarianRequest, {dst: data.get(src) for src, dst in _REQUEST})
        if "document-metadata" in data:
            record.document_metadata = _DOCUMENTS.to_pulsar(data["document-metadata"])
        if "processing-metadata" in data:
            record.processing_metadata = _PROCESSING.to_pulsar(data["processing-metadata"])
        if "criteria" in data:
            record.criteria = [build(Criteria, as_object(c, "a criterion"))
                               for c in list_of(data["criteria"], "'criteria'")]
        if "content" in data:
            record.content = _base64(data["content"])
        return record

    def from_pulsar(self, obj: LibrarianRequest) -> JsonObject:
        out: JsonObject = {}
        for src, dst in (("operation", "operation"), ("document-id", "document_id"),
                         ("processing-id", "processing_id")):
            if getattr(obj, dst):
                out[src] = getattr(obj, dst)
        if obj.document_metadata:
            out["document-metadata"] = _DOCUMENTS.from_pulsar(obj.document_metadata)
        if obj.processing_metadata:
            out["processing-metadata"] = _PROCESSING.from_pulsar(obj.processing_metadata)
        if obj.content:
            out["content"] = _text(obj.content)
        for name in ("user", "collection"):
            if getattr(obj, name):
                out[name] = getattr(obj, name)
        if obj.criteria is not None:
            out["criteria"] = [{"key": c.key, "value": c.value, "operator": c.operator} for c in obj.criteria]
        return out


class LibraryResponseTranslator(ResponseOnly):
    """What the operation returned: metadata, content, lists, upload progress; each when set."""

    def from_pulsar(self, obj: LibrarianResponse) -> JsonObject:
        out: JsonObject = {}
        if obj.error is not None:
            out["error"] = error_json(obj.error)
        if obj.document_metadata:
            out["document-metadata"] = _DOCUMENTS.from_pulsar(obj.document_metadata)
        if obj.content:
            out["content"] = _text(obj.content)
        if obj.document_metadatas is not None:
            out["document-metadatas"] = [_DOCUMENTS.from_pulsar(m) for m in obj.document_metadatas]
        if obj.processing_metadatas is not None:
            out["processing-metadatas"] = [_PROCESSING.from_pulsar(m) for m in obj.processing_metadatas]
        for src, dst in _RESPONSE:
            if getattr(obj, dst):
                out[src] = getattr(obj, dst)
        if obj.upload_sessions:
            out["upload-sessions"] = [
                {"upload-id": s.upload_id, "document-id": s.document_id,
                 "document-metadata-json": s.document_metadata_json, "total-size": s.total_size,
                 "chunk-size": s.chunk_size, "total-chunks": s.total_chunks,
                 "chunks-received": s.chunks_received, "created-at": s.created_at} for s in obj.upload_sessions]
        return out
